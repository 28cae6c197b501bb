import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defaultPayloadConverter, DefaultFailureConverter, ApplicationFailure, type Payload } from '@temporalio/common';
import { decode, encode } from '@temporalio/common/lib/internal-non-workflow';
import {
  CompressionCodec,
  createDataConverter,
  createPayloadCodecs,
  ENCODED_FAILURE_CONVERTER_PATH,
  ENCRYPTED_ENCODING,
  ENCRYPTION_OVERHEAD_BYTES,
  EncryptionCodec,
  EncryptionKeyError,
  EncryptionKeyNotFoundError,
  GZIP_ENCODING,
  KEY_ID_METADATA,
  PayloadDecryptionError,
  createKeyring,
  encryptionEnabled,
} from '../../src/codec';
import { temporal } from '@temporalio/proto';
import { startCodecServer, type RunningCodecServer } from '../../src/codec/codec-server';

const text = (bytes?: Uint8Array | null) => new TextDecoder().decode(bytes ?? new Uint8Array());
const payloadOf = (value: unknown) => defaultPayloadConverter.toPayload(value) as Payload;
const valueOf = (payload: Payload) => defaultPayloadConverter.fromPayload(payload);
const newKey = () => randomBytes(32).toString('base64');
const SECRET = 'SECRET-customer-4242-card';

const k1 = newKey();
const k2 = newKey();
const codecWith = (...keys: [string, string][]) => new EncryptionCodec(createKeyring(keys.map(([id, key]) => ({ id, key }))));

describe('encryption codec', () => {
  test('round trip: the payload is marked binary/encrypted with its key id, holds no plaintext, and decodes to the same value and metadata', async () => {
    const codec = codecWith(['k1', k1]);
    const original: Payload = { ...payloadOf({ prompt: SECRET }), metadata: { ...payloadOf({}).metadata, messageType: new TextEncoder().encode('my.Type') } };
    const [encrypted] = await codec.encode([original]);
    expect(text(encrypted!.metadata!.encoding)).toBe(ENCRYPTED_ENCODING);
    expect(text(encrypted!.metadata![KEY_ID_METADATA])).toBe('k1');
    // Nothing of the original survives in the clear: not the value, not its encoding or other metadata.
    const stored = Buffer.concat([Buffer.from(encrypted!.data!), ...Object.values(encrypted!.metadata!).map((v) => Buffer.from(v))]);
    expect(stored.includes(SECRET)).toBe(false);
    expect(stored.includes('json/plain')).toBe(false);
    expect(stored.includes('my.Type')).toBe(false);
    const [decoded] = await codec.decode([encrypted!]);
    expect(text(decoded!.metadata!.encoding)).toBe('json/plain');
    expect(text(decoded!.metadata!.messageType)).toBe('my.Type');
    expect(valueOf(decoded!)).toEqual({ prompt: SECRET });
  });

  test('two encryptions of the same payload differ (a fresh nonce each time)', async () => {
    const codec = codecWith(['k1', k1]);
    const [a, b] = await codec.encode([payloadOf(SECRET), payloadOf(SECRET)]);
    expect(Buffer.from(a!.data!).equals(Buffer.from(b!.data!))).toBe(false);
  });

  test('rotation: a payload written under the old key still decrypts after a new current key is put in front; new payloads use the new key', async () => {
    const before = codecWith(['old', k1]);
    const [written] = await before.encode([payloadOf({ note: SECRET })]);
    const after = codecWith(['new', k2], ['old', k1]);
    expect(valueOf((await after.decode([written!]))[0]!)).toEqual({ note: SECRET });
    const [fresh] = await after.encode([payloadOf('later')]);
    expect(text(fresh!.metadata![KEY_ID_METADATA])).toBe('new');
    // Once the old key is dropped, its payloads are refused by name.
    await expect(codecWith(['new', k2]).decode([written!])).rejects.toThrow(/key id "old", which is not configured \(known key ids: new\)/);
  });

  test('a payload encrypted with an unknown key id fails with an EncryptionKeyNotFoundError naming the id', async () => {
    const [written] = await codecWith(['k-2025', k1]).encode([payloadOf(SECRET)]);
    const err = await codecWith(['k-2026', k2])
      .decode([written!])
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EncryptionKeyNotFoundError);
    expect((err as EncryptionKeyNotFoundError).keyId).toBe('k-2025');
    expect((err as Error).message).toContain('"k-2025"');
    // A codec with no keys at all says so, and still names the id.
    await expect(new EncryptionCodec().decode([written!])).rejects.toThrow(/key id "k-2025", but no encryption keys are configured/);
  });

  test('tampering is detected: a flipped ciphertext bit, a cut tag, a relabelled key id and a wrong key with the same id all fail authentication', async () => {
    const codec = codecWith(['k1', k1], ['k2', k2]);
    const [written] = await codec.encode([payloadOf({ amount: 100 })]);
    const flipped = Buffer.from(written!.data!);
    flipped[20]! ^= 0x01;
    await expect(codec.decode([{ ...written!, data: flipped }])).rejects.toThrow(PayloadDecryptionError);
    await expect(codec.decode([{ ...written!, data: written!.data!.subarray(0, written!.data!.length - 1) }])).rejects.toThrow(/failed authentication/);
    await expect(codec.decode([{ ...written!, data: written!.data!.subarray(0, 10) }])).rejects.toThrow(/truncated/);
    const relabelled = { ...written!, metadata: { ...written!.metadata, [KEY_ID_METADATA]: new TextEncoder().encode('k2') } };
    await expect(codec.decode([relabelled])).rejects.toThrow(/key id "k2" failed authentication/);
    await expect(codecWith(['k1', k2]).decode([written!])).rejects.toThrow(PayloadDecryptionError);
  });

  test('payloads without encryption marks (history from before, the committed replay histories) pass through decode untouched', async () => {
    const plain = payloadOf({ ok: true });
    const [decoded] = await codecWith(['k1', k1]).decode([plain]);
    expect(decoded).toBe(plain);
    const [alsoDecoded] = await new EncryptionCodec().decode([plain]);
    expect(alsoDecoded).toBe(plain);
  });

  test('without keys nothing is encrypted; an already encrypted payload is not encrypted twice', async () => {
    const plain = payloadOf(SECRET);
    expect((await new EncryptionCodec().encode([plain]))[0]).toBe(plain);
    const codec = codecWith(['k1', k1]);
    const [once] = await codec.encode([plain]);
    expect((await codec.encode([once!]))[0]).toBe(once);
  });

  test('size: encryption adds the 28 bytes of nonce and tag to the serialised payload, nothing that grows with its size', async () => {
    const codec = codecWith(['k1', k1]);
    for (const value of ['x', 'y'.repeat(10_000), { rows: Array.from({ length: 1000 }, (_, i) => i) }]) {
      const original = payloadOf(value);
      const [encrypted] = await codec.encode([original]);
      const serialised = temporal.api.common.v1.Payload.encode(original).finish().length;
      expect(encrypted!.data!.length).toBe(serialised + ENCRYPTION_OVERHEAD_BYTES);
    }
  });
});

