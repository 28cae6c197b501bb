/**
 * The family's effect journal (docs/guarantees.md): every write and destructive call of a task, its
 * forks, rewinds, resets, continue-as-new runs and child tasks at any depth, kept under the family's
 * root (the first task of the lineage), in the shared blob store. A call is journaled as *pending*
 * before it runs and as *done*, *unknown* or *failed* after, so a branch that meets the same call
 * while it is in flight, lost or done elsewhere in the family never runs it again on its own.
 *
 * Records are blobs (so the folder and PostgreSQL stores and their encryption apply unchanged), one
 * scope per family and intent: a check reads only the records of the call it is about, not the
 * family's whole journal.
 */
import { createHash } from 'node:crypto';
import type { BlobStore } from '../blobs/blob-store';
import { canonicalJson } from '../protocol/canonical-json';
import { effectJournalScope, effectStateOf, FAMILY_JOURNAL_PREFIX, familyRootOf, type BranchPoint, type EffectRecord } from '../protocol/fork';

/** `<tool>:<sha256 of the canonical arguments>`: the same call whatever the key order or the task. */
export function intentOf(tool: string, input: unknown): string {
  return `${tool}:${createHash('sha256').update(canonicalJson(input)).digest('hex')}`;
}

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** The scopes of a family's journal start so (hashed: task ids may hold any character). */
export function familyJournalPrefix(root: string): string {
  return `${FAMILY_JOURNAL_PREFIX}${digest(root)}/`;
}

/** The one scope that holds every record of `intent` in the family of `root`: the journal's index. */
export function familyJournalScope(root: string, intent: string): string {
  return `${familyJournalPrefix(root)}${digest(intent).slice(0, 32)}`;
}

/** The call about to run, as the journal compares it with the family's other calls. */
export interface PlannedEffect {
  taskId: string;
  runId: string;
  /** This call across its activity's attempts: its own earlier attempts are never a repeat. */
  attempt?: string;
  /** The writer's turn: a call of an ancestor at or before the branch point is in this branch's past. */
  turn?: number;
  intent: string;
  idempotencyKey: string;
  /** The task's ancestry, nearest first (forks, rewinds, delegations); empty for a first task. */
  lineage: readonly BranchPoint[];
}

/**
 * Whether `record` is part of what the planned call's branch already knows: written by an ancestor
 * at or before the turn this branch left it, or by a child that ancestor had delegated to by then.
 * The walk goes up the record writer's ancestry to the first task on the planned call's own path.
 */
export function inBranchPast(record: Pick<EffectRecord, 'taskId' | 'turn' | 'lineage'>, call: Pick<PlannedEffect, 'taskId' | 'lineage' | 'turn'>): boolean {
  const path = new Map<string, number>(call.lineage.map((p) => [p.taskId, p.turn]));
  path.set(call.taskId, call.turn ?? Number.POSITIVE_INFINITY);
  const chain: BranchPoint[] = [{ taskId: record.taskId, turn: record.turn }, ...(record.lineage ?? [])];
  for (const point of chain) {
    const left = path.get(point.taskId);
    if (left !== undefined) return point.turn <= left;
  }
  return false;
}

export class EffectJournal {
  constructor(private readonly store: BlobStore) {}

  /** Appends one step of a call (its pending record, then how it settled). */
  async record(entry: EffectRecord): Promise<void> {
    await this.store.put(entry.family !== undefined ? familyJournalScope(entry.family, entry.intent) : effectJournalScope(entry.taskId), JSON.stringify(entry));
  }

  /** Every step recorded of `intent` in the family, oldest first. */
  async stepsOf(root: string, intent: string): Promise<EffectRecord[]> {
    return this.read(familyJournalScope(root, intent));
  }

  /** A task's version 1 records (written before the family journal), oldest first. */
  async entries(taskId: string): Promise<EffectRecord[]> {
    return this.read(effectJournalScope(taskId));
  }

  /**
   * The calls of the family that the planned call must not repeat on its own, latest step of each:
   * a call of this task under the same key in another run (a `temporal workflow reset` runs the
   * calls again with the keys they had); or a call with the same intent anywhere in the family that
   * this branch does not know of (an ancestor after the branch point, a sibling branch, their
   * children) and that is pending, unknown or done. A failed call took no effect and never counts.
   */
  async earlierRuns(call: PlannedEffect): Promise<EffectRecord[]> {
    const root = familyRootOf(call.taskId, call.lineage);
    const found: EffectRecord[] = [];
    for (const record of latestSteps(await this.stepsOf(root, call.intent))) {
      if (effectStateOf(record) === 'failed' || (call.attempt !== undefined && record.attempt === call.attempt)) continue;
      if (record.taskId === call.taskId) {
        if (record.idempotencyKey === call.idempotencyKey && record.runId !== call.runId) found.push(record);
        continue;
      }
      if (!inBranchPast(record, call)) found.push(record);
    }
    // Version 1 records, written per task before the family journal existed.
    const own = (await this.entries(call.taskId)).find((r) => r.idempotencyKey === call.idempotencyKey && r.runId !== call.runId && r.outcome.ok);
    if (own) found.push(own);
    for (const point of call.lineage) {
      const earlier = (await this.entries(point.taskId)).find((r) => r.intent === call.intent && r.turn > point.turn && r.outcome.ok);
      if (earlier) found.push(earlier);
    }
    return found;
  }

  /** The first of earlierRuns, the way version 1 asked. */
  async earlierRun(call: PlannedEffect): Promise<EffectRecord | undefined> {
    return (await this.earlierRuns(call))[0];
  }

  private async read(scope: string): Promise<EffectRecord[]> {
    const records = await Promise.all((await this.store.ids(scope)).map(async (id) => JSON.parse(await this.store.get(scope, id)) as EffectRecord));
    return records.sort((a, b) => a.at.localeCompare(b.at) || (a.step ?? 0) - (b.step ?? 0));
  }
}

/** Each call's latest step (steps of one call share `attempt`; a record without one is its own call). */
export function latestSteps(steps: readonly EffectRecord[]): EffectRecord[] {
  const byCall = new Map<string, EffectRecord>();
  steps.forEach((step, i) => {
    const key = step.attempt ?? `#${i}`;
    const seen = byCall.get(key);
    if (!seen || (step.step ?? 0) >= (seen.step ?? 0)) byCall.set(key, step);
  });
  return [...byCall.values()];
}
