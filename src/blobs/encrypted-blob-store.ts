/**
 * Blob content encrypted at rest (AES-256-GCM, see blob-envelope.ts) with the payload codec's
 * keyring: with encryption on, the claim check must not keep in plain text what history no longer
 * shows in plain text.
 *
 * Ids stay the sha256 of the plain text. They are computed by workers and recorded in history and
 * workflow state (markers, recall refs), so changing them would break replay of every task written
 * before; the price is that someone who reads the store or the history can tell when two blobs hold
 * the same text, and can confirm a guess of a whole blob's exact text (docs/encryption.md).
 *
 * Rotation: bodies name their key id; any configured key decrypts, the current one encrypts. Blobs
 * written before encryption was turned on are plain UTF-8 and are read as they are. A blob already
 * stored in plain text stays so when the same text is put again (same id): purge removes it with its task.
 */
import type { Keyring } from '../codec/encryption-keys';
import type { BlobBodyStore, BlobStore } from './blob-store';
import { blobIdOf } from './blob-id';
import { isSealed, open, seal } from './blob-envelope';

export class EncryptedBlobStore implements BlobStore {
  readonly description: string;

  constructor(
    readonly inner: BlobBodyStore,
    readonly keyring: Keyring,
  ) {
    this.description = `${inner.description}, encrypted (key ${keyring.current.id})`;
  }

  async put(scope: string, text: string): Promise<string> {
    if (typeof text !== 'string') throw new TypeError('a blob is a string');
    const id = blobIdOf(text);
    await this.inner.putBody(scope, id, seal(this.keyring, scope, id, text));
    return id;
  }

  async get(scope: string, id: string): Promise<string> {
    const body = await this.inner.getBody(scope, id);
    return isSealed(body) ? open(this.keyring, body, scope, id) : body.toString('utf8');
  }

  purge(scopePrefix: string): Promise<number> {
    return this.inner.purge(scopePrefix);
  }

  scopes(): Promise<string[]> {
    return this.inner.scopes();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