describe('keys and configuration', () => {
  test('DURABLE_AGENT_ENCRYPTION_KEYS: the first key is current, later ones decrypt', async () => {
    const env = { DURABLE_AGENT_ENCRYPTION_KEYS: `new:${k2}, old:${k1}` };
    const [, encryption] = createPayloadCodecs({ env });
    expect((encryption as EncryptionCodec).currentKeyId).toBe('new');
    expect([...(encryption as EncryptionCodec).keyring!.byId.keys()]).toEqual(['new', 'old']);
    expect(encryptionEnabled({ env })).toBe(true);
    expect(encryptionEnabled({ env: {} })).toBe(false);
  });

  test('a key file (one kid:base64 per line, # comments) adds keys after the environment ones', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'keys-'));
    const file = path.join(dir, 'keys');
    writeFileSync(file, `# retired keys\nk2024:${k1}\n\nk2023:${k2}\n`);
    const [, fromFile] = createPayloadCodecs({ env: { DURABLE_AGENT_ENCRYPTION_KEY_FILE: file } });
    expect((fromFile as EncryptionCodec).currentKeyId).toBe('k2024');
    const [, both] = createPayloadCodecs({ env: { DURABLE_AGENT_ENCRYPTION_KEY_FILE: file, DURABLE_AGENT_ENCRYPTION_KEYS: `k2025:${newKey()}` } });
    expect([...(both as EncryptionCodec).keyring!.byId.keys()]).toEqual(['k2025', 'k2024', 'k2023']);
    expect(() => createPayloadCodecs({ env: { DURABLE_AGENT_ENCRYPTION_KEY_FILE: path.join(dir, 'missing') } })).toThrow(/DURABLE_AGENT_ENCRYPTION_KEY_FILE: cannot read .*missing \(ENOENT\)/);
  });

  test('bad keys are refused with messages naming the key id and the problem, never the key material', () => {
    const short = randomBytes(16).toString('base64');
    const cases: [string, RegExp][] = [
      [`k1:${short}`, /"k1"\): the key is 16 bytes; AES-256-GCM needs exactly 32/],
      [`k1:not base64!!`, /"k1"\): the key is not base64 text/],
      [`${k1}`, /expected KEY_ID:BASE64_KEY/],
      [`bad id:${k1}`, /the key id "bad id" is invalid/],
      [`k1:${k1},k1:${k2}`, /"k1" is given twice with different keys/],
    ];
    for (const [value, message] of cases) {
      let err: unknown;
      try {
        createPayloadCodecs({ env: { DURABLE_AGENT_ENCRYPTION_KEYS: value } });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(EncryptionKeyError);
      expect((err as Error).message).toMatch(message);
      expect((err as Error).message).not.toContain(short);
      expect((err as Error).message).not.toContain(k1);
    }
  });

  test('CodecOptions.encryption wins over the environment; false turns encryption off', () => {
    const env = { DURABLE_AGENT_ENCRYPTION_KEYS: `env:${k1}` };
    const [, programmatic] = createPayloadCodecs({
      env,
      encryption: {
        keys: [
          { id: 'a', key: randomBytes(32) },
          { id: 'b', key: k2 },
        ],
        currentKeyId: 'b',
      },
    });
    expect((programmatic as EncryptionCodec).currentKeyId).toBe('b');
    const [, off] = createPayloadCodecs({ env, encryption: false });
    expect((off as EncryptionCodec).currentKeyId).toBeUndefined();
    expect(() => createPayloadCodecs({ encryption: { keys: [{ id: 'a', key: k1 }], currentKeyId: 'zz' } })).toThrow(/current key id "zz" is not among the keys \(a\)/);
  });

  test('the data converter encodes failure messages only when encryption is on', () => {
    expect(createDataConverter({ env: {} }).failureConverterPath).toBeUndefined();
    expect(createDataConverter({ env: { DURABLE_AGENT_ENCRYPTION_KEYS: `k1:${k1}` } }).failureConverterPath).toBe(ENCODED_FAILURE_CONVERTER_PATH);
    const { failureConverter } = require(ENCODED_FAILURE_CONVERTER_PATH) as { failureConverter: DefaultFailureConverter };
    const failure = failureConverter.errorToFailure(ApplicationFailure.create({ message: SECRET }), defaultPayloadConverter);
    expect(failure.message).toBe('Encoded failure');
    expect(failure.stackTrace).toBe('');
    expect(JSON.stringify(valueOf(failure.encodedAttributes!))).toContain(SECRET);
  });
});

