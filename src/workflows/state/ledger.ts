/**
 * The tool-call ledger (seeds 000 and 004): every call keyed by (tool, canonical validated
 * arguments), kept in workflow state and carried across continue-as-new. It answers identical reads
 * within their TTL, refuses a repeated write and a call that already failed for good, caps executions
 * of one key per turn, and notices a key coming back turn after turn with the same outcome (the loop
 * detector).
 *
 * It also knows that state changes: any write moves the ledger's epoch, which ends cached reads, lets
 * a failed call be tried again and sends a repeated write to a person instead of refusing it
 * outright; remembered failures expire; a write whose outcome is unknown keeps its idempotency key,
 * so an identical retry can only reuse it.
 */
import type { ToolManifest } from '../../protocol/agent-manifest';
import { toolError, type ErrorClass, type ToolError } from '../../protocol/tool-error';
import { hash53 } from '../base/canonical-key';
import { DEFAULT_LIMITS, type TaskLimits } from '../../rules/task-limits';

export interface LedgerOutcome {
  content: string;
  isError: boolean;
  errorClass?: ErrorClass;
  code?: string;
  /** A write that may or may not have taken effect (timeout, connection cut after sending, 5xx). */
  outcomeUnknown?: boolean;
}

interface LedgerRecord {
  tool: string;
  /** The last outcome of a real execution: what decisions rest on. Content only for cacheable reads. */
  executed?: LedgerOutcome & { turn: number; atMs: number; epoch?: number; idempotencyKey?: string; forgiven?: number };
  perTurn: { turn: number; executions: number };
  /** The last answer the model got for this key (executed, reused or refused) and the turns it came back. */
  streak: { fingerprint: string; turns: number[] };
  /** Last turn this key was seen, for pruning. */
  lastTurn?: number;
  /** A side-effecting tool's record: pruned last, since it guards against doing the write twice. */
  write?: boolean;
}

export interface LedgerState {
  records: Record<string, LedgerRecord>;
  /** Successful or possibly-successful writes so far (a state-aware ledger). */
  epoch?: number;
  /** Times a person stepped in (an unblock): a failure remembered from before may have been fixed since. */
  forgiven?: number;
}

export type LedgerDecision =
  | { action: 'run'; idempotencyKey?: string }
  | { action: 'reuse'; outcome: LedgerOutcome; fromTurn: number }
  /** A state-aware ledger: a repeated write after the state changed: a person decides. */
  | { action: 'confirm'; reason: string }
  | { action: 'refuse'; error: ToolError };

export const LOOP_THRESHOLD = 3;

/** Failures a person's unblock can have fixed (credentials, permissions, configuration); not a tool's broken answer nor the model's call. */
const PERSON_FIXABLE: ReadonlySet<ErrorClass> = new Set<ErrorClass>(['resource', 'permanent', 'policy']);

export class ToolLedger {
  private readonly state: LedgerState;
  constructor(
    state: LedgerState = { records: {} },
    private readonly limits: Pick<TaskLimits, 'loopThreshold' | 'perTurnExecutions' | 'failureMemoryMs' | 'maxLedgerRecords'> = DEFAULT_LIMITS,
  ) {
    this.state = state;
  }

  private get epoch(): number {
    return this.state.epoch ?? 0;
  }

