/**
 * People's and scripts' view of an agent's memory, from the store the workers use (the same
 * DURABLE_AGENT_BLOB_STORE and encryption keys): list, show, clear. `durable-agent memory` is built on it.
 */
import type { BlobStore } from '../blobs/blob-store';
import { openBlobStore } from '../blobs/open-blob-store';
import { AGENT_NAME_PATTERN } from '../protocol/definitions';
import { MemoryFiles, type MemoryFileInfo } from './memory-files';
import { memoryScope, type MemoryLog } from './memory-log';
import { openMemoryLog } from './open-memory-log';

export interface MemoryClientOptions {
  /** `file:/abs/dir` or `postgres://...`. Default DURABLE_AGENT_BLOB_STORE, else the state folder's blobs. */
  blobStore?: string;
  /** Given stores instead (tests, scripts that hold them already); closed by their owner, not here. */
  stores?: { blobs: BlobStore; log: MemoryLog };
}

/** Which memory: an agent's shared one, or one task's own (its blob scope `<taskId>/<firstRunId>`). */
export type MemoryTarget = { agent: string; taskScope?: string };

export class MemoryClient {
  private readonly blobs: BlobStore;
  private readonly log: MemoryLog;
  private readonly owned: boolean;
  private readonly files: MemoryFiles;

  constructor(options: MemoryClientOptions = {}) {
    this.owned = !options.stores;
    this.blobs = options.stores?.blobs ?? openBlobStore(options.blobStore, { cacheBytes: 0 });
    this.log = options.stores?.log ?? openMemoryLog(options.blobStore);
    this.files = new MemoryFiles(this.log, this.blobs);
  }

  /** Where the memory is kept, for messages. */
  get description(): string {
    return this.log.description;
  }

  static scopeOf(target: MemoryTarget): string {
    if (!AGENT_NAME_PATTERN.test(target.agent)) throw new RangeError(`agent name "${target.agent}" must be 1-64 letters, digits, ".", "_" or "-"`);
    return target.taskScope ? memoryScope('task', target.agent, target.taskScope) : memoryScope('agent', target.agent, '');
  }

  list(target: MemoryTarget): Promise<MemoryFileInfo[]> {
    return this.files.list(MemoryClient.scopeOf(target));
  }

  show(target: MemoryTarget, path: string): Promise<(MemoryFileInfo & { content: string }) | undefined> {
    return this.files.show(MemoryClient.scopeOf(target), path);
  }

  /** Forgets one file (or a folder's files), or all of the memory with its content. Returns how many files went. */
  clear(target: MemoryTarget, path?: string): Promise<number> {
    return this.files.clear(MemoryClient.scopeOf(target), path);
  }

  async close(): Promise<void> {
    if (!this.owned) return;
    await this.log.close();
    await this.blobs.close();
  }
}