describe('composition with compression', () => {
  const large = { transcript: Array.from({ length: 300 }, (_, i) => `turn ${i}: ${SECRET} said the same thing again`) };

  test('asked for under encryption (DURABLE_AGENT_COMPRESSION=on), compress first, then encrypt: a large payload is encrypted gzip (smaller than the JSON), and decodes back through both', async () => {
    const codecs = createPayloadCodecs({ env: { DURABLE_AGENT_ENCRYPTION_KEYS: `k1:${k1}`, DURABLE_AGENT_COMPRESSION: 'on' } });
    expect(codecs[0]).toBeInstanceOf(CompressionCodec);
    expect(codecs[1]).toBeInstanceOf(EncryptionCodec);
    const original = payloadOf(large);
    const [stored] = await encode(codecs, [original]);
    expect(text(stored!.metadata!.encoding)).toBe(ENCRYPTED_ENCODING);
    // Compression ran before encryption: the ciphertext is far smaller than the JSON, and what
    // encryption wrapped is the gzip payload.
    expect(stored!.data!.length).toBeLessThan(original.data!.length / 4);
    const [inner] = await codecs[1]!.decode([stored!]);
    expect(text(inner!.metadata!.encoding)).toBe(GZIP_ENCODING);
    const [decoded] = await decode(codecs, [stored!]);
    expect(valueOf(decoded!)).toEqual(large);
  });

  test('by default under encryption nothing is compressed: what encryption wrapped is the JSON payload itself', async () => {
    const codecs = createPayloadCodecs({ env: { DURABLE_AGENT_ENCRYPTION_KEYS: `k1:${k1}` } });
    const [stored] = await encode(codecs, [payloadOf(large)]);
    expect(text(stored!.metadata!.encoding)).toBe(ENCRYPTED_ENCODING);
    const [inner] = await codecs[1]!.decode([stored!]);
    expect(text(inner!.metadata!.encoding)).toBe('json/plain');
    expect(valueOf((await decode(codecs, [stored!]))[0]!)).toEqual(large);
  });

  test('with compression off too, small and large payloads are still encrypted', async () => {
    const codecs = createPayloadCodecs({ compression: false, env: { DURABLE_AGENT_ENCRYPTION_KEYS: `k1:${k1}` } });
    const [small, big] = await encode(codecs, [payloadOf('hi'), payloadOf(large)]);
    expect(text(small!.metadata!.encoding)).toBe(ENCRYPTED_ENCODING);
    expect(text(big!.metadata!.encoding)).toBe(ENCRYPTED_ENCODING);
    expect(Buffer.from(big!.data!).includes(SECRET)).toBe(false);
  });
});

