/**
 * Live output's delay: from the moment the fake Messages API writes a text delta to the moment a
 * subscriber (TaskClient.stream, polling the log at its default pace) yields it. The worker batches
 * deltas for a few ms and appends them to the log beside the blob store; both run here, on the
 * embedded dev server, with the real @anthropic-ai/sdk reading the fake's stream.
 */
import os from 'node:os';
import path from 'node:path';
import { defineAgent } from '../src/agents/define-agent';
import { openLiveOutputLog } from '../src/live-output/open-live-output-log';
import { FakeMessagesApi, fakeTurns, type FakeReply } from '../src/testing/fake-messages-api';
import { runInBackground, type Harness } from '../test/support/harness';
import { summarize, type Summary } from './stats';

const TASKS = Number(process.env.BENCH_STREAMING_TASKS ?? 5);
const DELTAS = 100;
const CHUNK_CHARS = 8;
const DELAY_MS = 20;

export interface StreamingNumbers {
  loadAverage: { before: number[]; after: number[] };
  tasks: number;
  deltasPerTask: number;
  /** The fake wrote a text delta -> TaskClient.stream yielded it. */
  tokenToSubscriberMs: Summary;
  /** Deltas the subscriber never saw (should be 0). */
  missed: number;
}

export async function measureStreaming(h: Harness): Promise<StreamingNumbers> {
  const loadBefore = os.loadavg();
  const api = new FakeMessagesApi();
  await api.start();
  const log = openLiveOutputLog(`file:${path.join(h.tmpDir, 'blobs')}`);
  const samples: number[] = [];
  let missed = 0;
  try {
    const agent = defineAgent({ name: 'streamer', system: 'You answer at length.', tools: [], model: { provider: 'anthropic' } });
    const worker = runInBackground(await h.worker([agent], { modelEnv: { anthropicApiKey: 'sk-ant-bench', anthropicBaseURL: api.url } }));
    try {
      for (let t = 0; t < TASKS; t++) {
        const sentAt: number[] = [];
        const text = Array.from({ length: DELTAS }, (_, i) => String(i).padStart(CHUNK_CHARS, '.')).join('');
        api.enqueue({ ...fakeTurns.text(text), stream: { chunkChars: CHUNK_CHARS, delayMs: DELAY_MS, onDelta: (n, at) => (sentAt[n] = at) } } as FakeReply);
        const taskId = h.taskId('bench-stream');
        await h.client.start({ agent: 'streamer', prompt: 'talk' }, { taskId });
        let n = 0;
        for await (const event of h.client.stream(taskId, { log })) {
          if (event.kind !== 'text') continue;
          const at = performance.now();
          n++;
          if (sentAt[n] !== undefined) samples.push(at - sentAt[n]!);
        }
        missed += DELTAS - n;
      }
    } finally {
      await worker.stop();
    }
  } finally {
    await api.stop();
    await log.close();
  }
  return { loadAverage: { before: loadBefore, after: os.loadavg() }, tasks: TASKS, deltasPerTask: DELTAS, tokenToSubscriberMs: summarize(samples), missed };
}

export function streamingTable(r: StreamingNumbers): string {
  const s = r.tokenToSubscriberMs;
  return [
    '| what | result | target |',
    '|---|---|---|',
    `| a text delta written by the API -> TaskClient.stream yields it (median, p95, max, n) | ${s.median} ms, ${s.p95} ms, ${s.max} ms, ${s.n} | under 100 ms (median) |`,
    `| deltas a subscriber missed | ${r.missed} of ${r.tasks * r.deltasPerTask} | 0 |`,
    `| load average (1 min) before, after | ${r.loadAverage.before[0]!.toFixed(1)}, ${r.loadAverage.after[0]!.toFixed(1)} | |`,
  ].join('\n');
}
