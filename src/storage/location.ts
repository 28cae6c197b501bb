/**
 * Where a store lives, read from one setting: `file:/abs/dir` (or a file:// URL) is a folder,
 * `postgres://…` (or postgresql://) a database, nothing the store's default. Every store (blobs,
 * vault, and the memory log and live output beside the blobs) parses its setting here, so they
 * accept the same spellings and refuse a bad one with the same words.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export type StoreLocation = { kind: 'folder'; dir: string } | { kind: 'postgres'; url: string };

export interface LocationSetting {
  /** What the store is called in messages: `blob store`, `vault`. */
  what: string;
  /** The environment variable that holds the setting, named in messages. */
  env: string;
  /** Where the store is when the setting is empty. */
  byDefault: () => StoreLocation;
  /** The error a bad setting raises (default RangeError). */
  error?: (message: string) => Error;
}

/** A setting with any password in a URL hidden, for messages. */
const shown = (spec: string) => spec.replace(/\/\/[^@/]*@/, '//***@');

export function parseLocation(spec: string | undefined, setting: LocationSetting): StoreLocation {
  const fail = setting.error ?? ((message: string) => new RangeError(message));
  spec = spec?.trim() || undefined;
  if (spec === undefined) return setting.byDefault();
  if (/^postgres(ql)?:\/\//i.test(spec)) return { kind: 'postgres', url: spec };
  if (/^file:/i.test(spec)) {
    const dir = spec.startsWith('file://') ? fileURLToPath(spec) : spec.slice('file:'.length);
    if (!path.isAbsolute(dir)) throw fail(`${setting.what} "${shown(spec)}": the folder must be an absolute path (${setting.env}=file:/abs/dir)`);
    return { kind: 'folder', dir };
  }
  throw fail(`${setting.what} "${shown(spec)}": expected ${setting.env}=file:/abs/dir or postgres://user:password@host:port/database`);
}

/** Opens the backend a location names: a folder store on `folder` (the folder, joined with `subfolder` when given), a PostgreSQL one on its URL. */
export function openAt<T>(location: StoreLocation, open: { folder: (dir: string) => T; postgres: (url: string) => T }, subfolder?: string): T {
  if (location.kind === 'postgres') return open.postgres(location.url);
  return open.folder(subfolder === undefined ? location.dir : path.join(location.dir, subfolder));
}
