/**
 * Forks and the effect journal, as data everyone shares (sandbox-safe): where a task branched from,
 * the record of a write that ran, and the failure a write that already ran raises instead of running
 * again. See docs/fork.md.
 */
import type { ToolEffect } from './tool-effect';
import type { ToolError } from './tool-error';

/**
 * One branch point of a task's ancestry: it started from `taskId`'s state after `turn`, as a fork or
 * rewind of it, or (`via: 'delegation'`) as a child task it delegated to in that turn.
 */
export interface BranchPoint {
  taskId: string;
  turn: number;
  via?: 'delegation';
  /**
   * The first run of `taskId` (its chain): with it, a task that reuses a freed id later is another
   * family, not this one. Absent in lineages recorded before builds named it.
   */
  firstRunId?: string;
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
 * Where a write stands: `pending` from before it starts until it settles (a worker killed mid-write
 * leaves it so), `done` when it came back, `unknown` when it failed in a way that may still have
 * taken effect (its reply was lost), `failed` when it definitely did not take effect.
 */
export type EffectState = 'pending' | 'done' | 'unknown' | 'failed';

/**
 * A write or destructive call, as the family's effect journal keeps it (docs/guarantees.md): one
 * blob per step of a call in the scope familyJournalScope(family, intent). Version 1 records (per
 * task, effectJournalScope(taskId), written after the call) are still read. `intent` is the tool and
 * its canonical arguments; the idempotency key is the one the service saw.
 */
export interface EffectRecord {
  version: 1 | 2 | 3;
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
  /** Version 2: where the call stands (version 1 records were all `done`). */
  state?: EffectState;
  /** Version 2: one call across its activity's attempts (`<runId>/<activityId>`): its steps share it. */
  attempt?: string;
  /** Version 2: orders the steps of one call (later wins). */
  step?: number;
  /** Version 2: the first task of the lineage, whose journal this is. */
  family?: string;
  /** Version 2: the writer's ancestry, nearest first (forks, rewinds and delegations). */
  lineage?: BranchPoint[];
  /**
   * Version 3: the claim this call holds on its intent for the whole family (forks/intent-claims.ts):
   * 1 for the first call that took effect, one more for each call a person let run again.
   */
  generation?: number;
  /** Version 3: the approval that let this call run although an earlier claim stood (its id and who gave it). */
  approvedBy?: { id: string; by: string };
}

/** Where a record says its call stands (version 1 records were written only for calls that came back). */
export function effectStateOf(record: EffectRecord): EffectState {
  return record.state ?? (record.outcome.ok ? 'done' : 'failed');
}

/** The blob scope of a task's version 1 effect journal; still read, never written, never purged. */
export function effectJournalScope(taskId: string): string {
  return `${taskId}/effects`;
}

/** Every family journal scope starts so; no task's scope can (see scopesOfTask). */
export const FAMILY_JOURNAL_PREFIX = '~effects/';

/** The first task of a lineage: the family whose journal every descendant reads and appends to. */
export function familyRootOf(taskId: string, lineage: readonly BranchPoint[] | undefined): string {
  return lineage?.length ? lineage[lineage.length - 1]!.taskId : taskId;
}

/**
 * The family's name in the journal: its root task's chain (`<taskId>/<first run id>`), so that a
 * task reusing a freed id (after retention, or started by hand with another reuse policy) is a
 * family of its own; the root's id alone where the lineage does not name its first run (recorded
 * by builds before it did). `firstRunId` is the calling task's own, used when it is the root.
 */
export function familyOf(taskId: string, firstRunId: string | undefined, lineage: readonly BranchPoint[] | undefined): string {
  const root = lineage?.length ? lineage[lineage.length - 1]! : { taskId, firstRunId };
  return root.firstRunId ? `${root.taskId}/${root.firstRunId}` : root.taskId;
}

/**
 * The failure `type` of a non-idempotent write that already ran in this task before a reset, or in
 * an ancestor after the branch point: details[0] is a ToolError, details[1] the EffectRecord. The
 * workflow asks a person with the earlier outcome shown, then runs it only if they approve.
 */
export const REPEATED_EFFECT_TYPE = 'repeated_effect';

/** The sentence a person reads before approving a repeat: what may already have happened, where and when. */
export function repeatReason(record: EffectRecord): string {
  const when = record.at.replace('T', ' ').slice(0, 16);
  const where = `in ${record.taskId} at turn ${record.turn}`;
  switch (effectStateOf(record)) {
    case 'pending':
      return `${record.tool} with these arguments started ${where} at ${when} UTC and has not reported back (it may still be running, or its worker died mid-call): it may already have taken effect. Approve only if it must run again.`;
    case 'unknown':
      return `${record.tool} with these arguments ran ${where} at ${when} UTC and its outcome is unknown (${record.outcome.summary}): it may have taken effect. Approve only if it must run again.`;
    default:
      if (record.idempotent) {
        return `${record.tool} with these arguments already ran ${where} at ${when} UTC, result: ${record.outcome.summary}, and what it did has since been changed or undone. Approve to run it again.`;
      }
      return `${record.tool} with these arguments already ran ${where} at ${when} UTC, result: ${record.outcome.summary}. It is not idempotent: approve only if it must run again.`;
  }
}
