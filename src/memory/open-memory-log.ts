/**
 * The memory log beside the blob store the same setting chooses (DURABLE_AGENT_BLOB_STORE): in a
 * folder, `<blob folder>/~memory` (not a blob scope: `~` never starts an encoded scope name); in
 * PostgreSQL, its own table in the same database. Workers, the CLI and scripts agree by construction.
 */
import path from 'node:path';
import { blobStoreLocation } from '../blobs/open-blob-store';
import { LocalMemoryLog } from './local-memory-log';
import type { MemoryLog } from './memory-log';
import { PostgresMemoryLog } from './postgres-memory-log';

export function openMemoryLog(spec?: string): MemoryLog {
  const location = blobStoreLocation(spec);
  return location.kind === 'postgres' ? new PostgresMemoryLog({ url: location.url }) : new LocalMemoryLog(path.join(location.dir, '~memory'));
}
