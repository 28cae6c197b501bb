/**
 * The compression codec end to end on a real dev server: a worker from createAgentWorker and a
 * client from TaskClient.connect share it, so history holds compressed payloads that a client
 * without the codec cannot read, and the codec client reads them back.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { LocalBlobStore } from '../../src/blobs/local-blob-store';
import { TaskClient } from '../../src/client/task-client';
import { GZIP_ENCODING, ORIGINAL_ENCODING_KEY } from '../../src/codec';
import { useHarness, answer } from '../support/harness';

/** Low enough that the model's turn and the tool's result are both above it, whatever the claim check keeps inline. */
const THRESHOLD = 1_024;
const codec = { compression: { thresholdBytes: THRESHOLD } };

const h = useHarness();
let blobDir: string;
beforeAll(async () => {
  blobDir = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-codec-blobs-'));
});
afterAll(async () => {
  if (blobDir) rmSync(blobDir, { recursive: true, force: true });
});

interface RawPayload {
  event: string;
  encoding: string;
  originalEncoding?: string;
  bytes: number;
}

/** Every payload anywhere in the history, as stored by the server. */
function payloadsOf(history: temporal.api.history.v1.IHistory): RawPayload[] {
  const out: RawPayload[] = [];
  const text = (b?: Uint8Array | null) => (b ? Buffer.from(b).toString('utf8') : '');
  const walk = (node: unknown, event: string) => {
    if (!node || typeof node !== 'object') return;
    const maybe = node as { metadata?: Record<string, Uint8Array>; data?: Uint8Array };
    if (maybe.metadata && maybe.metadata.encoding instanceof Uint8Array) {
      const original = maybe.metadata[ORIGINAL_ENCODING_KEY];
      out.push({ event, encoding: text(maybe.metadata.encoding), ...(original ? { originalEncoding: text(original) } : {}), bytes: maybe.data?.length ?? 0 });
      return;
    }
    for (const value of Object.values(node)) walk(value, event);
  };
  for (const e of history.events ?? []) {
    const event = Object.keys(e).find((k) => k.endsWith('Attributes') && (e as Record<string, unknown>)[k]) ?? 'unknown';
    walk(e, event);
  }
  return out;
}

test('large payloads are stored gzip-compressed in history and decode through the codec client; small ones stay plain JSON', async () => {
  const marker = 'END-OF-BIG-FILE';
  const lines = Array.from({ length: 400 }, (_, i) => `row ${i}: order ${1000 + i} shipped to customer ${i % 37}`);
  writeFileSync(path.join(h.workspaceDir, 'big.txt'), `${lines.join('\n')}\n${marker}\n`);
  const longAnswer = `Summary of big.txt: ${'every order shipped; '.repeat(70)}${marker}`;
  const script = h.script([
    {
      content: [
        { type: 'text', text: `Reading the file. ${'(thinking aloud) '.repeat(80)}` },
        { type: 'tool_use', name: 'read_file', input: { path: 'big.txt' } },
      ],
    },
    answer(longAnswer),
  ]);
  const taskId = h.taskId('codec');
  const client = await TaskClient.connect({ address: h.server.address, taskQueue: h.taskQueue, codec });
  const worker = await h.worker(undefined, { codec, blobStore: new LocalBlobStore(blobDir) });
  const result = await worker.runUntil(async () => {
    await client.start({ agent: 'demo', prompt: 'summarise big.txt', model: { provider: 'scripted', script } }, { taskId });
    return client.result(taskId);
  });
  expect(result).toMatchObject({ outcome: 'answered', text: longAnswer });

  const plainConnection = await Connection.connect({ address: h.server.address });
  try {
    const plain = new Client({ connection: plainConnection });
    const payloads = payloadsOf(await plain.workflow.getHandle(taskId).fetchHistory());
    const compressed = payloads.filter((p) => p.encoding === GZIP_ENCODING);

    // The workflow's result and at least one activity result are compressed, marked with their original encoding.
    expect(compressed.map((p) => p.event)).toEqual(expect.arrayContaining(['workflowExecutionCompletedEventAttributes', 'activityTaskCompletedEventAttributes']));
    for (const p of compressed) expect(p.originalEncoding).toBe('json/plain');
    // Nothing above the threshold was left plain, and everything small was.
    const plainJson = payloads.filter((p) => p.encoding === 'json/plain');
    expect(plainJson.length).toBeGreaterThan(0);
    for (const p of plainJson) expect({ ...p, large: p.bytes >= THRESHOLD }).toMatchObject({ large: false });

    // A client without the codec cannot read the result: the bytes in history really are gzip.
    await expect(plain.workflow.getHandle(taskId).result()).rejects.toThrow(/binary\/gzip/);
  } finally {
    await plainConnection.close();
    await client.client.connection.close();
  }
});
