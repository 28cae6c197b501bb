/**
 * Chooses the vault from one setting, so workers and the CLI agree on where credentials are:
 * DURABLE_AGENT_VAULT = `file:/abs/dir` | `postgres://user:pass@host:port/db`. Default: beside the
 * blob store when that is PostgreSQL (DURABLE_AGENT_BLOB_STORE), else the folder `<state dir>/vault`.
 *
 * Keys: the project's keyring (DURABLE_AGENT_ENCRYPTION_KEYS / _KEY_FILE, or the codec options a
 * worker is given). A file vault without project keys makes its own key, `vault.key` (mode 0600)
 * beside the file: values are then safe from someone who copies only the vault file, not from
 * someone who reads the folder. A PostgreSQL vault needs the project's keys (every machine must
 * decrypt, and the key must not sit in the database).
 */
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { encryptionKeyring, type CodecOptions } from '../codec';
import { createKeyring, ENCRYPTION_KEYS_ENV, ENCRYPTION_KEY_FILE_ENV, KEY_BYTES, parseKeyList, type EncryptionKey, type Keyring } from '../codec/encryption-keys';
import { blobStoreLocation } from '../blobs/open-blob-store';
import { redactedUrl } from '../storage/postgres';
import { parseLocation, type StoreLocation } from '../storage/location';
import { stateDir } from '../server/state-dir';
import { FileVault } from './file-vault';
import { PostgresVault } from './postgres-vault';
import { Vault } from './vault';
import { VaultConfigError } from './vault-store';

export const VAULT_ENV = 'DURABLE_AGENT_VAULT';
export const LOCAL_VAULT_KEY_FILE = 'vault.key';
const LOCAL_KEY_ID = 'local-vault';

export interface OpenVaultOptions {
  /** Where the keys come from: the payload codec's options (a worker passes its `codec`). Default: the environment. */
  codec?: CodecOptions;
  /** The environment the fallback and the settings are read from. Default process.env. */
  env?: NodeJS.ProcessEnv;
}

export type VaultLocation = StoreLocation;

/** `<state dir>/vault`: DURABLE_AGENT_HOME (in `env`), else ./.durable-agent (server/state-dir.ts). */
export function defaultVaultDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(env === process.env ? stateDir() : path.resolve(env.DURABLE_AGENT_HOME || path.join(process.cwd(), '.durable-agent')), 'vault');
}

export function vaultLocation(env: NodeJS.ProcessEnv = process.env): VaultLocation {
  return parseLocation(env[VAULT_ENV], {
    what: 'vault',
    env: VAULT_ENV,
    byDefault: () => {
      const blobs = blobStoreLocation(env.DURABLE_AGENT_BLOB_STORE);
      return blobs.kind === 'postgres' ? blobs : { kind: 'folder', dir: defaultVaultDir(env) };
    },
    error: (message) => new VaultConfigError(message),
  });
}

export function openVault(options: OpenVaultOptions = {}): Vault {
  const env = options.env ?? options.codec?.env ?? process.env;
  const location = vaultLocation(env);
  const project = encryptionKeyring({ ...options.codec, env });
  if (location.kind === 'postgres') {
    if (!project) {
      throw new VaultConfigError(
        `the PostgreSQL vault (${redactedUrl(location.url)}) encrypts values with the project's keys: set ${ENCRYPTION_KEYS_ENV} or ${ENCRYPTION_KEY_FILE_ENV} (the same on every worker and CLI)`,
      );
    }
    return new Vault(new PostgresVault({ url: location.url, keyring: project }), env);
  }
  return new Vault(new FileVault(location.dir, fileVaultKeyring(location.dir, project)), env);
}

/** The project's keys, with the folder's own key for decryption when it has one; without project keys, the folder's own key (made now if missing). */
export function fileVaultKeyring(dir: string, project: Keyring | undefined): Keyring {
  const file = path.join(dir, LOCAL_VAULT_KEY_FILE);
  let local = readLocalKey(file);
  if (!project) {
    local ??= makeLocalKey(dir, file);
    return createKeyring([local], undefined, file);
  }
  if (!local || project.byId.has(local.id)) return project;
  return createKeyring([{ id: project.current.id, key: project.current.key }, ...[...project.byId].filter(([id]) => id !== project.current.id).map(([id, key]) => ({ id, key })), local]);
}

function readLocalKey(file: string): EncryptionKey | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new VaultConfigError(`cannot read the vault's key ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const keys = parseKeyList(text, file);
  if (keys.length !== 1) throw new VaultConfigError(`the vault's key file ${file} must hold exactly one KEY_ID:BASE64 line`);
  return keys[0]!;
}

function makeLocalKey(dir: string, file: string): EncryptionKey {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const key = { id: LOCAL_KEY_ID, key: randomBytes(KEY_BYTES).toString('base64') };
  try {
    const fd = openSync(file, 'wx', 0o600);
    writeSync(fd, `# The key of the vault in this folder (no DURABLE_AGENT_ENCRYPTION_KEYS were set). Keep it with the vault; never commit it.\n${key.id}:${key.key}\n`);
    closeSync(fd);
    return key;
  } catch (err) {
    // Another process made it first: use theirs.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return readLocalKey(file)!;
    throw new VaultConfigError(`cannot write the vault's key ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}
