/**
 * Worker memory with many tasks waiting for a person: a `durable-agent worker` child process, N
 * tasks each parked on an approval, RSS read from /proc before and after. Waiting tasks should leave
 * the worker's workflow cache (bounded by maxCachedWorkflows), so RSS must not grow with N.
 */
import { readFileSync } from 'node:fs';
import { spawnWorker, startHarness, type Harness } from '../test/support/harness';
import { waitFor } from '../test/support/processes';

export interface MemoryRow {
  waitingTasks: number;
  workerRssMb: number;
  /** RSS minus the idle worker's: what the waiting tasks cost. */
  aboveIdleMb: number;
  secondsToPark: number;
}

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function countWaiting(h: Harness): Promise<number> {
  const res = await h.client.client.workflowService.countWorkflowExecutions({
    namespace: 'default',
    query: `WorkflowType = 'agentTask' AND AgentStatus = 'awaiting_approval' AND TaskQueue = '${h.taskQueue}'`,
  });
  return Number(res.count);
}

export async function measureWaitingMemory(levels: number[]): Promise<MemoryRow[]> {
  const h = await startHarness();
  const worker = spawnWorker(h);
  const rows: MemoryRow[] = [];
  try {
    let stderr = '';
    worker.stderr!.on('data', (d) => (stderr += d));
    await waitFor('the worker to start', () => stderr.includes('worker: '), 60_000);
    const script = h.script([{ content: [{ type: 'tool_use', name: 'delete_file', input: { path: 'inbox/customer-note.txt' } }] }, { content: [{ type: 'text', text: 'done' }] }]);
    let started = 0;
    for (const level of levels) {
      const t0 = Date.now();
      while (started < level) {
        const batch = Math.min(50, level - started);
        await Promise.all(
          Array.from({ length: batch }, (_, i) => h.client.start({ agent: 'demo', prompt: 'wait for me', model: { provider: 'scripted', script } }, { taskId: `wait-${started + i}` })),
        );
        started += batch;
      }
      while ((await countWaiting(h)) < level) await sleep(1_000);
      const secondsToPark = (Date.now() - t0) / 1000;
      await sleep(5_000); // let the worker settle and collect garbage
      const rss = Math.round(rssMb(worker.pid!));
      rows.push({ waitingTasks: level, workerRssMb: rss, aboveIdleMb: rss - (rows[0]?.workerRssMb ?? rss), secondsToPark: Math.round(secondsToPark) });
      console.log(`  ${level} waiting: worker RSS ${rss} MB (${rows.at(-1)!.aboveIdleMb} MB above idle), parked in ${rows.at(-1)!.secondsToPark} s`);
    }
  } finally {
    worker.kill('SIGTERM');
    await new Promise((r) => worker.on('exit', r));
    await h.close();
  }
  return rows;
}
