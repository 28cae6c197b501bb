/**
 * Where the family's effect journal lives (docs/guarantees.md): every write and destructive call of
 * a task, its forks, rewinds, resets, continue-as-new runs and child tasks at any depth, kept under
 * the family's root (the first task of the lineage), in the shared blob store, one scope per family
 * and intent (a check reads only the records of the call it is about). Who may run an intent is
 * decided by its claims (intent-claims.ts); this module names the scopes and reads older records.
 */
import { createHash } from 'node:crypto';
import type { BlobStore } from '../blobs/blob-store';
import { canonicalJson } from '../protocol/canonical-json';
import { effectJournalScope, FAMILY_JOURNAL_PREFIX, type EffectRecord } from '../protocol/fork';

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

export class EffectJournal {
  constructor(private readonly store: BlobStore) {}

  /** Appends one step of a call (its pending record, then how it settled). */
  async record(entry: EffectRecord): Promise<void> {
    await this.store.put(entry.family !== undefined ? familyJournalScope(entry.family, entry.intent) : effectJournalScope(entry.taskId), JSON.stringify(entry));
  }

  /** A task's version 1 records (written before the family journal), oldest first. */
  async entries(taskId: string): Promise<EffectRecord[]> {
    return this.read(effectJournalScope(taskId));
  }

  /** A task's version 1 records of `intent` made by `taskId` or an ancestor on its path: read by builds since, never written. */
  async legacyEntries(taskIds: readonly string[], intent: string): Promise<EffectRecord[]> {
    return (await Promise.all(taskIds.map((id) => this.entries(id)))).flat().filter((r) => r.intent === intent && r.outcome.ok);
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
