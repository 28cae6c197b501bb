/**
 * A vault value at rest: AES-256-GCM (storage/aead.ts) with the project's keyring (codec/encryption-keys.ts, the same
 * keys as history and blobs), under a fresh 96-bit nonce, bound by its associated data to the
 * entry's name, person and version: a value copied to another entry, another person or replayed
 * at another version fails authentication.
 *
 * Text form (what the file and the table hold): `v1.<key id>.<base64 nonce|ciphertext|tag>`.
 */
import type { Keyring } from '../codec/encryption-keys';
import { ENCRYPTION_KEYS_ENV, ENCRYPTION_KEY_FILE_ENV } from '../codec/encryption-keys';
import { AEAD_OVERHEAD_BYTES, aeadOpen, aeadSeal } from '../storage/aead';
import { entryLabel, VaultUnreadableError } from './vault-store';

const FORMAT = 'v1';

function associatedData(keyId: string, name: string, person: string | undefined, version: number): Buffer {
  return Buffer.from(`durable-agent-vault\0${FORMAT}\0${keyId}\0${name}\0${person ?? ''}\0${version}`, 'utf8');
}

export function sealSecret(keyring: Keyring, name: string, person: string | undefined, version: number, value: string): string {
  const { id, key } = keyring.current;
  const body = aeadSeal(key, value, associatedData(id, name, person, version));
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
  if (body.length < AEAD_OVERHEAD_BYTES) throw new VaultUnreadableError(`vault entry ${label} is truncated`);
  const plain = aeadOpen(key, body, associatedData(keyId, name, person, version));
  if (!plain) throw new VaultUnreadableError(`vault entry ${label} failed authentication: it was altered or copied from another entry, or key "${keyId}" is not the key it was written with`);
  return plain.toString('utf8');
}
