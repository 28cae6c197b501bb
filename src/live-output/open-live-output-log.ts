/**
 * The live output log beside the blob store the same setting chooses (DURABLE_AGENT_BLOB_STORE): in
 * a folder, `<blob folder>/~live` (`~` never starts an encoded scope name); in PostgreSQL, its own
 * table in the same database. With encryption keys (the payload codec's), lines are sealed with them.
 */
import { blobStoreLocation } from '../blobs/open-blob-store';
import { encryptionKeyring, type CodecOptions } from '../codec';
import { type LineStore, type LiveOutputLog, RecordLog } from './live-output-log';
import { LocalLineStore } from './local-line-store';
import { PostgresLineStore } from './postgres-line-store';
import { openAt } from '../storage/location';

export function openLiveOutputLog(spec?: string, options: { codec?: CodecOptions } = {}): LiveOutputLog {
  const keyring = encryptionKeyring(options.codec);
  const lines = openAt<LineStore>(blobStoreLocation(spec), { folder: (dir) => new LocalLineStore(dir), postgres: (url) => new PostgresLineStore({ url }) }, '~live');
  return new RecordLog(lines, keyring);
}
