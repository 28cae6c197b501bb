/**
 * The workers' payload converter (src/protocol/payload-converter.ts) writes the bytes the SDK's
 * default converter writes and reads what it wrote, so clients and workers with either converter
 * share every payload, history included.
 */
import { defaultPayloadConverter } from '@temporalio/common';
import { payloadConverter } from '../../src/protocol/payload-converter';

const values: unknown[] = [
  null,
  0,
  -1.5e-7,
  true,
  '',
  'plain ascii',
  'ünïcödé, 中文, emoji 🧭, and a line\nbreak',
  'a lone surrogate \ud800 and a reversed pair \udc00\ud800',
  { messages: [{ role: 'user', content: [{ type: 'text', text: 'hé' }] }], nested: { deep: [1, [2, [3]]] } },
  Array.from({ length: 2_000 }, (_, i) => ({ n: i, text: `line ${i} ✓` })),
];

test.each(values.map((v) => [JSON.stringify(v).slice(0, 40), v]))('%s: the same payload as the SDK default, read back by both', (_, value) => {
  const ours = payloadConverter.toPayload(value);
  const theirs = defaultPayloadConverter.toPayload(value);
  expect(ours.metadata).toEqual(theirs.metadata);
  expect(Buffer.from(ours.data!).equals(Buffer.from(theirs.data!))).toBe(true);
  expect(payloadConverter.fromPayload(theirs)).toEqual(defaultPayloadConverter.fromPayload(theirs));
  expect(defaultPayloadConverter.fromPayload(ours)).toEqual(payloadConverter.fromPayload(ours));
});

test('undefined and binary payloads take the same converters as the default', () => {
  expect(payloadConverter.toPayload(undefined)).toEqual(defaultPayloadConverter.toPayload(undefined));
  const bytes = new Uint8Array([0, 1, 2, 255]);
  expect(payloadConverter.toPayload(bytes)).toEqual(defaultPayloadConverter.toPayload(bytes));
  expect(payloadConverter.fromPayload(defaultPayloadConverter.toPayload(bytes))).toEqual(bytes);
});

test('a value JSON cannot hold is refused as by the default, and a payload without data is a clear error', () => {
  const circular: Record<string, unknown> = {};
  circular.self = circular;
  expect(() => payloadConverter.toPayload(circular)).toThrow(/Unable to convert/);
  expect(() => payloadConverter.toPayload(1n)).toThrow(/Unable to convert/);
  const json = payloadConverter.toPayload({ a: 1 });
  expect(() => payloadConverter.fromPayload({ metadata: json.metadata })).toThrow(/no data/);
});
