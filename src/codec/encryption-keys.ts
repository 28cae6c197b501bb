/**
 * Encryption keys: where they come from and what makes one valid. A keyring holds every key a
 * process may decrypt with and names the one it encrypts with (the current key), so keys rotate
 * without re-encrypting history: add a new key in front, keep the old ones until no history needs them.
 *
 * Sources, in this order (the first key named is the current one):
 * - `DURABLE_AGENT_ENCRYPTION_KEYS="kid:BASE64,kid2:BASE64"` (comma or newline separated);
 * - `DURABLE_AGENT_ENCRYPTION_KEY_FILE=/path`: one `kid:BASE64` per line, `#` comments.
 * Both may be set (e.g. the current key in the environment, retired ones in a file).
 *
 * Error messages name the key id and the problem, never the key material.
 */
import { readFileSync } from 'node:fs';
import { DurableAgentError } from '../errors/durable-agent-error';

export const ENCRYPTION_KEYS_ENV = 'DURABLE_AGENT_ENCRYPTION_KEYS';
export const ENCRYPTION_KEY_FILE_ENV = 'DURABLE_AGENT_ENCRYPTION_KEY_FILE';
/** AES-256 takes exactly 32 bytes of key. */
export const KEY_BYTES = 32;
/** Key ids travel in every payload's metadata: short, and free of the separators used above. */
const KEY_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const BASE64 = /^(?:[A-Za-z0-9+/]+={0,2}|[A-Za-z0-9_-]+={0,2})$/;
export const KEY_HINT = 'generate one with `openssl rand -base64 32` or `node -e "console.log(crypto.randomBytes(32).toString(\'base64\'))"`';

export interface EncryptionKey {
  /** Written into each payload it encrypts (`encryption-key-id`), so a reader picks the right key. */
  id: string;
  /** 32 bytes, or their base64 text. */
  key: Uint8Array | string;
}

/** Raised for a key or key list that cannot be used; the message says which and why. */
export class EncryptionKeyError extends DurableAgentError {
  readonly code = 'encryption_key_invalid';
}

export interface Keyring {
  /** The key new payloads are encrypted with. */
  current: { id: string; key: Buffer };
  /** Every key that may decrypt, the current one included. */
  byId: ReadonlyMap<string, Buffer>;
}

/** Checks ids and sizes; the first key (or `currentKeyId`) becomes the current one. */
export function createKeyring(keys: readonly EncryptionKey[], currentKeyId?: string, source = 'encryption keys'): Keyring {
  if (keys.length === 0) throw new EncryptionKeyError(`${source}: no keys given`);
  const byId = new Map<string, Buffer>();
  for (const [i, entry] of keys.entries()) {
    const where = `${source}, key ${i + 1}`;
    if (typeof entry?.id !== 'string' || !KEY_ID.test(entry.id)) {
      throw new EncryptionKeyError(`${where}: the key id ${JSON.stringify(entry?.id)} is invalid; use 1-64 letters, digits, '.', '_' or '-' (e.g. "2026-01")`);
    }
    const key = keyBytes(entry.key, `${where} ("${entry.id}")`);
    const seen = byId.get(entry.id);
    if (seen && !seen.equals(key)) throw new EncryptionKeyError(`${where}: the key id "${entry.id}" is given twice with different keys`);
    byId.set(entry.id, key);
  }
  const id = currentKeyId ?? keys[0]!.id;
  const key = byId.get(id);
  if (!key) throw new EncryptionKeyError(`${source}: the current key id "${id}" is not among the keys (${[...byId.keys()].join(', ')})`);
  return { current: { id, key }, byId };
}

function keyBytes(key: Uint8Array | string, where: string): Buffer {
  let bytes: Buffer;
  if (typeof key === 'string') {
    const text = key.trim();
    if (!text || !BASE64.test(text)) throw new EncryptionKeyError(`${where}: the key is not base64 text; ${KEY_HINT}`);
    bytes = Buffer.from(text, 'base64');
  } else if (key instanceof Uint8Array) {
    bytes = Buffer.from(key);
  } else {
    throw new EncryptionKeyError(`${where}: the key must be 32 bytes or their base64 text`);
  }
  if (bytes.length !== KEY_BYTES) {
    throw new EncryptionKeyError(`${where}: the key is ${bytes.length} bytes; AES-256-GCM needs exactly ${KEY_BYTES} (44 base64 characters); ${KEY_HINT}`);
  }
  return bytes;
}

/** `kid:BASE64` entries separated by commas or newlines; blank entries and `#` comment lines are skipped. */
export function parseKeyList(text: string, source: string): EncryptionKey[] {
  const entries = text
    .split('\n')
    .filter((line) => !line.trim().startsWith('#'))
    .flatMap((line) => line.split(','))
    .map((entry) => entry.trim())
    .filter(Boolean);
  return entries.map((entry, i) => {
    const colon = entry.indexOf(':');
    if (colon <= 0) throw new EncryptionKeyError(`${source}, entry ${i + 1}: expected KEY_ID:BASE64_KEY (e.g. "k1:<44 base64 characters>")`);
    return { id: entry.slice(0, colon).trim(), key: entry.slice(colon + 1).trim() };
  });
}

/** The keys configured in `env`, in order (the first is current); none when neither variable is set. */
export function keysFromEnv(env: NodeJS.ProcessEnv): EncryptionKey[] {
  const keys: EncryptionKey[] = [];
  const inline = env[ENCRYPTION_KEYS_ENV];
  if (inline?.trim()) keys.push(...parseKeyList(inline, ENCRYPTION_KEYS_ENV));
  const file = env[ENCRYPTION_KEY_FILE_ENV]?.trim();
  if (file) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      throw new EncryptionKeyError(`${ENCRYPTION_KEY_FILE_ENV}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
    const fromFile = parseKeyList(text, `${ENCRYPTION_KEY_FILE_ENV} ${file}`);
    if (fromFile.length === 0) throw new EncryptionKeyError(`${ENCRYPTION_KEY_FILE_ENV}: ${file} holds no keys`);
    keys.push(...fromFile);
  }
  return keys;
}
