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
 * Rotation: bodies name their key id; any configured key decrypts, the current one encrypts.
 *
 * Every read is checked against its id (the sha256 of the plain text). A plain body is refused by
 * default: with keys configured every blob this store writes is sealed, so a plain one was put
 * there by someone who can write the store, or predates encryption. `plainBlobs: 'read'` reads the
 * latter during a migration (still checked against the id, so only the exact original text reads).
 * A blob already stored in plain text stays so when the same text is put again (same id): purge
 * removes it with its task.
 */
import type { Keyring } from '../codec/encryption-keys';
import { BlobTamperedError, type BlobBodyStore, type BlobStore } from './blob-store';
import { blobIdOf, verifiedText } from './blob-id';
import { isSealed, open, recordSealId, seal } from './blob-envelope';

/** `refuse` (default): a plain body is BlobTamperedError. `read`: plain bodies that match their id are read (blobs from before encryption). */
export type PlainBlobs = 'refuse' | 'read';

export interface EncryptedBlobStoreOptions {
  plainBlobs?: PlainBlobs;
}

export class EncryptedBlobStore implements BlobStore {
  readonly description: string;
  readonly plainBlobs: PlainBlobs;

  constructor(
    readonly inner: BlobBodyStore,
    readonly keyring: Keyring,
    options: EncryptedBlobStoreOptions = {},
  ) {
    this.plainBlobs = options.plainBlobs ?? 'refuse';
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
    if (isSealed(body)) return verifiedText(open(this.keyring, body, scope, id), scope, id, this.inner.description);
    if (this.plainBlobs === 'read') return verifiedText(body, scope, id, this.inner.description);
    throw new BlobTamperedError(
      scope,
      id,
      this.inner.description,
      'it is stored unencrypted while encryption keys are configured (blobs written before encryption was turned on read only with DURABLE_AGENT_BLOB_PLAIN=read)',
    );
  }

  createRecord(scope: string, name: string, text: string): Promise<boolean> {
    return this.inner.createRecordBody(scope, name, seal(this.keyring, scope, recordSealId(name), text));
  }

  async records(scope: string): Promise<{ name: string; text: string }[]> {
    return (await this.inner.recordBodies(scope)).map(({ name, body }) => {
      if (isSealed(body)) return { name, text: open(this.keyring, body, scope, recordSealId(name)).toString('utf8') };
      if (this.plainBlobs === 'read') return { name, text: body.toString('utf8') };
      throw new BlobTamperedError(scope, recordSealId(name), this.inner.description, 'it is stored unencrypted while encryption keys are configured');
    });
  }

  purge(scopePrefix: string): Promise<number> {
    return this.inner.purge(scopePrefix);
  }

  purgeScope(scope: string): Promise<number> {
    return this.inner.purgeScope(scope);
  }

  scopes(): Promise<string[]> {
    return this.inner.scopes();
  }

  ids(scope: string): Promise<string[]> {
    return this.inner.ids(scope);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