  decide(tool: ToolManifest, key: string, turn: number, nowMs: number): LedgerDecision {
    const record = this.state.records[key];
    const last = record?.executed;
    if (!record || !last) return { action: 'run' };

    const limit = tool.effect === 'read' ? this.limits.perTurnExecutions.read : this.limits.perTurnExecutions.sideEffecting;
    if (record.perTurn.turn === turn && record.perTurn.executions >= limit) {
      return {
        action: 'refuse',
        error: toolError(
          'policy',
          'retry_budget_exceeded',
          `${tool.name} already ran ${record.perTurn.executions} time(s) with these exact arguments in this turn.`,
          'Stop repeating this call; use what you have, change the arguments, or tell the user.',
        ),
      };
    }
    const stateChanged = (last.epoch ?? 0) !== this.epoch;
    if (last.outcomeUnknown) {
      // The same logical call again: only under the key the service may already have seen.
      if (tool.idempotent && last.idempotencyKey) return { action: 'run', idempotencyKey: last.idempotencyKey };
      return {
        action: 'refuse',
        error: toolError(
          'policy',
          'outcome_unknown',
          `${tool.name} was called with these exact arguments in turn ${last.turn} and its outcome is unknown (${last.code}); it was not run again.`,
          'It may already have taken effect. Check with a read before anything else, or tell the user.',
        ),
      };
    }
    if (last.isError && last.errorClass && last.errorClass !== 'transient') {
      // A person stepped in since it failed in a way a person can fix (a credential set again, a
      // permission granted, then unblock): it runs once more. A broken answer is the tool's own: no.
      const fixedSince = PERSON_FIXABLE.has(last.errorClass) && (last.forgiven ?? 0) !== (this.state.forgiven ?? 0);
      const expired = stateChanged || fixedSince || nowMs - last.atMs > this.limits.failureMemoryMs;
      if (expired) return { action: 'run' };
      return {
        action: 'refuse',
        error: toolError(
          'policy',
          'repeated_failed_call',
          `${tool.name} was called with these exact arguments in turn ${last.turn} and failed with ${last.errorClass}/${last.code}; it was not run again.`,
          'The same call fails the same way. Change the arguments, use another tool, or tell the user.',
        ),
      };
    }
    if (last.isError) return { action: 'run' }; // A transient failure may have cleared.
    if (tool.effect === 'read') {
      return tool.cacheTtlMs > 0 && nowMs - last.atMs <= tool.cacheTtlMs && !stateChanged ? { action: 'reuse', outcome: last, fromTurn: last.turn } : { action: 'run' };
    }
    const detail = `${tool.name} already ran with these exact arguments in turn ${last.turn} and succeeded`;
    // Something else was written since: repeating it may be intended, but only a person can say so.
    if (stateChanged) return { action: 'confirm', reason: `${detail}; other writes happened since. Approve only if it must run again.` };
    return {
      action: 'refuse',
      error: toolError('policy', 'duplicate_write', `${detail}; a repeated ${tool.effect} is refused.`, 'It is done: do not repeat it. If it must run again, say why to the user.'),
    };
  }

  /**
   * Records what the model was told; returns true when the same answer has now come back
   * loopThreshold consecutive turns.
   */
  record(key: string, tool: ToolManifest | string, turn: number, nowMs: number, outcome: LedgerOutcome, executed: boolean, idempotencyKey?: string): boolean {
    const name = typeof tool === 'string' ? tool : tool.name;
    const record = (this.state.records[key] ??= {
      tool: name,
      perTurn: { turn, executions: 0 },
      streak: { fingerprint: '', turns: [] },
    });
    const fingerprint = outcome.isError ? `error:${outcome.errorClass}/${outcome.code}` : `ok:${hash53(outcome.content)}`;
    if (executed) {
      const manifest = typeof tool === 'string' ? undefined : tool;
      const isWrite = manifest ? manifest.effect !== 'read' : false;
      // A read command of a shared store (the memory tool's view) may show what other tasks wrote:
      // an edit refused as stale must be allowed again once the task has looked (call-effect.ts).
      const sharedRead = manifest?.effect === 'read' && (manifest.readCommands?.length ?? 0) > 0 && !outcome.isError;
      if ((isWrite && (!outcome.isError || outcome.outcomeUnknown)) || sharedRead) this.state.epoch = this.epoch + 1;
      // Only a cacheable read's content is ever answered again; everything else keeps its fingerprint.
      const keepContent = manifest?.effect === 'read' && manifest.cacheTtlMs > 0;
      record.executed = {
        ...outcome,
        content: keepContent ? outcome.content : '',
        turn,
        atMs: nowMs,
        epoch: this.epoch,
        ...(outcome.isError && this.state.forgiven ? { forgiven: this.state.forgiven } : {}),
        ...(idempotencyKey && outcome.outcomeUnknown ? { idempotencyKey } : {}),
      };
      record.perTurn = record.perTurn.turn === turn ? { turn, executions: record.perTurn.executions + 1 } : { turn, executions: 1 };
    }
    record.lastTurn = turn;
    if (typeof tool !== 'string' && tool.effect !== 'read') record.write = true;
    if (record.streak.fingerprint !== fingerprint) record.streak = { fingerprint, turns: [] };
    const turns = record.streak.turns;
    if (!turns.includes(turn)) {
      // A loop is the same answer in consecutive turns; a gap starts a new streak.
      if (turns.length && turns[turns.length - 1]! !== turn - 1) turns.length = 0;
      turns.push(turn);
    }
    this.prune();
    return turns.length >= this.limits.loopThreshold;
  }

