/**
 * The numbers that drive a task's decisions, pinned in its state when it starts and carried across
 * continue-as-new: changing a default here changes new tasks only, never a task in flight.
 */
import type { TaskLimits } from '../protocol/task';

// The shape travels in every snapshot, so it lives with the wire types; the numbers live here.
export type { TaskLimits };

/**
 * The rules version new tasks pin. Still written into every snapshot: a build from before rules 2
 * was retired fills a missing version with 1 and would read a snapshot of this build by the first
 * release's rules (a deployment rolled back to it).
 */
export const RULES_VERSION = 2;

/** Defaults for tasks started now. */
export const DEFAULT_LIMITS: TaskLimits = {
  rulesVersion: RULES_VERSION,
  loopThreshold: 3,
  perTurnExecutions: { read: 3, sideEffecting: 1 },
  failureMemoryMs: 10 * 60 * 1000,
  maxLedgerRecords: 500,
  maxContinuations: 3,
  contextWindowTokens: 200_000,
  compactAtRatio: 0.7,
  keepRecentTurns: 3,
  maxConversationMessages: 80,
  trimConversationTo: 60,
  auditWindow: 100,
  snapshotCeilingBytes: 256 * 1024,
};

/**
 * The limits a resumed run takes from its snapshot. A snapshot pinned under today's rules keeps its
 * numbers (a default missing from an older snapshot is today's). One written by a build that still
 * ran the first release's rules (rules version 1, or no limits at all) carries numbers this code no
 * longer has the behaviour for (unbounded ledger and audit trail, no snapshot ceiling): the task goes
 * on under today's rules, its progress kept. A version this build does not know (a newer build's
 * snapshot after a rollback) is refused: the workflow task fails and waits for a build that reads it.
 */
export function limitsFrom(pinned: Partial<TaskLimits> | undefined): TaskLimits {
  const version = pinned?.rulesVersion ?? 1;
  if (version > RULES_VERSION) throw new Error(`the snapshot pins rules version ${version}; this build runs rules version ${RULES_VERSION} and cannot resume it`);
  if (version < RULES_VERSION) return DEFAULT_LIMITS;
  return { ...DEFAULT_LIMITS, ...pinned, perTurnExecutions: { ...DEFAULT_LIMITS.perTurnExecutions, ...pinned?.perTurnExecutions } };
}
