/**
 * The task's recovery bill (protocol/recovery.ts): each call's recovery, as its activity reported
 * it, added up; what the recovery budgets (budgets.recoveryCalls, budgets.recoveryCostUsd) are
 * read against. Numbers from an activity are checked: a malformed report adds nothing.
 */
import type { CallRecovery, RecoveryBill } from '../../protocol/recovery';

export function emptyRecoveryBill(): RecoveryBill {
  return { callsRepeated: 0, tokensAgain: 0, costUsdAgain: 0, waitedMs: 0 };
}

export function addRecovery(bill: RecoveryBill, call: CallRecovery | undefined): void {
  if (!call) return;
  bill.callsRepeated += countOf(call.repeated);
  bill.tokensAgain += countOf(call.tokensAgain);
  bill.waitedMs += countOf(call.waitedMs);
  const usd = call.costUsdAgain;
  if (typeof usd === 'number' && Number.isFinite(usd) && usd > 0) bill.costUsdAgain += usd;
}

/** Whether anything was recovered from (status shows the bill only then). */
export function anyRecovery(bill: RecoveryBill): boolean {
  return bill.callsRepeated > 0 || bill.tokensAgain > 0 || bill.waitedMs > 0;
}

function countOf(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.round(value) : 0;
}
