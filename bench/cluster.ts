/**
 * `npm run bench -- cluster`: the same workload on the multi-shard cluster (`npm run cluster`:
 * Temporal 1.29.1 built from its Go module, 4 history shards, PostgreSQL) and on the embedded dev
 * server (the same server version, one shard, SQLite in WAL mode), each with two
 * `durable-agent worker` processes:
 * - throughput: N bench tasks (scripted model, five zero-latency echo calls each) started at once,
 *   timed from the first start to the last result, for N = 1, 10, 100, 1,000;
 * - SIGKILL under load: refund tasks on two workers, one killed after a quarter have finished; every
 *   task must complete with its refund applied once; the time from the kill to the last result, and
 *   for each task the dead worker held, from the kill to its next completed workflow task.
 * The cluster is reused when it runs, else started and stopped again.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { up, stop } from '../scripts/cluster/cluster';
import { DEFAULT_HISTORY_SHARDS } from '../scripts/cluster/layout';
import { startDevServer } from '../src/server/dev-server';
import { ECHO_CALLS_PER_TASK, killUnderLoad, loadOrders, openSession, runEchoTasks, type Target } from '../test/cluster/workload';
import { installQuietRuntime } from '../test/support/quiet-runtime';
import { summarize, type Summary } from './stats';

export const CLUSTER_LEVELS = [1, 10, 100, 1_000];
export const KILL_UNDER_LOAD_TASKS = 200;

export interface ClusterThroughputRow {
  target: string;
  concurrentTasks: number;
  seconds: number;
  tasksPerSecond: number;
  toolCallsPerSecond: number;
  /** The machine's 1-minute load average right after the run (2 cores; other work shares them). */
  loadAverage: number;
}

export interface ClusterKillRow {
  target: string;
  tasks: number;
  completedBeforeKill: number;
  answered: number;
  /** Orders refunded other than exactly once (0 means none lost, none doubled). */
  ordersNotRefundedOnce: number;
  refundRequests: number;
  movedTasks: number;
  retriedCalls: number;
  workflowTaskTimeouts: number;
  /** SIGKILL -> last result. */
  drainSeconds: number;
  /** Per task the dead worker held: SIGKILL -> its next completed workflow task (ms). */
  resumeMs: Summary;
  totalSeconds: number;
  loadAverage: number;
}

export interface ClusterBenchResult {
  cluster: { serverVersion: string; historyShards: number; store: string };
  devServer: { historyShards: 1; store: string };
  workers: number;
  toolCallsPerTask: number;
  throughput: ClusterThroughputRow[];
  killUnderLoad: ClusterKillRow[];
}

function killRow(target: string, r: Awaited<ReturnType<typeof killUnderLoad>>): ClusterKillRow {
  return {
    target,
    tasks: r.tasks,
    completedBeforeKill: r.completedBeforeKill,
    answered: r.answered,
    ordersNotRefundedOnce: [...r.effectsPerOrder.values()].filter((n) => n !== 1).length,
    refundRequests: r.writeRequests,
    movedTasks: r.movedTasks,
    retriedCalls: r.retriedToolCalls,
    workflowTaskTimeouts: r.workflowTaskTimeouts,
    drainSeconds: Number((r.drainMs / 1000).toFixed(2)),
    resumeMs: summarize(r.resumeMs, 0),
    totalSeconds: Number(r.totalSeconds.toFixed(2)),
    loadAverage: Number(os.loadavg()[0]!.toFixed(1)),
  };
}

/**
 * Both targets run side by side and each level runs on one, then the other (alternating which goes
 * first): on a machine shared with other work, a change of load then hits both contestants alike.
 */
