/**
 * Forks (issue 25): a fork at turn 500 of a finished 1,000-turn task, from `TaskClient.fork` to
 * the fork's first model call (ready to run); and what keeping every turn forkable costs per turn:
 * the bytes of the checkpoint each model call carries into history, and the workflow's time to
 * build and serialize it (measured in this process on the state of turn 500).
 */
import os from 'node:os';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import { readForkPoint } from '../src/forks/fork-point';
import type { CallModelInput } from '../src/protocol/activity-contracts';
import type { TaskInput } from '../src/protocol/task';
import { checkpointOf, restoreTask } from '../src/workflows/state/task-snapshot';
import { answer, callTool, runInBackground, statusWhen, type Harness } from '../test/support/harness';
import { runsOf } from '../test/support/history-sizes';
import { createLongAgent } from '../test/support/long-agents';
import { summarize, type Summary } from './stats';

export const FORK_TURNS = 1_000;
export const FORK_AT = 500;
const FORKS = 3;
/** Each tool result: 2 KB, as a small real read returns (larger ones travel by reference either way). */
const RESULT_CHARS = 2_000;

export interface ForkBenchmark {
  turns: number;
  forkAt: number;
  originSeconds: number;
  /** Wall time of the origin per turn (all 1,000 turns), for scale. */
  originMsPerTurn: number;
  /** TaskClient.fork -> the fork's first model call started, per fork. */
  forkReadyMs: Summary;
  /** JSON bytes of the checkpoint each model call carries (the per-turn record a fork starts from). */
  checkpointBytes: Summary;
  /** Building the checkpoint and serializing it as the SDK does, per turn, on the state of turn FORK_AT. */
  checkpointMs: Summary;
  loadAverage: { before: number[]; after: number[] };
  targets: { forkReadyMs: number; checkpointBytes: number; checkpointMs: number };
}

export async function measureFork(h: Harness): Promise<ForkBenchmark> {
  const loadBefore = os.loadavg();
  const worker = runInBackground(await h.worker([createLongAgent(RESULT_CHARS)]));
  try {
    const script = h.script([...Array.from({ length: FORK_TURNS }, (_, i) => callTool('big_read', { offset: i })), answer('done')]);
    const origin = h.taskId('fork-origin');
    const started = Date.now();
    await h.client.start({ agent: 'long', prompt: 'read every page', model: { provider: 'scripted', script }, budgets: { turns: FORK_TURNS + 10, toolCalls: FORK_TURNS + 10 } }, { taskId: origin });
    await h.client.result(origin);
    const originSeconds = (Date.now() - started) / 1_000;

    // Each fork answers at once: what is measured is the start, not its work.
    const forkScript = h.script(Array.from({ length: FORK_TURNS + 2 }, () => answer('fork done')));
    const readyMs: number[] = [];
    for (let i = 0; i < FORKS; i++) {
      const t0 = performance.now();
      const fork = await h.client.fork(origin, FORK_AT, { model: { provider: 'scripted', script: forkScript }, blobStore: h.blobStore });
      await statusWhen(h, fork.taskId, (s) => s.turn > FORK_AT, 60_000);
      readyMs.push(performance.now() - t0);
      await h.client.result(fork.taskId);
    }

    const converter = h.client.client.options.loadedDataConverter;
    const bytes: number[] = [];
    for (const run of await runsOf(h.client, origin)) {
      for (const event of run.history.events ?? []) {
        const scheduled = event.activityTaskScheduledEventAttributes;
        if (scheduled?.activityType?.name !== 'callModel') continue;
        const call = await decodeFromPayloadsAtIndex<CallModelInput>(converter, 0, scheduled.input?.payloads ?? []);
        bytes.push(Buffer.byteLength(JSON.stringify(call.checkpoint ?? {})));
      }
    }

    const point = await readForkPoint(h.client.client, { taskId: origin, turn: FORK_AT });
    const input: TaskInput = { agent: 'long', prompt: 'read every page' };
    const state = restoreTask(input, { now: () => new Date(), newId: () => 'id' }, point.snapshot);
    state.turn = FORK_AT + 1;
    const ms: number[] = [];
    for (let i = 0; i < 1_000; i++) {
      const t0 = performance.now();
      JSON.stringify(checkpointOf(state));
      ms.push(performance.now() - t0);
    }
    return {
      turns: FORK_TURNS,
      forkAt: FORK_AT,
      originSeconds,
      originMsPerTurn: Math.round((originSeconds * 1_000) / FORK_TURNS),
      forkReadyMs: summarize(readyMs, 0),
      checkpointBytes: summarize(bytes, 0),
      checkpointMs: summarize(ms, 3),
      loadAverage: { before: loadBefore, after: os.loadavg() },
      targets: { forkReadyMs: 5_000, checkpointBytes: 20_000, checkpointMs: 2 },
    };
  } finally {
    await worker.stop();
  }
}

export function forkTable(r: ForkBenchmark): string {
  return [
    '| measure | median | p95 | max | target |',
    '|---|---|---|---|---|',
    `| fork at turn ${r.forkAt} of ${r.turns}, ready to run (ms, n=${r.forkReadyMs.n}) | ${r.forkReadyMs.median} | ${r.forkReadyMs.p95} | ${r.forkReadyMs.max} | < ${r.targets.forkReadyMs} |`,
    `| checkpoint per turn in history (bytes, n=${r.checkpointBytes.n}) | ${r.checkpointBytes.median} | ${r.checkpointBytes.p95} | ${r.checkpointBytes.max} | < ${r.targets.checkpointBytes} |`,
    `| checkpoint per turn, build + serialize (ms, n=${r.checkpointMs.n}) | ${r.checkpointMs.median} | ${r.checkpointMs.p95} | ${r.checkpointMs.max} | < ${r.targets.checkpointMs} |`,
    '',
    `Origin: ${r.turns} turns in ${r.originSeconds.toFixed(1)} s (${r.originMsPerTurn} ms a turn). Load average before ${r.loadAverage.before.map((l) => l.toFixed(2)).join(' ')}, after ${r.loadAverage.after.map((l) => l.toFixed(2)).join(' ')}.`,
  ].join('\n');
}
