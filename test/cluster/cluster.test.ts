/**
 * The multi-shard cluster that `npm run cluster` runs (PostgreSQL + Temporal built from its Go module,
 * several history shards, two worker processes). Opt-in: `npm run test:cluster` (its own lane in
 * test/lanes.js; npm test leaves it out). Brings the cluster up when none runs (a first run builds Temporal with Go:
 * many minutes) and stops it afterwards; a cluster that was already running is reused and left running.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@temporalio/client';
import { Client as PgClient } from 'pg';
import { up, stop, type ClusterState } from '../../scripts/cluster/cluster';
import { DEFAULT_HISTORY_SHARDS, TEMPORAL_DB, clusterPaths, pgUrl } from '../../scripts/cluster/layout';
import { connectClient } from '../../src/client/client-connection';
import { TaskClient } from '../../src/client/task-client';
import { createDataConverter } from '../../src/codec';
import { provisionTemporalCli } from '../../src/server/temporal-cli';
import { answer, callTool } from '../support/harness';
import { runCli, sigkill, spawnCli, waitFor } from '../support/processes';
import { installQuietRuntime } from '../support/quiet-runtime';
import { killUnderLoad, loadOrders, openSession, REFUND_CENTS, type WorkloadSession } from './workload';

const run = promisify(execFile);
const TASKS_UNDER_LOAD = 150;

let cluster: ClusterState;
let startedHere = false;
let session: WorkloadSession;

beforeAll(async () => {
  installQuietRuntime();
  const { state, started } = await up({ log: (line) => process.stderr.write(`[cluster] ${line}\n`) });
  cluster = state;
  startedHere = started;
  session = await openSession({ name: 'cluster', address: cluster.address, namespace: cluster.namespace, blobStore: cluster.blobStore }, { orders: loadOrders(TASKS_UNDER_LOAD) });
}, 40 * 60_000);

afterAll(async () => {
  await session?.close();
  if (startedHere) await stop({ log: () => undefined });
}, 120_000);

test(`the server runs ${DEFAULT_HISTORY_SHARDS} history shards on PostgreSQL, as the temporal CLI's cluster describe reports`, async () => {
  const cli = await provisionTemporalCli();
  const { stdout } = await run(cli, ['operator', 'cluster', 'describe', '--address', cluster.address, '--output', 'json']);
  const described = JSON.parse(stdout) as { historyShardCount?: number; persistenceStore?: string; visibilityStore?: string; serverVersion?: string };
  expect(described.historyShardCount).toBe(DEFAULT_HISTORY_SHARDS);
  expect(described.historyShardCount).toBeGreaterThan(1);
  expect(described.persistenceStore).toBe('postgres12');
  expect(described.visibilityStore).toBe('postgres12');
  expect(described.serverVersion).toBe(cluster.serverVersion);
});

test("the cluster's own two worker processes poll the durable-agent task queue and run a demo task end to end", async () => {
  const connection = await connectClient({ address: cluster.address });
  try {
    const described = await connection.workflowService.describeTaskQueue({ namespace: cluster.namespace, taskQueue: { name: cluster.taskQueue }, taskQueueType: 1 });
    const workerPids = cluster.processes.filter((p) => p.name.startsWith('worker-')).map((p) => String(p.pid));
    expect(workerPids).toHaveLength(2);
    const polling = new Set((described.pollers ?? []).map((p) => (p.identity ?? '').split('@')[0]));
    for (const pid of workerPids) expect(polling).toContain(pid);

    // The cluster's workers read scripts from its scripts folder; they call the cluster's orders service.
    const script = path.join(clusterPaths().scripts, `test-${Date.now()}.json`);
    writeFileSync(script, JSON.stringify({ description: 'cluster test', turns: [callTool('search_orders', { customer_id: 'C-1001' }), answer('found them')] }));
    const client = new TaskClient(new Client({ connection, namespace: cluster.namespace, dataConverter: createDataConverter() }), cluster.taskQueue);
    const taskId = `cluster-demo-${Date.now()}`;
    await client.start({ agent: 'demo', prompt: 'find C-1001 orders', model: { provider: 'scripted', script } }, { taskId });
    expect(await client.result(taskId)).toMatchObject({ outcome: 'answered', text: 'found them', toolCalls: 1 });
  } finally {
    await connection.close();
  }
}, 120_000);

test(
  'deploy status, check, promote and rollback on the cluster: its workers are one versioned build; a second build is checked, promoted, runs a new task, and is rolled back',
  async () => {
    const env = { TEMPORAL_ADDRESS: cluster.address, TEMPORAL_NAMESPACE: cluster.namespace };
    const status = async () => {
      const shown = await runCli(['deploy', 'status', '--json'], env);
      expect(shown.code).toBe(0);
      return JSON.parse(shown.stdout) as { current: string; builds: { buildId: string; state: string }[] };
    };
    const first = (await status()).current;
    expect(first).toBeTruthy();
    const buildId = `cluster-v2-${Date.now()}`;
    const v2 = spawnCli(['worker', '--build-id', buildId], env);
    try {
      await waitFor('the server to know the second build', async () => (await status()).builds.some((b) => b.buildId === buildId) || undefined, 90_000);
      const check = await runCli(['deploy', 'check', '.', '--build', buildId, '--json'], env, 180_000);
      expect(check.code).toBe(0);
      expect(JSON.parse(check.stdout)).toMatchObject({ passed: true, buildId });
      expect((await runCli(['deploy', 'promote', buildId], env)).code).toBe(0);
      expect((await status()).current).toBe(buildId);

      const connection = await connectClient({ address: cluster.address });
      try {
        const script = path.join(clusterPaths().scripts, `deploy-${Date.now()}.json`);
        writeFileSync(script, JSON.stringify({ description: 'cluster deploy test', turns: [answer('on the second build')] }));
        const client = new TaskClient(new Client({ connection, namespace: cluster.namespace, dataConverter: createDataConverter() }), cluster.taskQueue);
        const taskId = `cluster-deploy-${Date.now()}`;
        await client.start({ agent: 'demo', prompt: 'hi', model: { provider: 'scripted', script } }, { taskId });
        expect(await client.result(taskId)).toMatchObject({ outcome: 'answered', text: 'on the second build' });
        expect((await client.status(taskId)).build).toEqual({ deploymentName: 'durable-agent', buildId });
      } finally {
        await connection.close();
      }

      expect((await runCli(['deploy', 'rollback'], env)).code).toBe(0);
      expect((await status()).current).toBe(first);
    } finally {
      await sigkill(v2);
    }
  },
  8 * 60_000,
);

test(
  `${TASKS_UNDER_LOAD} concurrent refund tasks, one of two worker processes SIGKILLed under load: every task completes, each refund takes effect exactly once, and the tasks spread over several shards`,
  async () => {
    const r = await killUnderLoad(session, TASKS_UNDER_LOAD, Math.floor(TASKS_UNDER_LOAD / 4));
    // The kill came while most tasks were still running...
    expect(r.completedBeforeKill).toBeLessThan(TASKS_UNDER_LOAD);
    expect(r.movedTasks).toBeGreaterThan(0);
    // ...and nothing was lost: every task answered, every order refunded once, never twice.
    expect(r.completed).toBe(TASKS_UNDER_LOAD);
    expect(r.answered).toBe(TASKS_UNDER_LOAD);
    expect([...r.effectsPerOrder.values()].every((n) => n === 1)).toBe(true);
    expect(session.orders.effects.filter((e) => e.kind === 'refund' && r.effectsPerOrder.has(e.order_id)).every((e) => e.amount_cents === REFUND_CENTS)).toBe(true);

    // The executions live on several shards of the server's database, not one.
    const pg = new PgClient({ connectionString: pgUrl(TEMPORAL_DB) });
    await pg.connect();
    try {
      const { rows } = await pg.query<{ shards: string }>("SELECT count(DISTINCT shard_id) AS shards FROM executions WHERE workflow_id LIKE 'refund-%'");
      expect(Number(rows[0]!.shards)).toBeGreaterThan(1);
    } finally {
      await pg.end();
    }
    process.stderr.write(
      `[cluster] kill under load: ${r.completedBeforeKill}/${r.tasks} done at the kill; ${r.movedTasks} tasks moved to the survivor; ` +
        `${r.retriedToolCalls} calls retried (${JSON.stringify(r.retriedByActivity)}), ${r.workflowTaskTimeouts} workflow tasks timed out on the dead worker; ` +
        `slowest held task resumed ${r.slowestResume.ms} ms after the kill (retried there: ${r.slowestResume.retried.join(', ') || 'none'}); ` +
        `${r.writeRequests} refund requests for ${r.tasks} refunds\n`,
    );
  },
  20 * 60_000,
);
