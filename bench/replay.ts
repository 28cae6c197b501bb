/**
 * Replay of a 100-turn recording (issue 25): a task of one echo call per turn with a scripted model
 * is recorded (export), then replayed with the same script, every call answered from the
 * recording. Measured: export time and file size, and the replay's wall time from the call to the
 * diff (its worker's start and the replay's own export included). Target: replay under 10 s.
 */
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Harness } from '../test/support/harness';
import { createBenchAgent, BENCH_AGENT } from './bench-agent';
import { recordTask } from '../src/replay/record-task';
import { replayRecording } from '../src/replay/run-replay';
import { summarize, type Summary } from './stats';

export const REPLAY_TURNS = 100;
export const REPLAY_TARGET_MS = 10_000;
const RUNS = 3;

export interface ReplayBench {
  turns: number;
  runs: number;
  exportMs: Summary;
  recordingBytes: number;
  replayMs: Summary;
  targetMs: number;
  loadAverage: { before: number[]; after: number[] };
}

export async function measureReplay(h: Harness): Promise<ReplayBench> {
  const loadBefore = os.loadavg();
  const turns = Array.from({ length: REPLAY_TURNS - 1 }, (_, i) => ({ content: [{ type: 'tool_use' as const, name: 'echo', input: { n: i } }] }));
  const script = path.join(h.tmpDir, 'replay-bench.json');
  writeFileSync(script, JSON.stringify({ description: 'replay bench', turns: [...turns, { content: [{ type: 'text', text: 'done' }] }] }));
  const model = { provider: 'scripted' as const, script };
  const taskId = h.taskId('replay-bench');
  const worker = await h.worker([createBenchAgent()]);
  await worker.runUntil(async () => {
    await h.client.start({ agent: BENCH_AGENT, prompt: 'echo', model, maxTurns: REPLAY_TURNS + 10, budgets: { toolCalls: REPLAY_TURNS * 2 } }, { taskId });
    await h.client.result(taskId);
  });
  const exportMs: number[] = [];
  const replayMs: number[] = [];
  let bytes = 0;
  for (let run = 0; run < RUNS; run++) {
    const t0 = performance.now();
    const recording = await recordTask(h.client, taskId, { blobStore: h.blobStore });
    exportMs.push(performance.now() - t0);
    bytes = JSON.stringify(recording, null, 2).length;
    const t1 = performance.now();
    const { diff } = await replayRecording(recording, { client: h.client, connection: h.connection, model, workflowBundle: h.bundle, modelEnv: { scriptRoots: [h.tmpDir] } });
    replayMs.push(performance.now() - t1);
    if (diff.differences.length) throw new Error(`the replay of the same script differs: ${diff.differences.slice(0, 3).join('; ')}`);
    if (diff.replayed.turns !== REPLAY_TURNS) throw new Error(`the replay ran ${diff.replayed.turns} turns, not ${REPLAY_TURNS}`);
  }
  return {
    turns: REPLAY_TURNS,
    runs: RUNS,
    exportMs: summarize(exportMs),
    recordingBytes: bytes,
    replayMs: summarize(replayMs),
    targetMs: REPLAY_TARGET_MS,
    loadAverage: { before: loadBefore, after: os.loadavg() },
  };
}

export function replayTable(r: ReplayBench): string {
  const row = (label: string, s: Summary) => `| ${label} | ${s.median} | ${s.p95} | ${s.n} |`;
  return [
    `Replay of a ${r.turns}-turn recording (scripted model, one echo call per turn), ${r.runs} runs; recording ${(r.recordingBytes / 1024).toFixed(0)} KB;`,
    `load average before ${r.loadAverage.before.map((l) => l.toFixed(2)).join(' / ')}, after ${r.loadAverage.after.map((l) => l.toFixed(2)).join(' / ')}.`,
    '',
    '| step | median ms | p95 ms | n |',
    '|---|---|---|---|',
    row('export (history + blobs -> recording)', r.exportMs),
    row(`replay (worker start, ${r.turns} turns, diff)`, r.replayMs),
    '',
    `target: replay under ${r.targetMs} ms`,
  ].join('\n');
}
