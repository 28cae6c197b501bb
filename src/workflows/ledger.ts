/**
 * The tool-call ledger (seeds 000 and 004): every call keyed by (tool, canonical arguments), kept in
 * workflow state and carried across continue-as-new. It answers identical reads within their TTL,
 * refuses a repeated write and a call that already failed for good, caps executions of one key per
 * turn, and notices a key coming back turn after turn with the same outcome (the loop detector).
 */
import type { ToolManifest } from '../protocol/agent-manifest';
import { toolError, type ErrorClass, type ToolError } from '../protocol/tool-error';
import { hash53 } from './canonical-key';

export interface LedgerOutcome {
  content: string;
  isError: boolean;
  errorClass?: ErrorClass;
  code?: string;
}

interface LedgerRecord {
  tool: string;
  /** The last outcome of a real execution: what decisions rest on. */
  executed?: LedgerOutcome & { turn: number; atMs: number };
  perTurn: { turn: number; executions: number };
  /** The last answer the model got for this key (executed, reused or refused) and the turns it came back. */
  streak: { fingerprint: string; turns: number[] };
}

export interface LedgerState {
  records: Record<string, LedgerRecord>;
}

export type LedgerDecision =
  | { action: 'run' }
  | { action: 'reuse'; outcome: LedgerOutcome; fromTurn: number }
  | { action: 'refuse'; error: ToolError };

export const LOOP_THRESHOLD = 3;
const PER_TURN_EXECUTIONS = { read: 3, sideEffecting: 1 };

export class ToolLedger {
  constructor(private readonly state: LedgerState = { records: {} }) {}

  decide(tool: ToolManifest, key: string, turn: number, nowMs: number): LedgerDecision {
    const record = this.state.records[key];
    const last = record?.executed;
    if (!record || !last) return { action: 'run' };

    const limit = tool.effect === 'read' ? PER_TURN_EXECUTIONS.read : PER_TURN_EXECUTIONS.sideEffecting;
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
    if (last.isError && last.errorClass && last.errorClass !== 'transient') {
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
      return tool.cacheTtlMs > 0 && nowMs - last.atMs <= tool.cacheTtlMs
        ? { action: 'reuse', outcome: last, fromTurn: last.turn }
        : { action: 'run' };
    }
    return {
      action: 'refuse',
      error: toolError(
        'policy',
        'duplicate_write',
        `${tool.name} already ran with these exact arguments in turn ${last.turn} and succeeded; a repeated ${tool.effect} is refused.`,
        'It is done: do not repeat it. If it must run again, say why to the user.',
      ),
    };
  }

  /** Records what the model was told; returns true when the same answer has now come back LOOP_THRESHOLD turns running. */
  record(key: string, tool: string, turn: number, nowMs: number, outcome: LedgerOutcome, executed: boolean): boolean {
    const record = (this.state.records[key] ??= {
      tool,
      perTurn: { turn, executions: 0 },
      streak: { fingerprint: '', turns: [] },
    });
    if (executed) {
      record.executed = { ...outcome, turn, atMs: nowMs };
      record.perTurn = record.perTurn.turn === turn ? { turn, executions: record.perTurn.executions + 1 } : { turn, executions: 1 };
    }
    const fingerprint = outcome.isError ? `error:${outcome.errorClass}/${outcome.code}` : `ok:${hash53(outcome.content)}`;
    if (record.streak.fingerprint !== fingerprint) record.streak = { fingerprint, turns: [] };
    if (!record.streak.turns.includes(turn)) record.streak.turns.push(turn);
    return record.streak.turns.length >= LOOP_THRESHOLD;
  }

  streakTurns(key: string): number[] {
    return [...(this.state.records[key]?.streak.turns ?? [])];
  }

  /** After a person steps in, repeated calls get a fresh start (decisions on failed calls stay). */
  resetStreaks(): void {
    for (const record of Object.values(this.state.records)) record.streak = { fingerprint: '', turns: [] };
  }

  toJSON(): LedgerState {
    return this.state;
  }
}
