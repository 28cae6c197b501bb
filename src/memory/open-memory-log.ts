/**
 * The memory log beside the blob store the same setting chooses (DURABLE_AGENT_BLOB_STORE): in a
 * folder, `<blob folder>/~memory` (not a blob scope: `~` never starts an encoded scope name); in
 * PostgreSQL, its own table in the same database. Workers, the CLI and scripts agree by construction.
 */
import { blobStoreLocation } from '../blobs/open-blob-store';
import { LocalMemoryLog } from './local-memory-log';
import type { MemoryLog } from './memory-log';
import { PostgresMemoryLog } from './postgres-memory-log';
import { openAt } from '../storage/location';

export function openMemoryLog(spec?: string): MemoryLog {
  return openAt<MemoryLog>(blobStoreLocation(spec), { folder: (dir) => new LocalMemoryLog(dir), postgres: (url) => new PostgresMemoryLog({ url }) }, '~memory');
}
