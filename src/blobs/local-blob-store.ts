/**
 * The embedded default: one folder (`<state dir>/blobs`), a subfolder per scope, a file per blob
 * named by its sha256. Good for one machine; workers on several machines need a shared store.
 */
import { randomUUID } from 'node:crypto';
import { link, mkdir, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { stateDir } from '../server/state-dir';
import { BlobMissingError, type BlobBodyStore } from './blob-store';
import { plainRecords, plainTextOf } from './blob-envelope';
import { checkBodyPlace, checkRecordPlace, checkScope, checkScopePrefix, putText } from './blob-id';
import { exists, hashName, namesIn, replaceFile as writeAtomically, TEMP_PREFIX } from '../storage/folder';

/** Longer encoded scopes become a hashed folder name: file names stop at 255 bytes. */
const MAX_DIRECT_NAME = 200;
const HASHED = '~h-';
/** Inside a hashed folder, the scope it holds (folder names cannot be read back from a hash). */
const SCOPE_FILE = '~scope';
/** A record's file (createRecord): never a content id's 64 hex digits, never a temporary file. */
const RECORD_PREFIX = '~rec-';

export function defaultBlobDir(): string {
  return path.join(stateDir(), 'blobs');
}

/**
 * Scopes are attacker input (a workflow id is whatever a caller chose): every byte outside
 * [A-Za-z0-9_-] becomes %XX, so no scope can spell `..`, `/`, a drive or a device name.
 */
function encodeScope(scope: string): string {
  let out = '';
  for (const byte of Buffer.from(scope, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9_-]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

function decodeScope(name: string): string | undefined {
  if (!/^(?:[A-Za-z0-9_-]|%[0-9A-F]{2})+$/.test(name)) return undefined;
  const bytes: number[] = [];
  for (let i = 0; i < name.length; i++) {
    if (name[i] === '%') {
      bytes.push(parseInt(name.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(name.charCodeAt(i));
  }
  return Buffer.from(bytes).toString('utf8');
}

export class LocalBlobStore implements BlobBodyStore {
  readonly description: string;

  constructor(readonly root: string = defaultBlobDir()) {
    this.root = path.resolve(root);
    this.description = `folder ${this.root}`;
  }

  private folderOf(scope: string): string {
    const encoded = encodeScope(scope);
    const name = encoded.length <= MAX_DIRECT_NAME ? encoded : HASHED + hashName(scope);
    return path.join(this.root, name);
  }

  put(scope: string, text: string): Promise<string> {
    return putText(this, scope, text);
  }

  async get(scope: string, id: string): Promise<string> {
    return plainTextOf(await this.getBody(scope, id), scope, id, this.description);
  }

  async putBody(scope: string, id: string, body: Buffer): Promise<void> {
    checkBodyPlace(scope, id);
    const folder = this.folderOf(scope);
    const file = path.join(folder, id.slice('sha256:'.length));
    if (await exists(file)) return;
    await mkdir(folder, { recursive: true });
    if (path.basename(folder).startsWith(HASHED)) await writeAtomically(path.join(folder, SCOPE_FILE), scope);
    // Readers never see a half-written blob: the name appears only once its bytes are all there.
    // Two writers of the same blob both rename a body of the same text onto it, which is harmless.
    await writeAtomically(file, body);
  }

  async getBody(scope: string, id: string): Promise<Buffer> {
    checkBodyPlace(scope, id);
    try {
      return await readFile(path.join(this.folderOf(scope), id.slice('sha256:'.length)));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new BlobMissingError(scope, id, this.description);
      throw err;
    }
  }

  createRecord(scope: string, name: string, text: string): Promise<boolean> {
    return plainRecords(this).create(scope, name, text);
  }

  records(scope: string): Promise<{ name: string; text: string }[]> {
    return plainRecords(this).read(scope);
  }

  async createRecordBody(scope: string, name: string, body: Buffer): Promise<boolean> {
    checkRecordPlace(scope, name);
    const folder = this.folderOf(scope);
    await mkdir(folder, { recursive: true });
    if (path.basename(folder).startsWith(HASHED)) await writeAtomically(path.join(folder, SCOPE_FILE), scope);
    // link() fails with EEXIST when the name is taken, in one step on every local filesystem, and
    // the name appears with all its bytes: whoever links first holds the record, nobody reads half of it.
    const temp = path.join(folder, `${TEMP_PREFIX}${randomUUID()}`);
    await writeFile(temp, body);
    try {
      await link(temp, path.join(folder, RECORD_PREFIX + name));
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw err;
    } finally {
      await unlink(temp).catch(() => undefined);
    }
  }

  async recordBodies(scope: string): Promise<{ name: string; body: Buffer }[]> {
    checkScope(scope);
    const folder = this.folderOf(scope);
    const names = (await namesIn(folder)).filter((n) => n.startsWith(RECORD_PREFIX));
    return Promise.all(names.map(async (n) => ({ name: n.slice(RECORD_PREFIX.length), body: await readFile(path.join(folder, n)) })));
  }

  async purge(scopePrefix: string): Promise<number> {
    checkScopePrefix(scopePrefix);
    let removed = 0;
    for (const { scope, folder } of await this.folders()) {
      if (!scope.startsWith(scopePrefix)) continue;
      removed += (await namesIn(folder)).filter((name) => /^[0-9a-f]{64}$/.test(name)).length;
      await rm(folder, { recursive: true, force: true });
    }
    return removed;
  }

  async purgeScope(scope: string): Promise<number> {
    checkScope(scope);
    const folder = this.folderOf(scope);
    const names = await namesIn(folder);
    await rm(folder, { recursive: true, force: true });
    return names.filter((name) => /^[0-9a-f]{64}$/.test(name)).length;
  }

  async scopes(): Promise<string[]> {
    return (await this.folders()).map((f) => f.scope);
  }

  async ids(scope: string): Promise<string[]> {
    checkScope(scope);
    return (await namesIn(this.folderOf(scope))).filter((name) => /^[0-9a-f]{64}$/.test(name)).map((name) => `sha256:${name}`);
  }

  async close(): Promise<void> {}

  private async folders(): Promise<{ scope: string; folder: string }[]> {
    const names = await namesIn(this.root);
    const out: { scope: string; folder: string }[] = [];
    for (const name of names) {
      const folder = path.join(this.root, name);
      const scope = name.startsWith(HASHED) ? await readFile(path.join(folder, SCOPE_FILE), 'utf8').catch(() => undefined) : decodeScope(name);
      if (scope !== undefined) out.push({ scope, folder });
    }
    return out;
  }
}
