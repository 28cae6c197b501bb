/**
 * One workload, run the same way on the multi-shard cluster and on the embedded dev server: two
 * `durable-agent worker` processes (the load-agents.ts module) on a task queue of their own, a
 * scripted model, a shared blob store, and an in-process orders service whose effect log says what
 * really happened. Used by test/cluster/*.test.ts (assertions) and bench/cluster.ts (timings).
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, type Connection } from '@temporalio/client';
import { connectClient } from '../../src/client/client-connection';
import { TaskClient } from '../../src/client/task-client';
import { createDataConverter } from '../../src/codec';
import type { ModelScript } from '../../src/models/scripted-model';
import { OrdersService, sampleOrders, type Order } from '../../src/testing/orders-service';
import { answer, callTool } from '../support/harness';
import { sigkill, spawnCli, waitFor } from '../support/processes';
import { REFUNDS_AGENT } from './load-agents';

const AGENTS_MODULE = path.join(__dirname, 'load-agents.ts');

/** Orders the refund tasks refund, one each: O-5000, O-5001, ... (ids the tool's schema accepts). */
export function loadOrders(count: number): Order[] {
  return Array.from({ length: count }, (_, i) => ({ id: `O-${5000 + i}`, customer_id: 'C-LOAD', total_cents: 10_000, status: 'delivered' as const }));
}

export const REFUND_CENTS = 2_500;

export interface Target {
  /** "cluster" or "dev server": how results name it. */
  name: string;
  address: string;
  namespace: string;
  /** DURABLE_AGENT_BLOB_STORE for the workers. */
  blobStore: string;
}

