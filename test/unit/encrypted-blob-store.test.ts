/**
 * Blobs encrypted at rest: the files a real LocalBlobStore writes are read back byte for byte, so
 * every check below looks at what an attacker with the folder would see.
 */
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BlobDecryptionError, BlobKeyNotFoundError, BlobTamperedError, CachedBlobStore, EncryptedBlobStore, LocalBlobStore, blobIdOf, openBlobStore } from '../../src/blobs';
import { seal, sealedKeyId } from '../../src/blobs/blob-envelope';
import { createKeyring, EncryptionKeyError } from '../../src/codec';
import { connectClient } from '../../src/cli/connect';
import { CliError, EXIT } from '../../src/cli/cli-error';

const SECRET = `BLOB-SECRET-${randomBytes(4).toString('hex')}`;
const SCOPE = 'task-1/run-1';
const k1 = randomBytes(32);
const k2 = randomBytes(32);
const ring = (...keys: [string, Buffer][]) => createKeyring(keys.map(([id, key]) => ({ id, key })));

const tmp = () => mkdtempSync(path.join(os.tmpdir(), 'encrypted-blobs-'));
/** Every blob file of a store's folder (one folder per scope). */
function blobFiles(root: string): string[] {
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /^[0-9a-f]{64}$/.test(e.name))
    .map((e) => path.join(e.parentPath, e.name));
}
const fileOf = (root: string, id: string) => blobFiles(root).find((f) => f.endsWith(id.slice('sha256:'.length)))!;
/** The key id in a stored body's header. */
const keyIdIn = (file: string) => sealedKeyId(readFileSync(file), SCOPE, 'id').keyId;

