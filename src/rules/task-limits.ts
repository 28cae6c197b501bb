/**
 * The numbers that drive a task's decisions, pinned in its state when it starts and carried across
 * continue-as-new: changing a default here changes new tasks only, never the replay of a task in
 * flight (which would be nondeterministic).
 */
import type { TaskLimits } from '../protocol/task';

// The shape travels in every snapshot, so it lives with the wire types; the numbers live here.
export type { TaskLimits };

/** What tasks recorded before pinned limits ran with: their histories replay with these. */
export const LEGACY_LIMITS: TaskLimits = {
  rulesVersion: 1,
  loopThreshold: 3,
  perTurnExecutions: { read: 3, sideEffecting: 1 },
  failureMemoryMs: Number.MAX_SAFE_INTEGER,
  maxLedgerRecords: Number.MAX_SAFE_INTEGER,
  maxContinuations: 2,
  contextWindowTokens: 200_000,
  compactAtRatio: 1e9,
  keepRecentTurns: 2,
  maxConversationMessages: Number.MAX_SAFE_INTEGER,
  auditWindow: Number.MAX_SAFE_INTEGER,
  snapshotCeilingBytes: Number.MAX_SAFE_INTEGER,
};

/** Defaults for tasks started now. */
export const DEFAULT_LIMITS: TaskLimits = {
  rulesVersion: 2,
  loopThreshold: 3,
  perTurnExecutions: { read: 3, sideEffecting: 1 },
  failureMemoryMs: 10 * 60 * 1000,
  maxLedgerRecords: 500,
  maxContinuations: 3,
  contextWindowTokens: 200_000,
  compactAtRatio: 0.7,
  keepRecentTurns: 3,
  maxConversationMessages: 80,
  auditWindow: 100,
  snapshotCeilingBytes: 256 * 1024,
};

/** Pinned by tasks started with the stable-prefix marker, over DEFAULT_LIMITS. */
export const STABLE_PREFIX_LIMITS: Pick<TaskLimits, 'trimConversationTo'> = { trimConversationTo: 60 };

/** Restores pinned limits from a snapshot, filling what an older snapshot did not carry from the legacy values. */
export function limitsFrom(pinned: Partial<TaskLimits> | undefined): TaskLimits {
  return { ...LEGACY_LIMITS, ...pinned, perTurnExecutions: { ...LEGACY_LIMITS.perTurnExecutions, ...pinned?.perTurnExecutions } };
}
