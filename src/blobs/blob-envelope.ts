/**
 * How an encrypted blob is laid out at rest, and its errors. AES-256-GCM (storage/aead.ts, the one
 * AEAD of the project) with the payload codec's keyring (codec/encryption-keys.ts), so one key
 * configuration covers history and blobs:
 *
 *   0xFF 'D' 'A' 'B' | version 1 | key id length (1 byte) | key id (ASCII) | nonce (12) | ciphertext | tag (16)
 *
 * 0xFF never occurs in UTF-8, and plain blobs are the UTF-8 bytes of their text: a body that starts
 * with the magic is sealed, anything else is a plain blob (written before encryption was turned on,
 * or put there by someone else: EncryptedBlobStore refuses it unless told to read plain blobs).
 *
 * The associated data is the header plus the blob's scope and id: a body relabelled with another key
 * id, moved to another id or another task's scope, cut or altered fails authentication.
 */
import { ENCRYPTION_KEYS_ENV, ENCRYPTION_KEY_FILE_ENV, type Keyring } from '../codec/encryption-keys';
import { verifiedText } from './blob-id';
import { DurableAgentError } from '../errors/durable-agent-error';
import type { BlobBodyStore } from './blob-store';
import { AEAD_OVERHEAD_BYTES, aeadOpen, aeadSeal } from '../storage/aead';

const MAGIC = Buffer.from([0xff, 0x44, 0x41, 0x42]);
const VERSION = 1;

/** A sealed blob whose key id no configured key has. */
export class BlobKeyNotFoundError extends DurableAgentError {
  readonly code = 'blob_key_not_found';
  constructor(
    readonly scope: string,
    readonly id: string,
    readonly keyId: string,
    known: readonly string[],
  ) {
    super(
      known.length
        ? `blob ${id} of ${scope} is encrypted with key id "${keyId}", which is not configured (known key ids: ${known.join(', ')}). ` +
            `Add that key to ${ENCRYPTION_KEYS_ENV} or ${ENCRYPTION_KEY_FILE_ENV} (after the current one) to read it.`
        : `blob ${id} of ${scope} is encrypted with key id "${keyId}", but no encryption keys are configured. ` + `Set ${ENCRYPTION_KEYS_ENV} or ${ENCRYPTION_KEY_FILE_ENV} with that key to read it.`,
    );
  }
}

/** A sealed blob that does not open: altered, truncated, moved to another id or scope, or not ours. */
export class BlobDecryptionError extends DurableAgentError {
  readonly code = 'blob_unreadable';
}

export function isSealed(body: Uint8Array): boolean {
  return body.length >= MAGIC.length && MAGIC.equals(body.subarray(0, MAGIC.length));
}

/** Encrypts `text` with the keyring's current key, bound to its scope and id. */
export function seal(keyring: Keyring, scope: string, id: string, text: string): Buffer {
  const { id: keyId, key } = keyring.current;
  const kid = Buffer.from(keyId, 'ascii');
  const header = Buffer.concat([MAGIC, Buffer.from([VERSION, kid.length]), kid]);
  return Buffer.concat([header, aeadSeal(key, text, associatedData(header, scope, id))]);
}

/** The key id a sealed body names (checked against the header's own bounds). */
export function sealedKeyId(body: Buffer, scope: string, id: string): { keyId: string; headerBytes: number } {
  const version = body[MAGIC.length];
  if (version !== VERSION) throw new BlobDecryptionError(`blob ${id} of ${scope} is sealed with format version ${version ?? '(none)'}; this version reads ${VERSION}`);
  const kidLength = body[MAGIC.length + 1] ?? 0;
  const headerBytes = MAGIC.length + 2 + kidLength;
  if (kidLength === 0 || body.length < headerBytes + AEAD_OVERHEAD_BYTES) {
    throw new BlobDecryptionError(`blob ${id} of ${scope} is encrypted but truncated (${body.length} bytes)`);
  }
  return { keyId: body.subarray(MAGIC.length + 2, headerBytes).toString('latin1'), headerBytes };
}

/** The plain bytes of a sealed body (the caller checks them against the id). Throws BlobKeyNotFoundError or BlobDecryptionError. */
export function open(keyring: Keyring | undefined, body: Buffer, scope: string, id: string): Buffer {
  const { keyId, headerBytes } = sealedKeyId(body, scope, id);
  const key = keyring?.byId.get(keyId);
  if (!key) throw new BlobKeyNotFoundError(scope, id, keyId, [...(keyring?.byId.keys() ?? [])]);
  const plain = aeadOpen(key, body.subarray(headerBytes), associatedData(body.subarray(0, headerBytes), scope, id));
  if (plain) return plain;
  throw new BlobDecryptionError(`blob ${id} of ${scope} failed authentication: it was altered, corrupted or moved from another blob, or key "${keyId}" is not the key it was written with`);
}

/**
 * What a store without keys returns for a body: its text once checked against the id, or, for a
 * sealed body, an error naming the key id (never the ciphertext read as text).
 */
export function plainTextOf(body: Buffer, scope: string, id: string, where: string): string {
  if (isSealed(body)) throw new BlobKeyNotFoundError(scope, id, sealedKeyId(body, scope, id).keyId, []);
  return verifiedText(body, scope, id, where);
}

/** The text of a record (createRecord) read back from a store without keys: a sealed body names the key it needs. */
export function plainRecordText(body: Buffer, scope: string, name: string): string {
  if (isSealed(body)) throw new BlobKeyNotFoundError(scope, recordSealId(name), sealedKeyId(body, scope, recordSealId(name)).keyId, []);
  return body.toString('utf8');
}

/** A store of bodies without keys, read as text: what both plain stores' createRecord and records are. */
export const plainRecords = (store: Pick<BlobBodyStore, 'createRecordBody' | 'recordBodies'>) => ({
  create: (scope: string, name: string, text: string): Promise<boolean> => store.createRecordBody(scope, name, Buffer.from(text, 'utf8')),
  read: async (scope: string): Promise<{ name: string; text: string }[]> => (await store.recordBodies(scope)).map(({ name, body }) => ({ name, text: plainRecordText(body, scope, name) })),
});

/** What a record is sealed under in place of a content id: its name, marked so it can never pass for one. */
export function recordSealId(name: string): string {
  return `record:${name}`;
}

function associatedData(header: Uint8Array, scope: string, id: string): Buffer {
  return Buffer.concat([header, Buffer.from(`\0${scope}\0${id}`, 'utf8')]);
}
