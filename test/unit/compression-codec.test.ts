import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { gzipSync } from 'node:zlib';
import { CompressionCodec, createDataConverter, createPayloadCodecs, GZIP_ENCODING, ORIGINAL_ENCODING_KEY, PayloadDecompressionError } from '../../src/codec';
import { SYNC_GUNZIP_MAX_BYTES, SYNC_GZIP_MAX_BYTES } from '../../src/codec/compression-codec';
import { randomBytes } from 'node:crypto';

const text = (bytes?: Uint8Array | null) => new TextDecoder().decode(bytes ?? new Uint8Array());
const payloadOf = (value: unknown) => defaultPayloadConverter.toPayload(value) as Payload;
const large = { conversation: Array.from({ length: 400 }, (_, i) => ({ role: 'user', text: `tool result ${i}: ${'x'.repeat(40)}` })) };

describe('compression codec', () => {
  const codec = new CompressionCodec();

  test('a payload under the threshold passes through untouched (same object)', async () => {
    const small = payloadOf({ ok: true });
    const [encoded] = await codec.encode([small]);
    expect(encoded).toBe(small);
  });

  test('a large payload is gzipped, marked binary/gzip with its original encoding, and decodes to the same value', async () => {
    const original = payloadOf(large);
    const [encoded] = await codec.encode([original]);
    expect(text(encoded!.metadata!.encoding)).toBe(GZIP_ENCODING);
    expect(text(encoded!.metadata![ORIGINAL_ENCODING_KEY])).toBe('json/plain');
    expect(encoded!.data!.length).toBeLessThan(original.data!.length / 4);
    const [decoded] = await codec.decode([encoded!]);
    expect(decoded!.metadata).toEqual(original.metadata);
    expect(defaultPayloadConverter.fromPayload(decoded!)).toEqual(large);
  });

  test('metadata other than the encoding survives the round trip', async () => {
    const original: Payload = { ...payloadOf(large), metadata: { ...payloadOf(large).metadata, messageType: new TextEncoder().encode('my.Type') } };
    const [decoded] = await codec.decode(await codec.encode([original]));
    expect(text(decoded!.metadata!.messageType)).toBe('my.Type');
    expect(text(decoded!.metadata!.encoding)).toBe('json/plain');
    expect(Object.keys(decoded!.metadata!)).not.toContain(ORIGINAL_ENCODING_KEY);
  });

  test('incompressible data is left as it is', async () => {
    const random = new Uint8Array(16_384).map(() => Math.floor(Math.random() * 256));
    const payload: Payload = { metadata: { encoding: new TextEncoder().encode('binary/plain') }, data: random };
    const [encoded] = await codec.encode([payload]);
    expect(encoded).toBe(payload);
  });

  test('payloads it did not mark pass through decode, including a foreign binary/gzip', async () => {
    const plain = payloadOf(large);
    const foreign: Payload = { metadata: { encoding: new TextEncoder().encode(GZIP_ENCODING) }, data: gzipSync(Buffer.from('theirs')) };
    const encrypted: Payload = { metadata: { encoding: new TextEncoder().encode('binary/encrypted') }, data: new Uint8Array([1, 2, 3]) };
    const decoded = await codec.decode([plain, foreign, encrypted]);
    expect(decoded[0]).toBe(plain);
    expect(decoded[1]).toBe(foreign);
    expect(decoded[2]).toBe(encrypted);
  });

  test('a payload already marked binary/gzip is not compressed twice', async () => {
    const [once] = await codec.encode([payloadOf(large)]);
    const [twice] = await codec.encode([once!]);
    expect(twice).toBe(once);
  });

  test('corrupted compressed data is a PayloadDecompressionError that says what happened', async () => {
    const [encoded] = await codec.encode([payloadOf(large)]);
    const data = Uint8Array.from(encoded!.data!);
    const middle = Math.floor(data.length / 2);
    data[middle] = data[middle]! ^ 0xff;
    const err = await codec.decode([{ ...encoded!, data }]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PayloadDecompressionError);
    expect((err as Error).message).toMatch(/cannot decompress a payload marked binary\/gzip \(original encoding json\/plain\).*corrupted/);
  });

  test('truncated compressed data is refused too, not returned as a shorter payload', async () => {
    const [encoded] = await codec.encode([payloadOf(large)]);
    await expect(codec.decode([{ ...encoded!, data: encoded!.data!.slice(0, 40) }])).rejects.toBeInstanceOf(PayloadDecompressionError);
  });

  test('a payload too large to compress on the calling thread goes through the zlib pool and decodes to the same value', async () => {
    // Hex text: compresses about 2x, so both the payload and its compressed data are above the sync limits.
    const big = { page: randomBytes(SYNC_GZIP_MAX_BYTES).toString('hex') };
    const original = payloadOf(big);
    expect(original.data!.length).toBeGreaterThan(SYNC_GZIP_MAX_BYTES);
    const [encoded] = await codec.encode([original]);
    expect(text(encoded!.metadata!.encoding)).toBe(GZIP_ENCODING);
    expect(encoded!.data!.length).toBeGreaterThan(SYNC_GUNZIP_MAX_BYTES);
    const [decoded] = await codec.decode([encoded!]);
    expect(defaultPayloadConverter.fromPayload(decoded!)).toEqual(big);
  });

  test('a batch mixing small, large and compressed payloads keeps its order', async () => {
    const small = payloadOf({ ok: true });
    const [compressed] = await codec.encode([payloadOf(large)]);
    const encoded = await codec.encode([small, payloadOf(large), compressed!]);
    expect(encoded[0]).toBe(small);
    expect(text(encoded[1]!.metadata!.encoding)).toBe(GZIP_ENCODING);
    expect(encoded[2]).toBe(compressed);
    const decoded = await codec.decode(encoded);
    expect(decoded.map((p) => defaultPayloadConverter.fromPayload(p))).toEqual([{ ok: true }, large, large]);
  });

  test('the threshold is configurable', async () => {
    const eager = new CompressionCodec({ thresholdBytes: 10 });
    const [encoded] = await eager.encode([payloadOf('a'.repeat(200))]);
    expect(text(encoded!.metadata!.encoding)).toBe(GZIP_ENCODING);
  });
});

