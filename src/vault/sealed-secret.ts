/**
 * A vault value at rest: AES-256-GCM with the project's keyring (codec/encryption-keys.ts, the same
 * keys as history and blobs), under a fresh 96-bit nonce, bound by its associated data to the
 * entry's name, person and version: a value copied to another entry, another person or replayed
 * at another version fails authentication.
 *
 * Text form (what the file and the table hold): `v1.<key id>.<base64 nonce|ciphertext|tag>`.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Keyring } from '../codec/encryption-keys';
import { ENCRYPTION_KEYS_ENV, ENCRYPTION_KEY_FILE_ENV } from '../codec/encryption-keys';
import { entryLabel, VaultUnreadableError } from './vault-store';

const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const FORMAT = 'v1';

function associatedData(keyId: string, name: string, person: string | undefined, version: number): Buffer {
  return Buffer.from(`durable-agent-vault\0${FORMAT}\0${keyId}\0${name}\0${person ?? ''}\0${version}`, 'utf8');
}

export function sealSecret(keyring: Keyring, name: string, person: string | undefined, version: number, value: string): string {
  const { id, key } = keyring.current;
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(associatedData(id, name, person, version));
  const body = Buffer.concat([nonce, cipher.update(value, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `${FORMAT}.${id}.${body.toString('base64')}`;
}

export function openSecret(keyring: Keyring, name: string, person: string | undefined, version: number, sealed: string): string {
  const label = entryLabel(name, person);
  const [format, keyId, data] = sealed.split('.');
  if (format !== FORMAT || !keyId || data === undefined) throw new VaultUnreadableError(`vault entry ${label} is not in a format this version reads`);
  const key = keyring.byId.get(keyId);
  if (!key) {
    throw new VaultUnreadableError(
      `vault entry ${label} is encrypted with key id "${keyId}", which is not configured (known: ${[...keyring.byId.keys()].join(', ') || 'none'}); add it to ${ENCRYPTION_KEYS_ENV} or ${ENCRYPTION_KEY_FILE_ENV}`,
    );
  }
  const body = Buffer.from(data, 'base64');
  if (body.length < NONCE_BYTES + TAG_BYTES) throw new VaultUnreadableError(`vault entry ${label} is truncated`);
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, body.subarray(0, NONCE_BYTES));
    decipher.setAAD(associatedData(keyId, name, person, version));
    decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
    return Buffer.concat([decipher.update(body.subarray(NONCE_BYTES, body.length - TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    throw new VaultUnreadableError(`vault entry ${label} failed authentication: it was altered or copied from another entry, or key "${keyId}" is not the key it was written with`);
  }
}
