/**
 * AES-256-GCM payload encryption (storage/aead.ts) with key ids, so keys rotate without touching history.
 *
 * Encode serialises the whole payload (its metadata too: the original encoding says something about
 * the content) and encrypts it with the current key under a fresh random 96-bit nonce. The result is
 * a payload marked `encoding: binary/encrypted`, `encryption-key-id: <kid>` and
 * `encryption-cipher: AES-256-GCM`, whose data is nonce (12 bytes) | ciphertext | tag (16 bytes).
 * The key id and cipher are bound to the ciphertext as associated data: relabelling a payload with
 * another key id fails authentication like any other tampering.
 *
 * Decode picks the key by the payload's key id, so payloads written under a retired key still
 * decrypt while that key is configured. A payload without the encryption marks (history written
 * before encryption was turned on, or the committed replay histories) passes through untouched.
 *
 * A codec built without keys encrypts nothing and refuses, with a message naming the key id, to
 * decrypt: the same as any keyring missing the id.
 */
import type { Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { ENCRYPTION_KEYS_ENV, ENCRYPTION_KEY_FILE_ENV, type Keyring } from './encryption-keys';
import { DurableAgentError } from '../errors/durable-agent-error';
import { AEAD_CIPHER, AEAD_OVERHEAD_BYTES, aeadOpen, aeadSeal } from '../storage/aead';

export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const KEY_ID_METADATA = 'encryption-key-id';
export const CIPHER_METADATA = 'encryption-cipher';
export const CIPHER = AEAD_CIPHER;
/** What encryption adds to a payload's data: the nonce and the tag (storage/aead.ts). */
export const ENCRYPTION_OVERHEAD_BYTES = AEAD_OVERHEAD_BYTES;

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const ENCRYPTED = encoder.encode(ENCRYPTED_ENCODING);
const CIPHER_BYTES = encoder.encode(CIPHER);
const PayloadProto = temporal.api.common.v1.Payload;

/** A payload marked as encrypted whose key id no configured key has. */
export class EncryptionKeyNotFoundError extends DurableAgentError {
  readonly code = 'encryption_key_not_found';
  constructor(
    readonly keyId: string,
    known: readonly string[],
  ) {
    super(
      known.length
        ? `a payload is encrypted with key id "${keyId}", which is not configured (known key ids: ${known.join(', ')}). ` +
            `Add that key to ${ENCRYPTION_KEYS_ENV} or ${ENCRYPTION_KEY_FILE_ENV} (after the current one) to read it.`
        : `a payload is encrypted with key id "${keyId}", but no encryption keys are configured. ` + `Set ${ENCRYPTION_KEYS_ENV} or ${ENCRYPTION_KEY_FILE_ENV} with that key to read it.`,
    );
  }
}

/** A payload marked as encrypted that does not decrypt: altered, truncated, or not ours. */
export class PayloadDecryptionError extends DurableAgentError {
  readonly code = 'payload_undecryptable';
}

export class EncryptionCodec implements PayloadCodec {
  /** `undefined`: no keys; the codec only recognises encrypted payloads, to refuse them clearly. */
  constructor(readonly keyring?: Keyring) {}

  get currentKeyId(): string | undefined {
    return this.keyring?.current.id;
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((p) => this.encodeOne(p));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((p) => this.decodeOne(p));
  }

  private encodeOne(payload: Payload): Payload {
    if (!this.keyring || isEncrypted(payload)) return payload;
    const { id, key } = this.keyring.current;
    const data = aeadSeal(key, PayloadProto.encode(payload).finish(), associatedData(id));
    return {
      metadata: { encoding: ENCRYPTED, [KEY_ID_METADATA]: encoder.encode(id), [CIPHER_METADATA]: CIPHER_BYTES },
      data: new Uint8Array(data.buffer, data.byteOffset, data.length),
    };
  }

  private decodeOne(payload: Payload): Payload {
    if (!isEncrypted(payload)) return payload;
    const rawId = payload.metadata?.[KEY_ID_METADATA];
    if (!rawId) throw new PayloadDecryptionError(`a payload marked ${ENCRYPTED_ENCODING} has no ${KEY_ID_METADATA}: it was not written by durable-agent's encryption codec`);
    const id = decoder.decode(rawId);
    const cipherName = payload.metadata?.[CIPHER_METADATA];
    if (cipherName && decoder.decode(cipherName) !== CIPHER) {
      throw new PayloadDecryptionError(`a payload encrypted with key id "${id}" uses cipher "${decoder.decode(cipherName)}"; this codec reads ${CIPHER} only`);
    }
    const key = this.keyring?.byId.get(id);
    if (!key) throw new EncryptionKeyNotFoundError(id, [...(this.keyring?.byId.keys() ?? [])]);
    const data = payload.data ?? new Uint8Array();
    if (data.length < ENCRYPTION_OVERHEAD_BYTES) throw new PayloadDecryptionError(`a payload encrypted with key id "${id}" is truncated (${data.length} bytes)`);
    const plain = aeadOpen(key, data, associatedData(id));
    if (!plain) throw new PayloadDecryptionError(`a payload encrypted with key id "${id}" failed authentication: it was altered or corrupted, or key "${id}" is not the key it was written with`);
    const inner = PayloadProto.decode(plain);
    return { metadata: inner.metadata, data: inner.data };
  }
}

/** Compared as bytes: asked of every payload of every activation, most of them not encrypted. */
function isEncrypted(payload: Payload): boolean {
  const encoding = payload.metadata?.encoding;
  if (!encoding || encoding.length !== ENCRYPTED.length) return false;
  for (let i = 0; i < ENCRYPTED.length; i++) if (encoding[i] !== ENCRYPTED[i]) return false;
  return true;
}

/** Binds the cipher and key id to the ciphertext. */
function associatedData(keyId: string): Buffer {
  return Buffer.from(`durable-agent/${CIPHER}/${keyId}`, 'utf8');
}