describe('codec server (remote codec protocol on loopback)', () => {
  const codecs = createPayloadCodecs({ env: { DURABLE_AGENT_ENCRYPTION_KEYS: `k1:${k1}` } });
  let server: RunningCodecServer;
  beforeAll(async () => {
    server = await startCodecServer({ codecs, namespaces: ['default'], maxBodyBytes: 64 * 1024 });
  });
  afterAll(() => server?.close());

  const asJson = (p: Payload) => ({
    metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
    data: Buffer.from(p.data ?? new Uint8Array()).toString('base64'),
  });
  const fromJson = (p: { metadata: Record<string, string>; data: string }): Payload => ({
    metadata: Object.fromEntries(Object.entries(p.metadata).map(([k, v]) => [k, new Uint8Array(Buffer.from(v, 'base64'))])),
    data: new Uint8Array(Buffer.from(p.data, 'base64')),
  });
  const post = (route: string, body: unknown, headers: Record<string, string> = { 'X-Namespace': 'default' }) =>
    fetch(`${server.url}${route}`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });

  test('/encode then /decode round-trips a payload; encode compresses then encrypts with the current key', async () => {
    const original = payloadOf({ text: SECRET });
    const encoded = (await (await post('/encode', { payloads: [asJson(original)] })).json()) as { payloads: { metadata: Record<string, string>; data: string }[] };
    const stored = fromJson(encoded.payloads[0]!);
    expect(text(stored.metadata!.encoding)).toBe(ENCRYPTED_ENCODING);
    expect(text(stored.metadata![KEY_ID_METADATA])).toBe('k1');
    // A path prefix in front of the endpoint works too (the UI appends /decode to whatever it is given).
    const decoded = (await (await post('/codec/decode', { payloads: [asJson(stored)] })).json()) as { payloads: { metadata: Record<string, string>; data: string }[] };
    expect(valueOf(fromJson(decoded.payloads[0]!))).toEqual({ text: SECRET });
  });

  test('a payload with an unknown key id is a 400 that names the id', async () => {
    const [foreign] = await codecWith(['other', k2]).encode([payloadOf(SECRET)]);
    const res = await post('/decode', { payloads: [asJson(foreign!)] });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(/cannot decode: .*key id "other"/);
  });

  test('malformed requests get clear 4xx answers: not JSON, no payloads list, bad base64, wrong method, unknown path, too large', async () => {
    const cases: [Promise<Response>, number, RegExp][] = [
      [post('/decode', '{not json'), 400, /not JSON/],
      [post('/decode', { items: [] }), 400, /expected \{"payloads"/],
      [post('/decode', { payloads: [{ data: '***' }] }), 400, /payloads\[0\]\.data is not base64/],
      [post('/decode', { payloads: [{ metadata: { encoding: 5 } }] }), 400, /payloads\[0\]\.metadata\.encoding is not base64/],
      [fetch(`${server.url}/decode`), 405, /GET not allowed/],
      [post('/elsewhere', { payloads: [] }), 404, /not found/],
      [post('/decode', { payloads: [{ data: 'A'.repeat(100_000) }] }), 413, /over 65536 bytes/],
    ];
    for (const [pending, status, message] of cases) {
      const res = await pending;
      expect({ status: res.status, error: ((await res.json()) as { error: string }).error }).toEqual({ status, error: expect.stringMatching(message) });
    }
  });

  test('a namespace outside the allowed list, or none, is refused', async () => {
    expect((await post('/decode', { payloads: [] }, { 'X-Namespace': 'prod' })).status).toBe(403);
    expect((await post('/decode', { payloads: [] }, {})).status).toBe(403);
    expect((await post('/decode', { payloads: [] })).status).toBe(200);
  });

  test('browsers: an allowed origin gets CORS headers; any other origin is refused, preflight included', async () => {
    const ok = await post('/decode', { payloads: [] }, { 'X-Namespace': 'default', Origin: 'http://localhost:8233' });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe('http://localhost:8233');
    const foreign = await fetch(`${server.url}/decode`, { method: 'OPTIONS', headers: { Origin: 'http://attacker.test', 'Access-Control-Request-Method': 'POST' } });
    expect(foreign.status).toBe(403);
    expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
  });
});
