/**
 * A per-worker read cache in front of any store: each model call rebuilds the conversation from
 * its references, so without a cache every turn would read the whole conversation back.
 * Blobs are immutable (content-addressed), so a cached blob is never stale; only a purge removes one.
 */
import type { BlobStore } from './blob-store';

/** 64 MB of cached text per worker (DURABLE_AGENT_BLOB_CACHE_MB overrides). */
export const DEFAULT_BLOB_CACHE_BYTES = 64 * 1024 * 1024;

export function blobCacheBytesFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.DURABLE_AGENT_BLOB_CACHE_MB;
  if (raw === undefined || raw === '') return DEFAULT_BLOB_CACHE_BYTES;
  const mb = Number(raw);
  if (!Number.isFinite(mb) || mb < 0) throw new RangeError(`DURABLE_AGENT_BLOB_CACHE_MB must be a number of megabytes >= 0, got "${raw}"`);
  return Math.floor(mb * 1024 * 1024);
}

/** What a string costs in memory: V8 keeps most text as one byte per character, the rest as two; count two to stay under the bound. */
const costOf = (text: string) => text.length * 2;

export class CachedBlobStore implements BlobStore {
  readonly description: string;
  /** Insertion order is recency order: a hit is deleted and set again, the first key is the least recently used. */
  private readonly entries = new Map<string, string>();
  private readonly pending = new Map<string, Promise<string>>();
  private bytes = 0;

  constructor(
    readonly inner: BlobStore,
    readonly maxBytes: number = DEFAULT_BLOB_CACHE_BYTES,
  ) {
    this.description = inner.description;
  }

  /** Memory the cached text takes now (an estimate, see costOf). */
  get cachedBytes(): number {
    return this.bytes;
  }

  async put(scope: string, text: string): Promise<string> {
    const id = await this.inner.put(scope, text);
    // The worker that stores a tool result is usually the one that sends it to the model next.
    this.remember(keyOf(scope, id), text);
    return id;
  }

  async get(scope: string, id: string): Promise<string> {
    const key = keyOf(scope, id);
    const hit = this.entries.get(key);
    if (hit !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit;
    }
    // Concurrent activities reading the same conversation share one read.
    let read = this.pending.get(key);
    if (!read) {
      read = this.inner.get(scope, id).finally(() => this.pending.delete(key));
      this.pending.set(key, read);
    }
    const text = await read;
    this.remember(key, text);
    return text;
  }

  async purge(scopePrefix: string): Promise<number> {
    const removed = await this.inner.purge(scopePrefix);
    this.forget(scopePrefix);
    return removed;
  }

  async purgeScope(scope: string): Promise<number> {
    const removed = await this.inner.purgeScope(scope);
    this.forget(keyOf(scope, ''));
    return removed;
  }

  scopes(): Promise<string[]> {
    return this.inner.scopes();
  }

  ids(scope: string): Promise<string[]> {
    return this.inner.ids(scope);
  }

  /** Never cached: a record is read to learn who holds it now. */
  createRecord(scope: string, name: string, text: string): Promise<boolean> {
    return this.inner.createRecord(scope, name, text);
  }

  records(scope: string): Promise<{ name: string; text: string }[]> {
    return this.inner.records(scope);
  }

  async close(): Promise<void> {
    this.entries.clear();
    this.bytes = 0;
    await this.inner.close();
  }

  /** Drops the cached blobs whose key starts with `keyPrefix`. */
  private forget(keyPrefix: string): void {
    for (const [key, text] of this.entries) {
      if (!key.startsWith(keyPrefix)) continue;
      this.entries.delete(key);
      this.bytes -= costOf(text);
    }
  }

  private remember(key: string, text: string): void {
    const cost = costOf(text);
    if (cost > this.maxBytes) return;
    const old = this.entries.get(key);
    if (old !== undefined) {
      this.entries.delete(key);
      this.bytes -= costOf(old);
    }
    this.entries.set(key, text);
    this.bytes += cost;
    for (const [oldest, value] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= costOf(value);
    }
  }
}

/** Scopes cannot contain NUL (checkScope), so the key is unambiguous and keeps the scope as its prefix for purge. */
const keyOf = (scope: string, id: string) => `${scope}\0${id}`;
