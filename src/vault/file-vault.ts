/**
 * The default vault: one JSON file under the state dir (`.durable-agent/vault/vault.json`), each
 * value sealed with AES-256-GCM (sealed-secret.ts), so the file never holds a value in plain text.
 * Names, people, versions and times are plain (they are what `vault list` shows).
 *
 * Writers in several processes (the CLI, workers refreshing a token) take a lock file (O_EXCL,
 * stale after LOCK_STALE_MS) around read-compare-write, and replace the file atomically (write a
 * temporary file, fsync, rename), so a compare-and-swap holds across processes on one machine.
 * Readers read the file as it is at each call: a revocation reaches the next tool call.
 *
 * All file work is asynchronous: workers read and refresh credentials here while tool calls run, and
 * a synchronous fsync on a busy disk held the event loop long enough for every running call to miss
 * its heartbeat and run twice (50 tasks on two workers: 92 calls for 50 reads).
 */
import { mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Keyring } from '../codec/encryption-keys';
import { openSecret, sealSecret } from './sealed-secret';
import { checkVersion, VaultConfigError, type VaultEntryInfo, type VaultRead, type VaultStore, type WriteOptions } from './vault-store';

interface StoredEntry {
  name: string;
  person?: string;
  version: number;
  updatedAt: string;
  revokedAt?: string;
  sealed?: string;
}

interface VaultFile {
  format: 1;
  entries: StoredEntry[];
}

export const VAULT_FILE = 'vault.json';
const LOCK_STALE_MS = 10_000;
const LOCK_WAIT_MS = 15_000;

export class FileVault implements VaultStore {
  readonly description: string;
  readonly file: string;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly dir: string,
    private readonly keyring: Keyring,
  ) {
    this.file = path.join(path.resolve(dir), VAULT_FILE);
    this.description = `file ${this.file}`;
  }

  async read(name: string, person?: string): Promise<VaultRead> {
    const entry = (await this.load()).entries.find((e) => e.name === name && e.person === person);
    if (!entry) return undefined;
    const info = infoOf(entry);
    if (entry.revokedAt !== undefined || entry.sealed === undefined) return { state: 'revoked', ...info };
    return { state: 'live', ...info, value: openSecret(this.keyring, name, person, entry.version, entry.sealed) };
  }

  async list(): Promise<VaultEntryInfo[]> {
    return (await this.load()).entries.map(infoOf);
  }

  write(name: string, value: string, options: WriteOptions = {}): Promise<VaultEntryInfo> {
    return this.locked((file) => {
      const { person, expectedVersion } = options;
      const at = file.entries.findIndex((e) => e.name === name && e.person === person);
      const current = at >= 0 ? file.entries[at]! : undefined;
      checkVersion(name, person, expectedVersion, current?.version ?? 0);
      const version = (current?.version ?? 0) + 1;
      const entry: StoredEntry = { name, ...(person !== undefined ? { person } : {}), version, updatedAt: new Date().toISOString(), sealed: sealSecret(this.keyring, name, person, version, value) };
      if (at >= 0) file.entries[at] = entry;
      else file.entries.push(entry);
      return { file, result: infoOf(entry) };
    });
  }

  revoke(name: string, options: WriteOptions = {}): Promise<VaultEntryInfo | undefined> {
    return this.locked((file) => {
      const { person, expectedVersion } = options;
      const at = file.entries.findIndex((e) => e.name === name && e.person === person);
      const current = at >= 0 ? file.entries[at]! : undefined;
      if (!current || current.revokedAt !== undefined) return { result: undefined };
      checkVersion(name, person, expectedVersion, current.version);
      const now = new Date().toISOString();
      const entry: StoredEntry = { name, ...(person !== undefined ? { person } : {}), version: current.version + 1, updatedAt: now, revokedAt: now };
      file.entries[at] = entry;
      return { file, result: infoOf(entry) };
    });
  }

  async close(): Promise<void> {
    await this.queue.catch(() => undefined);
  }

  private async load(): Promise<VaultFile> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { format: 1, entries: [] };
      throw new VaultConfigError(`cannot read the vault ${this.file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    try {
      const parsed = JSON.parse(text) as VaultFile;
      if (parsed?.format !== 1 || !Array.isArray(parsed.entries)) throw new Error('not a vault file');
      return parsed;
    } catch {
      throw new VaultConfigError(`the vault ${this.file} is not a vault file this version reads`);
    }
  }

  /** Read-modify-write under this process's queue and the file lock; `file` in the answer is written back. */
  private locked<T>(change: (file: VaultFile) => { file?: VaultFile; result: T }): Promise<T> {
    const run = this.queue.then(async () => {
      await mkdir(path.dirname(this.file), { recursive: true, mode: 0o700 });
      const release = await acquireLock(`${this.file}.lock`);
      try {
        const { file, result } = change(await this.load());
        if (file) await writeAtomically(this.file, `${JSON.stringify(file, null, 2)}\n`);
        return result;
      } finally {
        await release();
      }
    });
    this.queue = run.catch(() => undefined);
    return run;
  }
}

function infoOf(entry: StoredEntry): VaultEntryInfo {
  return {
    name: entry.name,
    ...(entry.person !== undefined ? { person: entry.person } : {}),
    version: entry.version,
    updatedAt: entry.updatedAt,
    ...(entry.revokedAt !== undefined ? { revokedAt: entry.revokedAt } : {}),
    source: 'file',
  };
}

async function writeAtomically(file: string, text: string): Promise<void> {
  const temporary = `${file}.${process.pid}.${Date.now()}.tmp`;
  const handle = await open(temporary, 'w', 0o600);
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temporary, file);
}

async function acquireLock(lock: string): Promise<() => Promise<void>> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      const handle = await open(lock, 'wx', 0o600);
      try {
        await handle.writeFile(`${process.pid}\n`);
      } finally {
        await handle.close();
      }
      return () => rm(lock, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new VaultConfigError(`cannot lock the vault (${lock}): ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    try {
      // A writer that died holding the lock: its lock goes stale.
      if (Date.now() - (await stat(lock)).mtimeMs > LOCK_STALE_MS) await rm(lock, { force: true });
    } catch {
      // Gone meanwhile: try again.
    }
    if (Date.now() > deadline) throw new VaultConfigError(`the vault is locked by another process (${lock}); remove the lock file if no durable-agent process is writing the vault`);
    await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 30));
  }
}
