/**
 * A fork or rewind carries its origin's task-scoped memory as it stood at the branch point
 * (docs/guarantees.md): each file at the last version the origin had written by then, with the
 * read marks the conflict check relies on. Later versions stay the origin's own.
 */
import type { BlobStore } from '../blobs/blob-store';
import { memoryBlobScope, type MemoryLog, type MemoryVersion } from './memory-log';

/** The branch point as the memory log can tell it: the origin's idempotency keys count its calls. */
export interface MemoryBranchPoint {
  /** The origin's memory scope, and its task scope (who wrote its versions). */
  fromScope: string;
  fromTask: string;
  /** The fork's. */
  toScope: string;
  toTask: string;
  /** The origin's key prefix (`<taskId>:<firstRunId>:`) and its tool calls by the branch point. */
  keyPrefix: string;
  toolCallsAtBranch: number;
}

/** Whether the origin wrote `version` after the branch point (a call numbered past it). */
export function writtenAfterBranch(version: MemoryVersion, point: Pick<MemoryBranchPoint, 'fromTask' | 'keyPrefix' | 'toolCallsAtBranch'>): boolean {
  if (version.task !== point.fromTask || !version.callKey.startsWith(point.keyPrefix)) return false;
  const call = Number(version.callKey.slice(point.keyPrefix.length));
  return Number.isInteger(call) && call > point.toolCallsAtBranch;
}

/** The version each path had at the branch point: the last before the first written after it. */
export function versionAtBranch(history: readonly MemoryVersion[], point: Pick<MemoryBranchPoint, 'fromTask' | 'keyPrefix' | 'toolCallsAtBranch'>): MemoryVersion | undefined {
  const firstAfter = history.findIndex((v) => writtenAfterBranch(v, point));
  return (firstAfter === -1 ? history : history.slice(0, firstAfter)).at(-1);
}

/** Copies the origin's memory as it stood at the branch point into the fork's (idempotent: a retry appends nothing twice). Returns the files carried. */
export async function carryMemory(log: MemoryLog, blobs: BlobStore, point: MemoryBranchPoint): Promise<number> {
  let carried = 0;
  for (const latest of await log.latest(point.fromScope)) {
    const atBranch = versionAtBranch(await log.history(point.fromScope, latest.path), point);
    if (!atBranch || atBranch.state !== 'file') continue;
    if (atBranch.blobId) {
      const content = await blobs.get(memoryBlobScope(point.fromScope), atBranch.blobId);
      await blobs.put(memoryBlobScope(point.toScope), content);
    }
    // The same version number: the fork's conversation may name it ("version 2 → 3").
    await log.append(point.toScope, { ...atBranch });
    // What the origin had read or written by then, the fork has read: its next write is checked against it.
    const seen = await log.seen(point.fromScope, point.fromTask, latest.path);
    if (atBranch.task === point.fromTask || (seen !== undefined && seen >= atBranch.version)) await log.markSeen(point.toScope, point.toTask, latest.path, atBranch.version);
    carried += 1;
  }
  return carried;
}
