/**
 * The numbers that drive a task's decisions, pinned in its state when it starts and carried across
 * continue-as-new: changing a default here changes new tasks only, never the replay of a task in
 * flight (which would be nondeterministic).
 */
export interface TaskLimits {
  /** 1: the ledger rules recorded in histories before rules v2; 2: the current rules (see ledger.ts). */
  rulesVersion: number;
  /** The same answer to the same call in this many consecutive turns is a loop. */
  loopThreshold: number;
  /** Executions of one exact call within one turn. */
  perTurnExecutions: { read: number; sideEffecting: number };
  /** How long a failed call is refused when repeated unchanged, in ms (rules v2). */
  failureMemoryMs: number;
  /** Ledger keys kept; the least recently seen reads go first. */
  maxLedgerRecords: number;
  /** How many times an answer cut at max_tokens is continued. */
  maxContinuations: number;
  /** The model's context window when its choice does not say, in tokens. */
  contextWindowTokens: number;
  /** Compaction starts when the estimated prompt passes this share of the context window. */
  compactAtRatio: number;
  /** Tool results of the most recent turns that compaction never touches. */
  keepRecentTurns: number;
  /** Messages kept in the live conversation; older turns leave it (their content stays in the store). */
  maxConversationMessages: number;
  /**
   * Once past maxConversationMessages, the oldest turns leave until this many messages remain:
   * several turns at once, so the prompt's cached prefix stays the same for the turns in between
   * (dropping one turn per turn would change the prefix, and miss the cache, on every call).
   * Absent: down to maxConversationMessages, as tasks started before it did.
   */
  trimConversationTo?: number;
  /** Audit entries (events, escalations, decisions, approvals) kept in state per kind; older ones are archived to the store. */
  auditWindow: number;
  /** The largest snapshot carried into a new run, in bytes of JSON; above it the task compacts, then blocks. */
  snapshotCeilingBytes: number;
}

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
