/**
 * What recovering from faults cost a task (issue 49, "recovery has a budget and a bill"): calls the
 * engine or Temporal ran again, tokens a lost model-call attempt had already used, and the time
 * spent between a call's first attempt and the one that answered. Activities report it per call;
 * the workflow adds it up (workflows/state/recovery-bill.ts).
 */

/** One call's recovery, as its activity reports it: absent on a call that answered at its first try. */
export interface CallRecovery {
  /** Attempts beyond the first: Temporal's retries (a crash, a timeout, a transient fault) and the engine's re-reads of a broken answer. */
  repeated: number;
  /** Milliseconds from the first attempt's scheduling to the answering attempt's (backoff, timeouts, a dead worker). */
  waitedMs: number;
  /**
   * A model call: tokens the lost attempt had used, from its last heartbeat (the request's planned
   * input, and the output it had streamed at about 4 characters a token). An estimate: the API never
   * reported that attempt's usage.
   */
  tokensAgain?: number;
  /** USD of `tokensAgain` at the model's prices; absent without a price. */
  costUsdAgain?: number;
}

/** A task's recovery bill: its own calls' recovery, added up (a child task has a bill of its own). */
export interface RecoveryBill {
  callsRepeated: number;
  tokensAgain: number;
  costUsdAgain: number;
  waitedMs: number;
}

/** The bill in one line, as `status` and the inbox show it. */
export function recoveryText(bill: RecoveryBill): string {
  const calls = `${bill.callsRepeated} call${bill.callsRepeated === 1 ? '' : 's'} run again`;
  const lost = bill.tokensAgain > 0 ? `, ~${bill.tokensAgain} tokens of lost model attempts ($${bill.costUsdAgain.toFixed(4)})` : '';
  return `${calls}${lost}, ${(bill.waitedMs / 1000).toFixed(1)} s waited`;
}