export interface WorkloadSession {
  target: Target;
  client: TaskClient;
  taskQueue: string;
  orders: OrdersService;
  /** Scripted-model files go here; the workers may read them (DURABLE_AGENT_SCRIPT_DIRS). */
  scriptDir: string;
  workers: ChildProcess[];
  /** Writes a scripted model file and returns its path. */
  script(turns: ModelScript['turns']): string;
  taskId(prefix: string): string;
  /** Starts a `durable-agent worker` process on this session's queue. */
  spawnWorker(): ChildProcess;
  /** Waits until `count` worker processes poll this session's queue for workflow tasks. */
  waitForWorkers(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function openSession(target: Target, options: { orders?: Order[] } = {}): Promise<WorkloadSession> {
  const scriptDir = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-cluster-'));
  const orders = new OrdersService({ orders: [...sampleOrders(), ...(options.orders ?? [])] });
  const ordersUrl = await orders.start();
  const connection: Connection = await connectClient({ address: target.address });
  const taskQueue = `cluster-${randomUUID().slice(0, 8)}`;
  const client = new TaskClient(new Client({ connection, namespace: target.namespace, dataConverter: createDataConverter() }), taskQueue);
  const workers: ChildProcess[] = [];
  const stderrTails = new Map<ChildProcess, () => string>();
  let scripts = 0;
  return {
    target,
    client,
    taskQueue,
    orders,
    scriptDir,
    workers,
    script(turns) {
      const file = path.join(scriptDir, `script-${++scripts}.json`);
      writeFileSync(file, JSON.stringify({ description: 'cluster workload script', turns }));
      return file;
    },
    taskId: (prefix) => `${prefix}-${randomUUID().slice(0, 8)}`,
    spawnWorker() {
      const child = spawnCli(
        // A deployment of the session's own, whose first build makes itself current: on a cluster kept
        // from an earlier run, the shared deployment's current build may be one no worker runs any more.
        [
          'worker',
          '--address',
          target.address,
          '--namespace',
          target.namespace,
          '--task-queue',
          taskQueue,
          '--deployment',
          taskQueue,
          '--workspace',
          path.join(scriptDir, 'workspace'),
          '--agents',
          AGENTS_MODULE,
        ],
        // The agents module takes the orders service from ORDERS_URL (--orders-url is the demo's own flag).
        { DURABLE_AGENT_SCRIPT_DIRS: scriptDir, DURABLE_AGENT_BLOB_STORE: target.blobStore, ORDERS_URL: ordersUrl },
      );
      // Keep the pipes drained (a worker blocked on a full pipe would stall the workload) and the
      // last lines of stderr, for the message when a worker dies unexpectedly.
      child.stdout!.resume();
      let tail = '';
      child.stderr!.on('data', (d: Buffer) => (tail = (tail + d.toString()).slice(-2_000)));
      stderrTails.set(child, () => tail);
      workers.push(child);
      return child;
    },
    async waitForWorkers(count, timeoutMs = 180_000) {
      await waitFor(
        `${count} workers polling ${taskQueue}`,
        async () => {
          const dead = workers.find((w) => w.exitCode !== null && w.signalCode === null);
          if (dead) throw new Error(`a worker exited with code ${dead.exitCode} before polling:\n${stderrTails.get(dead)?.()}`);
          const described = await connection.workflowService.describeTaskQueue({ namespace: target.namespace, taskQueue: { name: taskQueue }, taskQueueType: 1 });
          // Only live workers count: the server lists a killed worker's polls for a while after its death.
          const live = new Set(workers.filter((w) => w.exitCode === null && w.signalCode === null).map((w) => `${w.pid}@${os.hostname()}`));
          return new Set((described.pollers ?? []).map((p) => p.identity).filter((id) => live.has(id ?? ''))).size >= count || undefined;
        },
        timeoutMs,
      );
    },
    async close() {
      await Promise.all(workers.map(sigkill));
      await orders.stop();
      await connection.close();
      rmSync(scriptDir, { recursive: true, force: true });
    },
  };
}

/** A worker's identity as the TypeScript SDK sets it by default: `<pid>@<hostname>`. */
export const identityOf = (child: ChildProcess) => `${child.pid}@${os.hostname()}`;

async function inChunks<T>(items: T[], size: number, each: (item: T) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(each));
}

export const ECHO_CALLS_PER_TASK = 5;

/** N bench tasks (five echo calls each) started at once; seconds from the first start to the last result. */
export async function runEchoTasks(s: WorkloadSession, n: number): Promise<{ seconds: number }> {
  const script = s.script([...Array.from({ length: ECHO_CALLS_PER_TASK }, (_, i) => callTool('echo', { n: i })), answer('echoed')]);
  const ids = Array.from({ length: n }, () => s.taskId(`echo${n}`));
  const t0 = performance.now();
  await inChunks(ids, 100, (taskId) => s.client.start({ agent: 'bench', prompt: 'go', model: { provider: 'scripted', script } }, { taskId }));
  await inChunks(ids, 100, async (taskId) => {
    const result = await s.client.result(taskId);
    if (result.outcome !== 'answered' || result.toolCalls !== ECHO_CALLS_PER_TASK) throw new Error(`${taskId}: ${JSON.stringify(result)}`);
  });
  return { seconds: (performance.now() - t0) / 1000 };
}

export interface KillUnderLoadResult {
  tasks: number;
  /** Tasks whose result had arrived when the worker was killed. */
  completedBeforeKill: number;
  completed: number;
  answered: number;
  /** Refund effects per order, from the orders service's own log. */
  effectsPerOrder: Map<string, number>;
  /** Write requests that reached the service (retries included; a repeated key is replayed, not applied). */
  writeRequests: number;
  /** Tasks still running at the kill that the killed worker had worked on: they finished on the survivor. */
  movedTasks: number;
  /** Tool or model calls the killed worker was running, run again on the survivor (attempt 2). */
  retriedToolCalls: number;
  /** The same, per activity type (callModel, runTool, describeAgent, ...). */
  retriedByActivity: Record<string, number>;
  /** Workflow tasks the killed worker held (on its sticky queue or mid-task) that timed out and moved. */
  workflowTaskTimeouts: number;
  /** Per task the killed worker held: SIGKILL -> its next completed workflow task (ms, from event times). */
  resumeMs: number[];
  /** The held task that took longest to resume, and the activities retried in it. */
  slowestResume: { ms: number; taskId?: string; retried: string[] };
  /** SIGKILL -> the last task's result (ms). */
  drainMs: number;
  totalSeconds: number;
}

type HistoryEvent = NonNullable<Awaited<ReturnType<ReturnType<TaskClient['handle']>['fetchHistory']>>['events']>[number];
const timeOf = (e: HistoryEvent) => Number(e.eventTime!.seconds) * 1000 + Math.floor((e.eventTime!.nanos ?? 0) / 1e6);

/** The identity recorded on an event by the worker that handled it, where the event has one. */
function identityOfEvent(e: HistoryEvent): string | undefined {
  return (
    (e.workflowTaskStartedEventAttributes?.identity ??
      e.workflowTaskCompletedEventAttributes?.identity ??
      e.activityTaskStartedEventAttributes?.identity ??
      e.activityTaskCompletedEventAttributes?.identity ??
      undefined) ||
    undefined
  );
}

/**
 * `tasks` refund tasks (search, then refund its own order, then answer) on two worker processes; the
 * first is SIGKILLed once `killAfter` results are in, while the rest are still running. Returns what
 * happened, read from the results, the orders service's log and every task's history.
 */
export async function killUnderLoad(s: WorkloadSession, tasks: number, killAfter: number): Promise<KillUnderLoadResult> {
  const doomed = s.spawnWorker();
  s.spawnWorker();
  await s.waitForWorkers(2);
  const orderIds = loadOrders(tasks).map((o) => o.id);
  const ids = orderIds.map((orderId) => ({ orderId, taskId: s.taskId(`refund-${orderId}`) }));
  let done = 0;
  const t0 = performance.now();
  await inChunks(ids, 100, ({ orderId, taskId }) => {
    const script = s.script([
      callTool('search_orders', { customer_id: 'C-1001' }),
      callTool('refund_order', { order_id: orderId, amount_cents: REFUND_CENTS, reason: 'cluster load test' }),
      answer(`refunded ${orderId}`),
    ]);
    return s.client.start({ agent: REFUNDS_AGENT, prompt: `refund ${orderId}`, model: { provider: 'scripted', script } }, { taskId });
  });
  const results = Promise.all(
    ids.map(({ taskId }) =>
      s.client.result(taskId).then(
        (r) => {
          done++;
          return r;
        },
        (err: Error) => {
          done++;
          return { outcome: 'failed', error: err.message } as const;
        },
      ),
    ),
  );
  await waitFor(`${killAfter} results before the kill`, () => done >= killAfter || undefined, 600_000);
  const completedBeforeKill = done;
  const killedAt = Date.now();
  await sigkill(doomed);
  const outcomes = await results;
  const drainMs = Date.now() - killedAt;
  const totalSeconds = (performance.now() - t0) / 1000;

  const effectsPerOrder = new Map<string, number>(orderIds.map((id) => [id, 0]));
  for (const e of s.orders.effects) if (e.kind === 'refund' && effectsPerOrder.has(e.order_id)) effectsPerOrder.set(e.order_id, effectsPerOrder.get(e.order_id)! + 1);
  const dead = identityOf(doomed);
  let movedTasks = 0;
  let retriedToolCalls = 0;
  const retriedByActivity: Record<string, number> = {};
  let workflowTaskTimeouts = 0;
  const resumeMs: number[] = [];
  let slowest: { ms: number; taskId?: string; retried: string[] } = { ms: -1, retried: [] };
  await inChunks(ids, 20, async ({ taskId }) => {
    const events = (await s.client.handle(taskId).fetchHistory()).events ?? [];
    const after = events.filter((e) => timeOf(e) >= killedAt);
    if (after.length === 0) return; // finished before the kill
    if (events.some((e) => identityOfEvent(e) === dead)) movedTasks++;
    // What the dead worker held at the kill: a call it was running (retried: attempt 2 on the survivor)
    // or a workflow task (timed out on its sticky queue, or mid-task after the task timeout).
    const retriedStarts = after.filter((e) => (e.activityTaskStartedEventAttributes?.attempt ?? 0) >= 2);
    for (const started of retriedStarts) {
      const scheduledId = Number(started.activityTaskStartedEventAttributes!.scheduledEventId);
      const type = events.find((e) => Number(e.eventId) === scheduledId)?.activityTaskScheduledEventAttributes?.activityType?.name ?? 'unknown';
      retriedByActivity[type] = (retriedByActivity[type] ?? 0) + 1;
    }
    const retried = retriedStarts.length;
    const timeouts = after.filter((e) => e.workflowTaskTimedOutEventAttributes).length;
    retriedToolCalls += retried;
    workflowTaskTimeouts += timeouts;
    if (retried + timeouts > 0) {
      const next = after.find((e) => e.workflowTaskCompletedEventAttributes);
      if (next) {
        resumeMs.push(timeOf(next) - killedAt);
        if (timeOf(next) - killedAt > slowest.ms)
          slowest = {
            ms: timeOf(next) - killedAt,
            taskId,
            retried: retriedStarts
              .map((e) => Number(e.activityTaskStartedEventAttributes!.scheduledEventId))
              .map((id) => events.find((e) => Number(e.eventId) === id)?.activityTaskScheduledEventAttributes?.activityType?.name ?? 'unknown'),
          };
      }
    }
  });
  return {
    tasks,
    completedBeforeKill,
    completed: outcomes.length,
    answered: outcomes.filter((o) => o.outcome === 'answered').length,
    effectsPerOrder,
    writeRequests: s.orders.writes.filter((w) => effectsPerOrder.has(w.order_id)).length,
    movedTasks,
    retriedToolCalls,
    retriedByActivity,
    workflowTaskTimeouts,
    resumeMs,
    slowestResume: slowest,
    drainMs,
    totalSeconds,
  };
}
