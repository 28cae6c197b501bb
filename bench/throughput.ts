/**
 * Throughput: N tasks started at once on one worker (the bench agent, zero-latency model and tool,
 * five tool calls each), timed from the first start to the last result.
 */
import type { Harness } from '../test/support/harness';
import { DEFAULT_MAX_CACHED_WORKFLOWS } from '../src/worker/create-worker';
import { BENCH_AGENT, createBenchAgent, EchoModel } from './bench-agent';

export const TOOL_CALLS_PER_TASK = 5;

export interface ThroughputRow {
  concurrentTasks: number;
  maxCachedWorkflows: number;
  seconds: number;
  tasksPerSecond: number;
  toolCallsPerSecond: number;
}

export const WORKER_SETTINGS = {
  maxConcurrentWorkflowTaskExecutions: 'SDK default (40)',
  maxConcurrentActivityTaskExecutions: 'SDK default (100)',
};

async function inChunks<T>(items: T[], size: number, each: (item: T) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(each));
}

export async function measureThroughput(h: Harness, levels = [1, 10, 100, 1_000], maxCachedWorkflows = DEFAULT_MAX_CACHED_WORKFLOWS): Promise<ThroughputRow[]> {
  const worker = await h.worker([createBenchAgent()], {
    models: { echo: new EchoModel(TOOL_CALLS_PER_TASK) },
    workerOptions: { maxCachedWorkflows },
  });
  return worker.runUntil(async () => {
    const rows: ThroughputRow[] = [];
    for (const n of levels) {
      const ids = Array.from({ length: n }, () => h.taskId(`load${n}`));
      const t0 = performance.now();
      await inChunks(ids, 100, (taskId) => h.client.start({ agent: BENCH_AGENT, prompt: 'go', model: { provider: 'custom', name: 'echo' } }, { taskId }));
      await inChunks(ids, 100, async (taskId) => {
        const result = await h.client.result(taskId);
        if (result.toolCalls !== TOOL_CALLS_PER_TASK) throw new Error(`${taskId} made ${result.toolCalls} tool calls`);
      });
      const seconds = (performance.now() - t0) / 1000;
      rows.push({
        concurrentTasks: n,
        maxCachedWorkflows,
        seconds: Number(seconds.toFixed(2)),
        tasksPerSecond: Number((n / seconds).toFixed(1)),
        toolCallsPerSecond: Number(((n * TOOL_CALLS_PER_TASK) / seconds).toFixed(1)),
      });
      console.log(`  ${n} concurrent tasks, cache ${maxCachedWorkflows}: ${rows.at(-1)!.tasksPerSecond} tasks/s, ${rows.at(-1)!.toolCallsPerSecond} tool calls/s`);
    }
    return rows;
  });
}