describe('EncryptedBlobStore', () => {
  test('round trip: the id is the sha256 of the plain text, the file holds none of it, and get returns the text', async () => {
    const root = tmp();
    const store = new EncryptedBlobStore(new LocalBlobStore(root), ring(['k1', k1]));
    const texts = [`${SECRET} `.repeat(2_000), `{"result":"${SECRET}","nul":"a\u0000b","é":"日本"}`, ''];
    for (const text of texts) {
      const id = await store.put(SCOPE, text);
      expect(id).toBe(blobIdOf(text));
      expect(await store.get(SCOPE, id)).toBe(text);
      // Put again (another worker, a retried activity): same id, still readable.
      expect(await store.put(SCOPE, text)).toBe(id);
      expect(await store.get(SCOPE, id)).toBe(text);
    }
    const files = blobFiles(root);
    expect(files).toHaveLength(texts.length);
    for (const file of files) {
      const bytes = readFileSync(file);
      expect(bytes.includes(SECRET)).toBe(false);
      expect(bytes.includes('日本', 0, 'utf8')).toBe(false);
      // The key id is in the clear (it says which key to use), the magic marks the body as sealed.
      expect(bytes[0]).toBe(0xff);
      expect(keyIdIn(file)).toBe('k1');
    }
  });

  test('the same text in two scopes is sealed differently (fresh nonce, scope bound)', async () => {
    const root = tmp();
    const store = new EncryptedBlobStore(new LocalBlobStore(root), ring(['k1', k1]));
    const id = await store.put('a/1', SECRET);
    expect(await store.put('b/1', SECRET)).toBe(id);
    const [a, b] = blobFiles(root).map((f) => readFileSync(f));
    expect(a!.equals(b!)).toBe(false);
  });

  test('rotation: blobs written under the old key still read after a new current key is put in front; new blobs use the new key', async () => {
    const root = tmp();
    const old = new EncryptedBlobStore(new LocalBlobStore(root), ring(['k1', k1]));
    const oldId = await old.put(SCOPE, `old ${SECRET}`);
    const rotated = new EncryptedBlobStore(new LocalBlobStore(root), ring(['k2', k2], ['k1', k1]));
    expect(await rotated.get(SCOPE, oldId)).toBe(`old ${SECRET}`);
    const newId = await rotated.put(SCOPE, `new ${SECRET}`);
    expect(keyIdIn(fileOf(root, newId))).toBe('k2');
    expect(keyIdIn(fileOf(root, oldId))).toBe('k1');
    // The old key alone cannot read what the new one wrote, and says which key it lacks.
    await expect(old.get(SCOPE, newId)).rejects.toThrow(BlobKeyNotFoundError);
    await expect(old.get(SCOPE, newId)).rejects.toThrow(/encrypted with key id "k2", which is not configured \(known key ids: k1\)/);
  });

  test('a key id that is not configured is a BlobKeyNotFoundError naming it, the blob, and the variables to set', async () => {
    const root = tmp();
    const id = await new EncryptedBlobStore(new LocalBlobStore(root), ring(['gone-2025', k1])).put(SCOPE, SECRET);
    const err = await new EncryptedBlobStore(new LocalBlobStore(root), ring(['k2', k2])).get(SCOPE, id).catch((e: Error) => e);
    expect(err).toBeInstanceOf(BlobKeyNotFoundError);
    expect(err).toMatchObject({ keyId: 'gone-2025', id, scope: SCOPE });
    expect((err as Error).message).toContain(`blob ${id} of ${SCOPE} is encrypted with key id "gone-2025"`);
    expect((err as Error).message).toContain('DURABLE_AGENT_ENCRYPTION_KEYS');
    expect((err as Error).message).not.toContain(k1.toString('base64'));
  });

  test('a store without keys refuses a sealed blob with the key id instead of returning ciphertext as text', async () => {
    const root = tmp();
    const id = await new EncryptedBlobStore(new LocalBlobStore(root), ring(['k1', k1])).put(SCOPE, SECRET);
    await expect(new LocalBlobStore(root).get(SCOPE, id)).rejects.toThrow(/encrypted with key id "k1", but no encryption keys are configured/);
  });

  describe('tampering fails authentication (BlobDecryptionError), never returns other text', () => {
    let root: string;
    let store: EncryptedBlobStore;
    let id: string;
    let file: string;
    let original: Buffer;
    beforeEach(async () => {
      root = tmp();
      store = new EncryptedBlobStore(new LocalBlobStore(root), ring(['k1', k1], ['k2', k2]));
      id = await store.put(SCOPE, `${SECRET} `.repeat(10));
      file = fileOf(root, id);
      original = readFileSync(file);
    });
    const write = (bytes: Buffer) => writeFileSync(file, bytes);

    test('a flipped bit in the ciphertext', async () => {
      const bytes = Buffer.from(original);
      bytes[bytes.length - 30]! ^= 0x01;
      write(bytes);
      await expect(store.get(SCOPE, id)).rejects.toThrow(BlobDecryptionError);
      await expect(store.get(SCOPE, id)).rejects.toThrow(/failed authentication/);
    });

    test('a flipped bit in the tag, a cut tag, a body cut to its header', async () => {
      const flipped = Buffer.from(original);
      flipped[flipped.length - 1]! ^= 0x80;
      write(flipped);
      await expect(store.get(SCOPE, id)).rejects.toThrow(BlobDecryptionError);
      write(original.subarray(0, original.length - 16));
      await expect(store.get(SCOPE, id)).rejects.toThrow(BlobDecryptionError);
      write(original.subarray(0, 8));
      await expect(store.get(SCOPE, id)).rejects.toThrow(/truncated/);
    });

    test('the key id relabelled to another configured key', async () => {
      // k1 -> k2: same length, so only the label changes (the header's key id starts at byte 6).
      const at = original.indexOf('k1');
      expect(at).toBe(6);
      const relabelled = Buffer.from(original);
      relabelled.write('k2', at, 'latin1');
      write(relabelled);
      await expect(store.get(SCOPE, id)).rejects.toThrow(BlobDecryptionError);
    });

    test('a body moved to another id or another scope', async () => {
      const otherId = await store.put(SCOPE, 'other text');
      copyFileSync(file, fileOf(root, otherId));
      await expect(store.get(SCOPE, otherId)).rejects.toThrow(BlobDecryptionError);
      // The same text stored for another task: its body under this task's scope does not open.
      await store.put('task-2/run-1', `${SECRET} `.repeat(10));
      const other = blobFiles(root).find((f) => f !== file && f.endsWith(id.slice('sha256:'.length)))!;
      copyFileSync(other, file);
      await expect(store.get(SCOPE, id)).rejects.toThrow(BlobDecryptionError);
    });

    test('the right key id with the wrong key', async () => {
      const impostor = new EncryptedBlobStore(new LocalBlobStore(root), ring(['k1', randomBytes(32)]));
      await expect(impostor.get(SCOPE, id)).rejects.toThrow(/failed authentication/);
    });
  });

  test("a plain body where keys are configured is refused as tampered (BlobTamperedError naming the ref), never read as the task's content", async () => {
    const root = tmp();
    const store = new EncryptedBlobStore(new LocalBlobStore(root), ring(['k1', k1]));
    const approved = JSON.stringify({ to: 'ACME', amount: 120, memo: 'x'.repeat(3_000) });
    const id = await store.put(SCOPE, approved);
    // Someone with write access to the folder replaces the sealed body with plain text.
    writeFileSync(fileOf(root, id), JSON.stringify({ to: 'attacker', amount: 99_000, memo: 'x'.repeat(3_000) }));
    const swapped = await store.get(SCOPE, id).catch((e: Error) => e);
    expect(swapped).toBeInstanceOf(BlobTamperedError);
    expect(swapped).toMatchObject({ scope: SCOPE, id });
    expect((swapped as Error).message).toContain(id);
    expect((swapped as Error).message).toMatch(/stored unencrypted while encryption keys are configured/);
    // Even the original text, stored plain, is refused: with keys, this store writes only sealed bodies.
    writeFileSync(fileOf(root, id), approved);
    await expect(store.get(SCOPE, id)).rejects.toThrow(BlobTamperedError);
  });

  test('a body sealed with a configured key for this scope and id but holding other text is refused by the hash check', async () => {
    const root = tmp();
    const keyring = ring(['k1', k1]);
    const store = new EncryptedBlobStore(new LocalBlobStore(root), keyring);
    const id = await store.put(SCOPE, JSON.stringify({ to: 'ACME', amount: 120 }));
    writeFileSync(fileOf(root, id), seal(keyring, SCOPE, id, JSON.stringify({ to: 'attacker', amount: 99_000 })));
    const err = await store.get(SCOPE, id).catch((e: Error) => e);
    expect(err).toBeInstanceOf(BlobTamperedError);
    expect((err as Error).message).toMatch(new RegExp(`blob ${id} of ${SCOPE} .* its content hashes to sha256:[0-9a-f]{64}`));
  });

  test('plainBlobs: read (a migration) reads plain blobs written before encryption was turned on, still checked against their id; new ones are sealed', async () => {
    const root = tmp();
    const plainId = await new LocalBlobStore(root).put(SCOPE, `before ${SECRET}`);
    const store = new EncryptedBlobStore(new LocalBlobStore(root), ring(['k1', k1]), { plainBlobs: 'read' });
    expect(await store.get(SCOPE, plainId)).toBe(`before ${SECRET}`);
    const newId = await store.put(SCOPE, `after ${SECRET}`);
    expect(readFileSync(fileOf(root, newId)).includes(SECRET)).toBe(false);
    expect(await store.get(SCOPE, newId)).toBe(`after ${SECRET}`);
    // A plain body that is not the text its id names is refused in this mode too.
    writeFileSync(fileOf(root, plainId), `before ${SECRET} and something else`);
    await expect(store.get(SCOPE, plainId)).rejects.toThrow(/its content hashes to/);
    expect(await store.scopes()).toEqual([SCOPE]);
    expect(await store.purge('task-1/')).toBe(2);
  });
});

