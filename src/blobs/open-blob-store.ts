/**
 * Chooses the blob store from one setting, so workers, the CLI and scripts agree on where blobs are:
 * DURABLE_AGENT_BLOB_STORE = `file:/abs/dir` | `postgres://user:pass@host:port/db` (default: the
 * folder `<state dir>/blobs`). Workers on several machines must all point at one shared store.
 * With encryption keys configured (the same CodecOptions and environment as the payload codec:
 * DURABLE_AGENT_ENCRYPTION_KEYS / DURABLE_AGENT_ENCRYPTION_KEY_FILE), blobs are encrypted at rest;
 * the read cache sits in front of the encryption, so it holds plain text in memory only. With keys,
 * a plain blob is refused unless DURABLE_AGENT_BLOB_PLAIN=read (blobs written before encryption was
 * turned on, while the tasks that wrote them finish).
 */
import { encryptionKeyring, type CodecOptions } from '../codec';
import type { BlobBodyStore, BlobStore } from './blob-store';
import { blobCacheBytesFromEnv, CachedBlobStore } from './cached-blob-store';
import { EncryptedBlobStore, type PlainBlobs } from './encrypted-blob-store';
import { defaultBlobDir, LocalBlobStore } from './local-blob-store';
import { PostgresBlobStore } from './postgres-blob-store';
import { openAt, parseLocation, type StoreLocation } from '../storage/location';

export const BLOB_STORE_ENV = 'DURABLE_AGENT_BLOB_STORE';
export const BLOB_PLAIN_ENV = 'DURABLE_AGENT_BLOB_PLAIN';

export interface OpenBlobStoreOptions {
  /** Bytes of read cache in front of the store; 0 for none (e.g. a one-shot `purge`). Default DURABLE_AGENT_BLOB_CACHE_MB, else 64 MB. */
  cacheBytes?: number;
  /**
   * Where the encryption keys come from: the same options the payload codec takes (a worker passes
   * its `codec`). Default: the environment (DURABLE_AGENT_ENCRYPTION_KEYS / _KEY_FILE); no keys, no
   * encryption. Throws EncryptionKeyError for a bad key.
   */
  codec?: CodecOptions;
  /**
   * With encryption keys: whether plain (unsealed) blobs are read. Default DURABLE_AGENT_BLOB_PLAIN
   * (in the codec options' env, else the environment), else `refuse`. Every read is checked against
   * its id either way.
   */
  plainBlobs?: PlainBlobs;
}

function plainBlobsFrom(env: NodeJS.ProcessEnv): PlainBlobs {
  const raw = (env[BLOB_PLAIN_ENV] ?? '').trim().toLowerCase();
  if (raw === '' || raw === 'refuse') return 'refuse';
  if (raw === 'read') return 'read';
  throw new RangeError(`${BLOB_PLAIN_ENV} must be "read" or "refuse", got "${env[BLOB_PLAIN_ENV]}"`);
}

export function openBlobStore(spec: string | undefined = process.env[BLOB_STORE_ENV], options: OpenBlobStoreOptions = {}): BlobStore {
  // Keys first: a bad key stops here, before a database pool is opened for nothing.
  const keyring = encryptionKeyring(options.codec);
  const plainBlobs = keyring ? (options.plainBlobs ?? plainBlobsFrom(options.codec?.env ?? process.env)) : 'refuse';
  const bodies = storeOf(spec?.trim() || undefined);
  const store: BlobStore = keyring ? new EncryptedBlobStore(bodies, keyring, { plainBlobs }) : bodies;
  const cacheBytes = options.cacheBytes ?? blobCacheBytesFromEnv();
  return cacheBytes > 0 ? new CachedBlobStore(store, cacheBytes) : store;
}

/** Where a blob store setting points: a folder or a PostgreSQL database (the memory log, live output and by default the vault sit beside it). */
export type BlobStoreLocation = StoreLocation;

export function blobStoreLocation(spec: string | undefined = process.env[BLOB_STORE_ENV]): BlobStoreLocation {
  return parseLocation(spec, { what: 'blob store', env: BLOB_STORE_ENV, byDefault: () => ({ kind: 'folder', dir: defaultBlobDir() }) });
}

function storeOf(spec: string | undefined): BlobBodyStore {
  return openAt<BlobBodyStore>(blobStoreLocation(spec ?? ''), { folder: (dir) => new LocalBlobStore(dir), postgres: (url) => new PostgresBlobStore({ url }) });
}