  streakTurns(key: string): number[] {
    return [...(this.state.records[key]?.streak.turns ?? [])];
  }

  /** After a person steps in, repeated calls get a fresh start (decisions on failed calls stay). */
  resetStreaks(): void {
    for (const record of Object.values(this.state.records)) record.streak = { fingerprint: '', turns: [] };
  }

  /**
   * A person stepped in (an unblock after `vault set`, a fix, a raised budget): every call that
   * failed for good before may run once more, since what made it fail may be what they fixed. A
   * call whose outcome is unknown is not forgiven: it may have taken effect.
   */
  forgiveFailures(): void {
    this.state.forgiven = (this.state.forgiven ?? 0) + 1;
  }

  /** Drops cached read content, keeping what decisions need (for a snapshot that must shrink). */
  dropCachedContent(): void {
    for (const record of Object.values(this.state.records)) if (record.executed) record.executed.content = '';
  }

  get size(): number {
    return Object.keys(this.state.records).length;
  }

  /**
   * Forgets successful reads that can no longer matter: not cached, seen before the loop detector's
   * window. Failures (remembered for a while) and writes (the guard against doing one twice) stay.
   */
  forgetStaleReads(turn: number): void {
    for (const [key, record] of Object.entries(this.state.records)) {
      const last = record.executed;
      if (record.write || !last || last.isError || last.content !== '') continue;
      if ((record.lastTurn ?? 0) < turn - this.limits.loopThreshold) delete this.state.records[key];
    }
  }

  /** For a snapshot that must shrink: keeps at most `keep` keys, reads going first. */
  shrinkTo(keep: number): void {
    this.prune(keep);
  }

  /** Bounded: the keys seen longest ago go first, reads before writes (a write's record guards against doing it twice). */
  private prune(max = this.limits.maxLedgerRecords): void {
    const keys = Object.keys(this.state.records);
    if (keys.length <= max) return;
    const isWrite = (key: string) => this.state.records[key]!.write === true;
    const order = keys.sort((a, b) => {
      const wa = isWrite(a) ? 1 : 0;
      const wb = isWrite(b) ? 1 : 0;
      if (wa !== wb) return wa - wb;
      return (this.state.records[a]!.lastTurn ?? 0) - (this.state.records[b]!.lastTurn ?? 0);
    });
    for (const key of order.slice(0, keys.length - max)) delete this.state.records[key];
  }

  toJSON(): LedgerState {
    return this.state;
  }

  /**
   * The ledger a fork may start from, as a copy (this one is unchanged): without cached read content
   * (a fork reads again) and without the reads forgetStaleReads would drop; writes and failures stay.
   * Kept small because every model call carries it (forkable turns).
   */
  forkable(turn: number): LedgerState {
    const records: Record<string, LedgerRecord> = {};
    for (const [key, record] of Object.entries(this.state.records)) {
      const last = record.executed;
      if (!record.write && last && !last.isError && (record.lastTurn ?? 0) < turn - this.limits.loopThreshold) continue;
      records[key] = last?.content ? { ...record, executed: { ...last, content: '' } } : record;
    }
    return { ...this.state, records };
  }
}
