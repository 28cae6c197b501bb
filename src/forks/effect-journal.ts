/**
 * The per-task effect journal: every write and destructive call that ran, kept in the shared blob
 * store (one blob per record in the task's journal scope, so the folder and PostgreSQL stores and
 * their encryption apply unchanged). runTool records each call that came back and asks the journal
 * before a write runs, so a reset, a fork or a rewind never repeats a write on its own.
 */
import { createHash } from 'node:crypto';
import type { BlobStore } from '../blobs/blob-store';
import { canonicalJson } from '../protocol/canonical-json';
import { effectJournalScope, type BranchPoint, type EffectRecord } from '../protocol/fork';

/** `<tool>:<sha256 of the canonical arguments>`: the same call whatever the key order or the task. */
export function intentOf(tool: string, input: unknown): string {
  return `${tool}:${createHash('sha256').update(canonicalJson(input)).digest('hex')}`;
}

/** The call about to run, as the journal compares it with what ran before. */
export interface PlannedEffect {
  taskId: string;
  runId: string;
  intent: string;
  idempotencyKey: string;
  /** The task's ancestry, nearest first (a fork's); empty for a task that is no fork. */
  lineage: readonly BranchPoint[];
}

export class EffectJournal {
  constructor(private readonly store: BlobStore) {}

  async record(entry: EffectRecord): Promise<void> {
    await this.store.put(effectJournalScope(entry.taskId), JSON.stringify(entry));
  }

  /** Every record of the task, oldest first. */
  async entries(taskId: string): Promise<EffectRecord[]> {
    const scope = effectJournalScope(taskId);
    const records = await Promise.all((await this.store.ids(scope)).map(async (id) => JSON.parse(await this.store.get(scope, id)) as EffectRecord));
    return records.sort((a, b) => a.at.localeCompare(b.at));
  }

  /**
   * The earlier run of this call, if it already ran: in this task under the same idempotency key in
   * another run (a `temporal workflow reset` runs the calls again with the keys they had), or in an
   * ancestor after its branch point with the same intent (a fork or rewind starts before it).
   */
  async earlierRun(call: PlannedEffect): Promise<EffectRecord | undefined> {
    const own = (await this.entries(call.taskId)).find((r) => r.idempotencyKey === call.idempotencyKey && r.runId !== call.runId && r.outcome.ok);
    if (own) return own;
    for (const point of call.lineage) {
      const found = (await this.entries(point.taskId)).find((r) => r.intent === call.intent && r.turn > point.turn && r.outcome.ok);
      if (found) return found;
    }
    return undefined;
  }
}
