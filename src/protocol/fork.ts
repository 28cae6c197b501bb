/**
 * Forks and the effect journal, as data everyone shares (sandbox-safe): where a task branched from,
 * the record of a write that ran, and the failure a write that already ran raises instead of running
 * again. See docs/fork.md.
 */
import type { ToolEffect } from './tool-effect';
import type { ToolError } from './tool-error';

/** One branch point of a task's ancestry: it started from `taskId`'s state after `turn`. */
export interface BranchPoint {
  taskId: string;
  turn: number;
}

/** What a fork names in its input: a claim only; the workflow reads the state from the origin's history (loadForkPoint). */
export interface ForkRequest extends BranchPoint {
  /** A person's message the fork's first model call reads after the origin's conversation. */
  message?: string;
  /** Answer reads from the origin's recording (what its reads returned after the branch point). */
  recordedReads?: boolean;
}

/** A fork's recording of its origin's reads after the branch point: intent -> what the read returned. Stored as one blob in the fork's scope. */
export interface ReadRecording {
  version: 1;
  origin: BranchPoint;
  /** `note`: the semantic check's flag the origin's read came back with (partial data, a semantic issue). */
  reads: Record<string, { tool: string; output: unknown; note?: ToolError }>;
}

/** The `ForkedFrom` search attribute's value: `TASK@N`. */
export function forkedFromLabel(point: BranchPoint): string {
  return `${point.taskId}@${point.turn}`;
}

/**
 * A write or destructive call that ran, as the per-task effect journal keeps it (one blob each in
 * the scope effectJournalScope(taskId)). `intent` is the tool and its canonical arguments; the
 * idempotency key is the one the service saw. Item 3 (replay) reads outcomes from here too.
 */
export interface EffectRecord {
  version: 1;
  taskId: string;
  /** The run it ran in: a reset or a continue-as-new starts another one. */
  runId: string;
  turn: number;
  /** ISO time the call returned. */
  at: string;
  tool: string;
  effect: ToolEffect;
  idempotent: boolean;
  /** `<tool>:<sha256 of the canonical arguments>`. */
  intent: string;
  idempotencyKey: string;
  /** What came back, shortened for people (the full output stays in the task's history). */
  outcome: { ok: boolean; summary: string };
}

/** The blob scope of a task's effect journal. Run ids never hold `/`, so it is no run's scope; `purge TASK` removes it with the task's blobs. */
export function effectJournalScope(taskId: string): string {
  return `${taskId}/effects`;
}

/**
 * The failure `type` of a non-idempotent write that already ran in this task before a reset, or in
 * an ancestor after the branch point: details[0] is a ToolError, details[1] the EffectRecord. The
 * workflow asks a person with the earlier outcome shown, then runs it only if they approve.
 */
export const REPEATED_EFFECT_TYPE = 'repeated_effect';

/** The sentence a person reads before approving a repeat. */
export function repeatReason(record: EffectRecord): string {
  const when = record.at.replace('T', ' ').slice(0, 16);
  return `${record.tool} with these arguments already ran in ${record.taskId} at turn ${record.turn} at ${when} UTC, result: ${record.outcome.summary}. It is not idempotent: approve only if it must run again.`;
}
