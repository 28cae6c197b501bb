/**
 * The live output log beside the blob store the same setting chooses (DURABLE_AGENT_BLOB_STORE): in
 * a folder, `<blob folder>/~live` (`~` never starts an encoded scope name); in PostgreSQL, its own
 * table in the same database. With encryption keys (the payload codec's), lines are sealed with them.
 */
import path from 'node:path';
import { blobStoreLocation } from '../blobs/open-blob-store';
import { encryptionKeyring, type CodecOptions } from '../codec';
import { type LiveOutputLog, RecordLog } from './live-output-log';
import { LocalLineStore } from './local-line-store';
import { PostgresLineStore } from './postgres-line-store';

export function openLiveOutputLog(spec?: string, options: { codec?: CodecOptions } = {}): LiveOutputLog {
  const keyring = encryptionKeyring(options.codec);
  const location = blobStoreLocation(spec);
  const lines = location.kind === 'postgres' ? new PostgresLineStore({ url: location.url }) : new LocalLineStore(path.join(location.dir, '~live'));
  return new RecordLog(lines, keyring);
}