describe('openBlobStore with encryption', () => {
  const keys = [{ id: 'k1', key: k1 }];

  test('the codec options that encrypt payloads encrypt blobs; the LRU cache in front holds the plain text', async () => {
    const root = tmp();
    const store = openBlobStore(`file:${root}`, { cacheBytes: 1024 * 1024, codec: { encryption: { keys }, env: {} } });
    expect(store).toBeInstanceOf(CachedBlobStore);
    expect((store as CachedBlobStore).inner).toBeInstanceOf(EncryptedBlobStore);
    expect(store.description).toContain('encrypted (key k1)');
    const id = await store.put(SCOPE, SECRET);
    expect(readFileSync(fileOf(root, id)).includes(SECRET)).toBe(false);
    expect(await store.get(SCOPE, id)).toBe(SECRET);
    expect((store as CachedBlobStore).cachedBytes).toBeGreaterThan(0);
    await store.close();
  });

  test('keys from DURABLE_AGENT_ENCRYPTION_KEYS encrypt; encryption: false or no keys leave blobs plain', async () => {
    const root = tmp();
    const env = { DURABLE_AGENT_ENCRYPTION_KEYS: `env-key:${k2.toString('base64')}` };
    const fromEnv = openBlobStore(`file:${root}`, { cacheBytes: 0, codec: { env } });
    const id = await fromEnv.put(SCOPE, `env ${SECRET}`);
    expect(keyIdIn(fileOf(root, id))).toBe('env-key');
    expect(readFileSync(fileOf(root, id)).includes(SECRET)).toBe(false);

    const off = openBlobStore(`file:${root}`, { cacheBytes: 0, codec: { env, encryption: false } });
    const plainId = await off.put(SCOPE, `off ${SECRET}`);
    expect(readFileSync(fileOf(root, plainId), 'utf8')).toBe(`off ${SECRET}`);
    await expect(off.get(SCOPE, id)).rejects.toThrow(/key id "env-key"/);
    const none = openBlobStore(`file:${root}`, { cacheBytes: 0, codec: { env: {} } });
    expect(none).toBeInstanceOf(LocalBlobStore);
  });

  test('DURABLE_AGENT_BLOB_PLAIN=read lets the encrypted store read plain blobs from before encryption; unset it refuses them; another value is an error naming the variable', async () => {
    const root = tmp();
    const plainId = await new LocalBlobStore(root).put(SCOPE, `before ${SECRET}`);
    const keysEnv = { DURABLE_AGENT_ENCRYPTION_KEYS: `k1:${k1.toString('base64')}` };
    const refusing = openBlobStore(`file:${root}`, { cacheBytes: 0, codec: { env: keysEnv } });
    await expect(refusing.get(SCOPE, plainId)).rejects.toThrow(BlobTamperedError);
    const reading = openBlobStore(`file:${root}`, { cacheBytes: 0, codec: { env: { ...keysEnv, DURABLE_AGENT_BLOB_PLAIN: 'read' } } });
    expect(await reading.get(SCOPE, plainId)).toBe(`before ${SECRET}`);
    expect(() => openBlobStore(`file:${root}`, { codec: { env: { ...keysEnv, DURABLE_AGENT_BLOB_PLAIN: 'yes' } } })).toThrow(/DURABLE_AGENT_BLOB_PLAIN must be "read" or "refuse"/);
  });

  test('a bad key stops openBlobStore with an EncryptionKeyError naming the key id, not the key', () => {
    const short = randomBytes(16).toString('base64');
    const open = () => openBlobStore(`file:${tmp()}`, { codec: { env: { DURABLE_AGENT_ENCRYPTION_KEYS: `k-short:${short}` } } });
    expect(open).toThrow(EncryptionKeyError);
    expect(open).toThrow(/"k-short"\): the key is 16 bytes/);
    expect(open).not.toThrow(short);
  });
});

describe('CLI connect', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
  });

  test('a bad encryption key is a usage error (exit 2) naming the key, not "Cannot reach Temporal" (exit 4)', async () => {
    process.env.DURABLE_AGENT_ENCRYPTION_KEYS = `k-bad:${randomBytes(20).toString('base64')}`;
    // Nothing listens on port 1: the key is checked before any connection is tried.
    const err = await connectClient({ address: '127.0.0.1:1' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CliError);
    expect(err).toMatchObject({ exitCode: EXIT.usage });
    expect((err as Error).message).toMatch(/^Encryption keys are misconfigured: DURABLE_AGENT_ENCRYPTION_KEYS.*"k-bad"\): the key is 20 bytes/);
    expect((err as Error).message).not.toMatch(/Cannot reach Temporal/);
  });

  test('with good keys an unreachable server is still exit 4', async () => {
    process.env.DURABLE_AGENT_ENCRYPTION_KEYS = `k-good:${randomBytes(32).toString('base64')}`;
    const err = await connectClient({ address: '127.0.0.1:1' }).catch((e: unknown) => e);
    expect(err).toMatchObject({ exitCode: EXIT.unreachable });
  });
});
