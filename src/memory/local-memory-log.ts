/**
 * The memory log in a folder (beside the local blob store's scopes): a folder per scope and per
 * path, a file per version created with O_EXCL, so two workers writing version N of one file on
 * one machine cannot both succeed. Names are hashes: paths and scopes never become file names.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { hashName as hash, namesIn as names, replaceFile } from '../storage/folder';
import type { MemoryLog, MemoryVersion } from './memory-log';

const VERSION_FILE = /^(\d{10})\.json$/;

export class LocalMemoryLog implements MemoryLog {
  readonly description: string;

  constructor(readonly root: string) {
    this.root = path.resolve(root);
    this.description = `folder ${this.root}`;
  }

  private scopeDir(scope: string): string {
    return path.join(this.root, hash(scope));
  }

  private pathDir(scope: string, file: string): string {
    return path.join(this.scopeDir(scope), 'files', hash(file));
  }

  async history(scope: string, file: string): Promise<MemoryVersion[]> {
    const dir = this.pathDir(scope, file);
    const files = (await names(dir)).filter((n) => VERSION_FILE.test(n)).sort();
    return Promise.all(files.map(async (n) => JSON.parse(await readFile(path.join(dir, n), 'utf8')) as MemoryVersion));
  }

  async append(scope: string, version: MemoryVersion): Promise<boolean> {
    const dir = this.pathDir(scope, version.path);
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(this.scopeDir(scope), 'scope'), scope).catch(() => undefined);
    try {
      // 'wx': the version exists only once, whoever writes it first.
      await writeFile(path.join(dir, `${String(version.version).padStart(10, '0')}.json`), JSON.stringify(version), { flag: 'wx' });
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw err;
    }
  }

  async latest(scope: string): Promise<MemoryVersion[]> {
    const filesDir = path.join(this.scopeDir(scope), 'files');
    const out: MemoryVersion[] = [];
    for (const name of await names(filesDir)) {
      const versions = (await names(path.join(filesDir, name))).filter((n) => VERSION_FILE.test(n)).sort();
      const last = versions.at(-1);
      if (last) out.push(JSON.parse(await readFile(path.join(filesDir, name, last), 'utf8')) as MemoryVersion);
    }
    return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  private seenFile(scope: string, task: string, file: string): string {
    return path.join(this.scopeDir(scope), 'seen', hash(task), hash(file));
  }

  async seen(scope: string, task: string, file: string): Promise<number | undefined> {
    try {
      const n = Number(await readFile(this.seenFile(scope, task, file), 'utf8'));
      return Number.isInteger(n) ? n : undefined;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  async markSeen(scope: string, task: string, file: string, version: number): Promise<void> {
    const target = this.seenFile(scope, task, file);
    await mkdir(path.dirname(target), { recursive: true });
    await replaceFile(target, String(version));
  }

  async clear(scope: string, file?: string): Promise<number> {
    if (file !== undefined) {
      const dir = this.pathDir(scope, file);
      const had = (await names(dir)).length > 0;
      await rm(dir, { recursive: true, force: true });
      return had ? 1 : 0;
    }
    const count = (await names(path.join(this.scopeDir(scope), 'files'))).length;
    await rm(this.scopeDir(scope), { recursive: true, force: true });
    return count;
  }

  async close(): Promise<void> {}
}
