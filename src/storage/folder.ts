/**
 * What every folder store shares (blobs, the memory log, live output): names made from hashes (ids
 * and scopes never become file names), a listing that is empty for a folder not made yet, and a
 * file replaced whole (written beside it under a `~tmp-` name, then renamed onto it), so a reader
 * never sees half of it.
 */
import { createHash, randomUUID } from 'node:crypto';
import { readdir, rename, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** Where a file being replaced is written first: a name no store reads as its own. */
export const TEMP_PREFIX = '~tmp-';

/** The sha256 of the text's UTF-8 bytes, in hex: a file or folder name for an id, a scope, a path. */
export function hashName(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** The names in a folder; none when it does not exist (yet). */
export async function namesIn(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

export function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

/** Writes `content` to `file` in one step for readers: the name shows all the bytes or the old ones. */
export async function replaceFile(file: string, content: string | Uint8Array): Promise<void> {
  const temp = path.join(path.dirname(file), `${TEMP_PREFIX}${randomUUID()}`);
  try {
    await writeFile(temp, content);
    await rename(temp, file);
  } catch (err) {
    await unlink(temp).catch(() => undefined);
    throw err;
  }
}