export async function measureCluster(log: (line: string) => void = (l) => console.log(l)): Promise<ClusterBenchResult> {
  installQuietRuntime();
  const { state, started } = await up({ log: (line) => log(`  [cluster] ${line}`) });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-bench-dev-'));
  const dev = await startDevServer({ dbFile: path.join(dir, 'temporal.db'), logFile: path.join(dir, 'server.log') });
  const targets: Target[] = [
    { name: 'cluster', address: state.address, namespace: state.namespace, blobStore: state.blobStore },
    { name: 'dev server', address: dev.address, namespace: dev.namespace, blobStore: `file:${path.join(dir, 'blobs')}` },
  ];
  try {
    const throughput: ClusterThroughputRow[] = [];
    const sessions = await Promise.all(targets.map((t) => openSession(t)));
    try {
      for (const s of sessions) {
        s.spawnWorker();
        s.spawnWorker();
      }
      await Promise.all(sessions.map((s) => s.waitForWorkers(2)));
      // A first small run warms the workers (bundle loaded, connections up) so N=1 measures a task.
      for (const s of sessions) await runEchoTasks(s, 4);
      for (const [i, n] of CLUSTER_LEVELS.entries()) {
        for (const s of i % 2 === 0 ? sessions : [...sessions].reverse()) {
          const { seconds } = await runEchoTasks(s, n);
          const row: ClusterThroughputRow = {
            target: s.target.name,
            concurrentTasks: n,
            seconds: Number(seconds.toFixed(2)),
            tasksPerSecond: Number((n / seconds).toFixed(1)),
            toolCallsPerSecond: Number(((n * ECHO_CALLS_PER_TASK) / seconds).toFixed(1)),
            loadAverage: Number(os.loadavg()[0]!.toFixed(1)),
          };
          throughput.push(row);
          log(`  ${row.target}: ${n} tasks in ${row.seconds} s: ${row.tasksPerSecond} tasks/s, ${row.toolCallsPerSecond} tool calls/s (load average ${row.loadAverage})`);
        }
      }
    } finally {
      await Promise.all(sessions.map((s) => s.close()));
    }
    const killUnderLoadRows: ClusterKillRow[] = [];
    for (const t of targets) {
      const k = await openSession(t, { orders: loadOrders(KILL_UNDER_LOAD_TASKS) });
      try {
        const row = killRow(t.name, await killUnderLoad(k, KILL_UNDER_LOAD_TASKS, KILL_UNDER_LOAD_TASKS / 4));
        killUnderLoadRows.push(row);
        log(
          `  ${row.target}: SIGKILL after ${row.completedBeforeKill}/${row.tasks}: ${row.answered} answered, ${row.ordersNotRefundedOnce} orders not refunded exactly once, ` +
            `${row.movedTasks} tasks moved, last result ${row.drainSeconds} s after the kill; held tasks resumed after median ${row.resumeMs.median} ms, max ${row.resumeMs.max} ms (n=${row.resumeMs.n})`,
        );
      } finally {
        await k.close();
      }
    }
    return {
      cluster: { serverVersion: state.serverVersion, historyShards: state.historyShards ?? DEFAULT_HISTORY_SHARDS, store: 'PostgreSQL (fsync on), blob store in PostgreSQL' },
      devServer: { historyShards: 1, store: 'SQLite file (WAL, synchronous=normal), blob store in a folder' },
      workers: 2,
      toolCallsPerTask: ECHO_CALLS_PER_TASK,
      throughput,
      killUnderLoad: killUnderLoadRows,
    };
  } finally {
    await dev.stop();
    rmSync(dir, { recursive: true, force: true });
    if (started) await stop({ log: () => undefined });
  }
}

/** The Markdown tables of docs/cluster.md. */
export function clusterTables(r: ClusterBenchResult): string {
  const levels = [...new Set(r.throughput.map((t) => t.concurrentTasks))];
  const cell = (target: string, n: number) => {
    const row = r.throughput.find((t) => t.target === target && t.concurrentTasks === n);
    return row ? `${row.tasksPerSecond} tasks/s (${row.toolCallsPerSecond} tool calls/s, ${row.seconds} s)` : 'n/a';
  };
  const load = (n: number) =>
    r.throughput
      .filter((t) => t.concurrentTasks === n)
      .map((t) => t.loadAverage)
      .join(' / ');
  const throughput = [
    `| tasks started at once | cluster (${r.cluster.historyShards} shards, PostgreSQL) | dev server (1 shard, SQLite) | machine load average after each run |`,
    '|---:|---:|---:|---:|',
    ...levels.map((n) => `| ${n.toLocaleString('en-US')} | ${cell('cluster', n)} | ${cell('dev server', n)} | ${load(n)} |`),
  ].join('\n');
  const kill = [
    '| target | tasks | done at the kill | answered | orders not refunded exactly once | refund requests | calls retried | workflow tasks timed out | SIGKILL -> held task resumed: median | max | SIGKILL -> last result |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...r.killUnderLoad.map(
      (k) =>
        `| ${k.target} | ${k.tasks} | ${k.completedBeforeKill} | ${k.answered} | ${k.ordersNotRefundedOnce} | ${k.refundRequests} | ${k.retriedCalls} | ${k.workflowTaskTimeouts} | ${(k.resumeMs.median / 1000).toFixed(2)} s | ${(k.resumeMs.max / 1000).toFixed(2)} s | ${k.drainSeconds.toFixed(2)} s |`,
    ),
  ].join('\n');
  return `${throughput}\n\n${kill}`;
}
