/**
 * `npm run bench -- cluster-recovery`: the recovery bench's "standby worker" case (bench/recovery.ts)
 * on the multi-shard cluster of `npm run cluster` (PostgreSQL, 4 history shards) and, in the same
 * run, on the embedded dev server. Two warm `durable-agent worker` processes poll the queue; a task's
 * search is held by the orders service, the worker running it is SIGKILLed, and the times are read
 * from the task's history (event times: the bench's own polling does not count): the retried call
 * completed, and the task's next completed workflow task (its next step). The dead worker is
 * replaced and the pair warmed again before the next sample (the replacement polling: the server
 * lists a killed worker's polls for a while, so only live workers' identities count). The cluster is reused when it runs,
 * else started and stopped again.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stop, up } from '../scripts/cluster/cluster';
import { startDevServer } from '../src/server/dev-server';
import { HEARTBEAT_TIMEOUT_MS } from '../src/workflows/base/activity-options';
import { openSession, runEchoTasks, type Target, type WorkloadSession } from '../test/cluster/workload';
import { REFUNDS_AGENT } from '../test/cluster/load-agents';
import { answer, callTool } from '../test/support/harness';
import { waitFor } from '../test/support/processes';
import { installQuietRuntime } from '../test/support/quiet-runtime';
import { killCallRunner, RECOVERY_TARGET_MS, recoveryFromHistory, type RecoverySample } from './recovery';
import { summarize, type Summary } from './stats';

export interface ClusterRecoveryRow {
  target: string;
  samples: RecoverySample[];
  /** SIGKILL -> the retried call's ActivityTaskCompleted. */
  toolCompletedMs: Summary;
  /** SIGKILL -> the task's next WorkflowTaskCompleted: what a user waits for. */
  workflowTaskCompletedMs: Summary;
}

export interface ClusterRecoveryResult {
  heartbeatTimeoutMs: number;
  targetMs: number;
  rows: ClusterRecoveryRow[];
  loadAverage: { start: number[]; end: number[] };
}

/** Both workers polling and warm: a few short tasks until each of the two has run a workflow task. */
async function warmPair(s: WorkloadSession): Promise<void> {
  while (s.workers.filter((w) => w.exitCode === null && w.signalCode === null).length < 2) s.spawnWorker();
  await s.waitForWorkers(2);
  await runEchoTasks(s, 6);
}

/** One sample: a held search, its worker SIGKILLed, the recovery read from history. */
async function killRunner(s: WorkloadSession): Promise<RecoverySample> {
  s.orders.clearFaults();
  s.orders.inject({ kind: 'slow', delayMs: 30_000 }, 1);
  const before = s.orders.requests.length;
  const taskId = s.taskId('recovery');
  const script = s.script([callTool('search_orders', { customer_id: 'C-1001' }), answer('done')]);
  await s.client.start({ agent: REFUNDS_AGENT, prompt: 'recover', model: { provider: 'scripted', script } }, { taskId });
  await waitFor('the search to be in flight', () => s.orders.requests.length > before || undefined, 60_000);
  const killedAt = await killCallRunner(s.client, taskId, s.workers);
  await s.client.result(taskId);
  return recoveryFromHistory((await s.client.handle(taskId).fetchHistory()).events ?? [], killedAt);
}

async function measureTarget(target: Target, samples: number, log: (line: string) => void): Promise<ClusterRecoveryRow> {
  const s = await openSession(target);
  try {
    const taken: RecoverySample[] = [];
    for (let i = 0; i < samples; i++) {
      await warmPair(s);
      const sample = await killRunner(s);
      taken.push(sample);
      log(
        `  ${target.name}, run ${i + 1}: retry started ${sample.retryStartedMs} ms, call completed ${sample.toolCompletedMs} ms, next workflow task completed ${sample.workflowTaskCompletedMs} ms after SIGKILL`,
      );
    }
    return {
      target: target.name,
      samples: taken,
      toolCompletedMs: summarize(
        taken.map((t) => t.toolCompletedMs),
        0,
      ),
      workflowTaskCompletedMs: summarize(
        taken.map((t) => t.workflowTaskCompletedMs),
        0,
      ),
    };
  } finally {
    await s.close();
  }
}

export async function measureClusterRecovery(options: { samples?: number; log?: (line: string) => void } = {}): Promise<ClusterRecoveryResult> {
  const log = options.log ?? ((line: string) => console.log(line));
  installQuietRuntime();
  const loadStart = os.loadavg();
  const { state, started } = await up({ log: (line) => log(`  [cluster] ${line}`) });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-bench-recovery-'));
  const dev = await startDevServer({ dbFile: path.join(dir, 'temporal.db'), logFile: path.join(dir, 'server.log') });
  try {
    const targets: Target[] = [
      { name: 'cluster', address: state.address, namespace: state.namespace, blobStore: state.blobStore },
      { name: 'dev server', address: dev.address, namespace: dev.namespace, blobStore: `file:${path.join(dir, 'blobs')}` },
    ];
    const rows: ClusterRecoveryRow[] = [];
    for (const target of targets) rows.push(await measureTarget(target, options.samples ?? 5, log));
    return { heartbeatTimeoutMs: HEARTBEAT_TIMEOUT_MS, targetMs: RECOVERY_TARGET_MS, rows, loadAverage: { start: loadStart, end: os.loadavg() } };
  } finally {
    await dev.stop();
    rmSync(dir, { recursive: true, force: true });
    if (started) await stop({ log: () => undefined });
  }
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

export function clusterRecoveryTable(r: ClusterRecoveryResult): string {
  const lines = [
    '| target | runs | SIGKILL -> call completed on the standby: median | max | SIGKILL -> next workflow task completed: median | max |',
    '|---|---:|---:|---:|---:|---:|',
    ...r.rows.map(
      (row) =>
        `| ${row.target} | ${row.samples.length} | ${seconds(row.toolCompletedMs.median)} | ${seconds(row.toolCompletedMs.max)} | ${seconds(row.workflowTaskCompletedMs.median)} | ${seconds(row.workflowTaskCompletedMs.max)} |`,
    ),
  ];
  const load = (l: number[]) => l.map((x) => x.toFixed(1)).join(' / ');
  return `${lines.join('\n')}\n\nTarget under ${r.targetMs / 1000} s; the dead-worker watch on (the default: the standby, on the same machine, fails the dead process's call), heartbeat timeout ${r.heartbeatTimeoutMs / 1000} s; two warm worker processes, each polling before the kill, the one running the call SIGKILLed; load average ${load(r.loadAverage.start)} at the start, ${load(r.loadAverage.end)} at the end (1 / 5 / 15 min, 2 cores).`;
}
