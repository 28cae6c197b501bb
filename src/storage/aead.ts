/**
 * AES-256-GCM, once for the whole project: the payload codec, the blob envelope (and the live output
 * lines and records sealed with it) and the vault's values all seal with `aeadSeal` and open with
 * `aeadOpen`. Each keeps its own framing around the sealed bytes (a header, a text form, payload
 * metadata: formats already at rest) and its own associated data, which binds the key id and the
 * place a value belongs to, so a sealed value relabelled or moved fails authentication.
 *
 * Sealed bytes: nonce (12, fresh and random for every seal) | ciphertext | tag (16).
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

export const AEAD_CIPHER = 'AES-256-GCM';
export const NONCE_BYTES = 12;
export const TAG_BYTES = 16;
/** What sealing adds to the plain bytes: the nonce and the tag. */
export const AEAD_OVERHEAD_BYTES = NONCE_BYTES + TAG_BYTES;

/** nonce | ciphertext | tag of `plain` under `key` (32 bytes), bound to `associatedData`. */
export function aeadSeal(key: Buffer, plain: Uint8Array | string, associatedData: Uint8Array): Buffer {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(associatedData);
  const head = typeof plain === 'string' ? cipher.update(plain, 'utf8') : cipher.update(plain);
  return Buffer.concat([nonce, head, cipher.final(), cipher.getAuthTag()]);
}

/** The plain bytes, or undefined when `sealed` is too short to be sealed or fails authentication (altered, moved, another key): the caller names the error. */
export function aeadOpen(key: Buffer, sealed: Uint8Array, associatedData: Uint8Array): Buffer | undefined {
  if (sealed.length < AEAD_OVERHEAD_BYTES) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, NONCE_BYTES));
    decipher.setAAD(associatedData);
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
    return Buffer.concat([decipher.update(sealed.subarray(NONCE_BYTES, sealed.length - TAG_BYTES)), decipher.final()]);
  } catch {
    return undefined;
  }
}
