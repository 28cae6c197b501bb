/**
 * Chooses the blob store from one setting, so workers, the CLI and scripts agree on where blobs are:
 * DURABLE_AGENT_BLOB_STORE = `file:/abs/dir` | `postgres://user:pass@host:port/db` (default: the
 * folder `<state dir>/blobs`). Workers on several machines must all point at one shared store.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BlobStore } from './blob-store';
import { blobCacheBytesFromEnv, CachedBlobStore } from './cached-blob-store';
import { defaultBlobDir, LocalBlobStore } from './local-blob-store';
import { PostgresBlobStore } from './postgres-blob-store';

export const BLOB_STORE_ENV = 'DURABLE_AGENT_BLOB_STORE';

export interface OpenBlobStoreOptions {
  /** Bytes of read cache in front of the store; 0 for none (e.g. a one-shot `purge`). Default DURABLE_AGENT_BLOB_CACHE_MB, else 64 MB. */
  cacheBytes?: number;
}

export function openBlobStore(spec: string | undefined = process.env[BLOB_STORE_ENV], options: OpenBlobStoreOptions = {}): BlobStore {
  const store = storeOf(spec?.trim() || undefined);
  const cacheBytes = options.cacheBytes ?? blobCacheBytesFromEnv();
  return cacheBytes > 0 ? new CachedBlobStore(store, cacheBytes) : store;
}

function storeOf(spec: string | undefined): BlobStore {
  if (spec === undefined) return new LocalBlobStore(defaultBlobDir());
  if (/^postgres(ql)?:\/\//i.test(spec)) return new PostgresBlobStore({ url: spec });
  if (/^file:/i.test(spec)) {
    const dir = spec.startsWith('file://') ? fileURLToPath(spec) : spec.slice('file:'.length);
    if (!path.isAbsolute(dir)) throw new RangeError(`blob store "${spec}": the folder must be an absolute path (${BLOB_STORE_ENV}=file:/abs/dir)`);
    return new LocalBlobStore(dir);
  }
  throw new RangeError(
    `blob store "${spec.replace(/\/\/[^@/]*@/, '//***@')}": expected ${BLOB_STORE_ENV}=file:/abs/dir or postgres://user:password@host:port/database`,
  );
}