describe('createPayloadCodecs / createDataConverter', () => {
  test('compression is on by default and first in the list (encryption will follow it)', () => {
    const codecs = createPayloadCodecs({ env: {} });
    expect(codecs[0]).toBeInstanceOf(CompressionCodec);
    expect(createDataConverter({ env: {} }).payloadCodecs?.[0]).toBeInstanceOf(CompressionCodec);
  });

  test('DURABLE_AGENT_COMPRESSION=off compresses nothing new but still decodes what history holds', async () => {
    const [on] = createPayloadCodecs({ env: {} });
    const [off] = createPayloadCodecs({ env: { DURABLE_AGENT_COMPRESSION: 'off' } });
    const original = payloadOf(large);
    const [notCompressed] = await off!.encode([original]);
    expect(notCompressed).toBe(original);
    const [decoded] = await off!.decode(await on!.encode([original]));
    expect(defaultPayloadConverter.fromPayload(decoded!)).toEqual(large);
  });

  test('DURABLE_AGENT_COMPRESSION_THRESHOLD sets the threshold; a bad value is a clear error', () => {
    const [codec] = createPayloadCodecs({ env: { DURABLE_AGENT_COMPRESSION_THRESHOLD: '100' } });
    expect((codec as CompressionCodec).thresholdBytes).toBe(100);
    expect(() => createPayloadCodecs({ env: { DURABLE_AGENT_COMPRESSION_THRESHOLD: 'lots' } })).toThrow(/DURABLE_AGENT_COMPRESSION_THRESHOLD/);
  });

  test('explicit options win over the environment', () => {
    const [codec] = createPayloadCodecs({ compression: { thresholdBytes: 1 }, env: { DURABLE_AGENT_COMPRESSION: 'off' } });
    expect((codec as CompressionCodec).thresholdBytes).toBe(1);
  });
});

describe('compression under encryption (length must not reveal content)', () => {
  const keys = `k1:${randomBytes(32).toString('base64')}`;
  const secret = `sk-${randomBytes(16).toString('hex')}`;
  /** A payload holding a secret and, beside it, text an attacker chose (a tool result quoting a page). */
  const withGuess = (guess: string) => payloadOf({ apiKey: secret, page: `${'lorem ipsum dolor sit amet '.repeat(200)}${guess}` });
  const sizeOf = async (codecs: ReturnType<typeof createPayloadCodecs>, payload: Payload) => {
    let out: Payload[] = [payload];
    for (const codec of codecs) out = await codec.encode(out);
    return out[0]!.data!.length;
  };

  test('with encryption keys, compression is off by default: a guess that repeats the secret gives the same ciphertext size as one that does not', async () => {
    const codecs = createPayloadCodecs({ env: { DURABLE_AGENT_ENCRYPTION_KEYS: keys } });
    const right = await sizeOf(codecs, withGuess(secret));
    const wrong = await sizeOf(codecs, withGuess(`sk-${randomBytes(16).toString('hex')}`));
    expect(right).toBe(wrong);
  });

  test('asked for explicitly (DURABLE_AGENT_COMPRESSION=on, or the option), compression runs under encryption, and then the size does tell', async () => {
    for (const codecs of [
      createPayloadCodecs({ env: { DURABLE_AGENT_ENCRYPTION_KEYS: keys, DURABLE_AGENT_COMPRESSION: 'on' } }),
      createPayloadCodecs({ compression: true, env: { DURABLE_AGENT_ENCRYPTION_KEYS: keys } }),
    ]) {
      const right = await sizeOf(codecs, withGuess(secret));
      const wrong = await sizeOf(codecs, withGuess(`sk-${randomBytes(16).toString('hex')}`));
      // The documented price of opting in: the matching guess compresses into a back-reference.
      expect(right).toBeLessThan(wrong);
    }
  });

  test('history compressed before (by a worker with compression on) still decodes with the default codecs under encryption', async () => {
    const keyEnv = { DURABLE_AGENT_ENCRYPTION_KEYS: keys };
    const before = createPayloadCodecs({ env: { ...keyEnv, DURABLE_AGENT_COMPRESSION: 'on' } });
    const now = createPayloadCodecs({ env: keyEnv });
    let stored = [payloadOf(large)];
    for (const codec of before) stored = await codec.encode(stored);
    // Decoding runs the codecs in reverse, as Temporal does.
    let decoded = stored;
    for (const codec of [...now].reverse()) decoded = await codec.decode(decoded);
    expect(defaultPayloadConverter.fromPayload(decoded[0]!)).toEqual(large);
    // And an unencrypted compressed payload from before encryption was turned on decodes too.
    const [plainGzip] = await new CompressionCodec().encode([payloadOf(large)]);
    expect(text(plainGzip!.metadata!.encoding)).toBe(GZIP_ENCODING);
    let old = [plainGzip!];
    for (const codec of [...now].reverse()) old = await codec.decode(old);
    expect(defaultPayloadConverter.fromPayload(old[0]!)).toEqual(large);
  });
});
