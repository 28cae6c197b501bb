/**
 * Recovery: a worker process is killed with SIGKILL while a tool call runs on it. What a user waits
 * for is the task moving again, so two times are read from the server's history (event times, so the
 * bench's own polling does not count), both from the kill:
 * - the retried tool call completed (ActivityTaskCompleted): the heartbeat timeout noticed the dead
 *   call and another worker ran it again;
 * - the task's next completed workflow task (WorkflowTaskCompleted): the workflow saw the result and
 *   took its next step. Unless the retry released it (sticky-release.ts), this one also waits out the
 *   sticky queue of the dead worker, which ran the task's last workflow task
 *   (`stickyQueueScheduleToStartTimeout`); `stickyTimeouts` counts the times it did.
 * Two cases: a second worker already running (the usual deployment: two warm worker processes, the
 * one running the call is killed), and a worker process started only after the kill (the only
 * worker restarts). Each is run, in the same run, with the dead-worker watch (worker/dead-workers:
 * the survivor sees the process gone and fails its call at once) and without it (the heartbeat
 * timeout notices the dead call), and with the SDK's default sticky timeout (10 s) beside the
 * project's (1 s). Then what the heartbeat costs while nothing fails: heartbeat RPCs per minute of a
 * running call, and live calls timed out on this loaded machine.
 */
import { HEARTBEAT_TIMEOUT_MS } from '../src/workflows/base/activity-options';
import type { ChildProcess } from 'node:child_process';
import type { TaskClient } from '../src/client/task-client';
import os from 'node:os';
import { DEFAULT_STICKY_TIMEOUT_MS } from '../src/worker/create-worker';
import { DEFAULT_MAX_HEARTBEAT_THROTTLE_MS } from '../src/worker/plugin';
import { answer, callTool, spawnWorker, startHarness, type Harness } from '../test/support/harness';
import { sigkill, waitFor } from '../test/support/processes';
import { summarize, type Summary } from './stats';
import { freePort } from '../src/server/dev-server';
import { METRICS_ADDRESS_ENV } from '../src/telemetry/metrics';

/** The SDK's stickyQueueScheduleToStartTimeout when none is set: the "before" of this bench. */
export const SDK_DEFAULT_STICKY_TIMEOUT_MS = 10_000;

/** Issue 39's target for the median SIGKILL -> next step, with a standby worker. */
export const RECOVERY_TARGET_MS = 2_000;

export interface RecoverySample {
  /** SIGKILL -> the retried tool call's ActivityTaskCompleted. */
  toolCompletedMs: number;
  /** SIGKILL -> the first WorkflowTaskCompleted after the kill: the task's next step. */
  workflowTaskCompletedMs: number;
  /** SIGKILL -> the retry's ActivityTaskStarted (its attempt 2). */
  retryStartedMs: number;
  /** SIGKILL -> the next workflow task's WorkflowTaskStarted: a worker took it (the rest is that worker's work). */
  workflowTaskStartedMs: number;
  /** Workflow tasks that timed out waiting on the dead worker's sticky queue. */
  stickyTimeouts: number;
}

export interface RecoveryCase {
  toolCompletedMs: Summary;
  workflowTaskCompletedMs: Summary;
  samples: RecoverySample[];
}

export interface RecoverySetting {
  stickyTimeoutMs: number;
  /** Whether the workers ran the dead-worker watch (DURABLE_AGENT_DEAD_WORKERS). */
  deadWorkerWatch: boolean;
  standbyWorker: RecoveryCase;
  restartedWorker: RecoveryCase;
}

export interface RecoveryResult {
  heartbeatTimeoutMs: number;
  /** The worker's maxHeartbeatThrottleInterval: the SDK sends a beat at most this often. */
  maxHeartbeatThrottleMs: number;
  /** The target for the median of SIGKILL -> next workflow task with a standby worker (issue 39). */
  targetMs: number;
  settings: RecoverySetting[];
  heartbeatCost: HeartbeatCost;
  /** os.loadavg() when the bench started and when it ended: other work shared the two cores. */
  loadAverage: { start: number[]; end: number[] };
}

type HistoryEvent = NonNullable<Awaited<ReturnType<ReturnType<Harness['client']['handle']>['fetchHistory']>>['events']>[number];

const timeOf = (e: HistoryEvent) => Number(e.eventTime!.seconds) * 1000 + Math.floor((e.eventTime!.nanos ?? 0) / 1e6);

/** Reads a recovery sample out of a task's history, given the kill time. */
export function recoveryFromHistory(events: HistoryEvent[], killedAt: number): RecoverySample {
  const after = events.filter((e) => timeOf(e) >= killedAt);
  const toolCompleted = after.find((e) => e.activityTaskCompletedEventAttributes);
  const workflowTaskCompleted = after.find((e) => e.workflowTaskCompletedEventAttributes);
  const retryStarted = events.find((e) => (e.activityTaskStartedEventAttributes?.attempt ?? 0) >= 2);
  const workflowTaskStarted = workflowTaskCompleted && events.find((e) => Number(e.eventId) === Number(workflowTaskCompleted.workflowTaskCompletedEventAttributes!.startedEventId));
  if (!toolCompleted || !workflowTaskCompleted || !retryStarted || !workflowTaskStarted) throw new Error('no retried tool call and next workflow task after the kill in the history');
  return {
    toolCompletedMs: timeOf(toolCompleted) - killedAt,
    workflowTaskCompletedMs: timeOf(workflowTaskCompleted) - killedAt,
    retryStartedMs: timeOf(retryStarted) - killedAt,
    workflowTaskStartedMs: timeOf(workflowTaskStarted) - killedAt,
    // TimeoutType 2 is SCHEDULE_TO_START: the only timeout a workflow task can have on a sticky queue.
    stickyTimeouts: after.filter((e) => e.workflowTaskTimedOutEventAttributes?.timeoutType === 2).length,
  };
}

/** Starts the slow-search task and resolves, with its id, once the search is in flight. */
async function startSlowSearch(h: Harness): Promise<string> {
  h.orders.clearFaults();
  h.orders.inject({ kind: 'slow', delayMs: 30_000 }, 1);
  const script = h.script([callTool('search_orders', { customer_id: 'C-1001', status: 'shipped' }), answer('done')]);
  const taskId = h.taskId('recovery');
  const before = h.orders.requests.length;
  await h.client.start({ agent: 'demo', prompt: 'recover', model: { provider: 'scripted', script } }, { taskId });
  await waitFor('the search to be in flight', () => h.orders.requests.length > before, 60_000);
  return taskId;
}

/** Waits for the task's end and reads the recovery out of its history. */
async function recovered(h: Harness, taskId: string, killedAt: number): Promise<RecoverySample> {
  await h.client.result(taskId);
  const events = (await h.client.handle(taskId).fetchHistory()).events!;
  return recoveryFromHistory(events, killedAt);
}

const identityOf = (child: ChildProcess) => `${child.pid}@${os.hostname()}`;

/** Whether the server has seen `identity` poll the queue (1: workflow tasks, 2: activity tasks) since `since`. */
async function polls(h: Harness, identity: string, taskQueueType: number, since: number): Promise<boolean> {
  const { pollers } = await h.connection.workflowService.describeTaskQueue({ namespace: 'default', taskQueue: { name: h.taskQueue }, taskQueueType });
  return (pollers ?? []).some((p) => p.identity === identity && timeOfStamp(p.lastAccessTime) >= since);
}

const timeOfStamp = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) => (t ? Number(t.seconds) * 1000 + Math.floor((t.nanos ?? 0) / 1e6) : 0);

/**
 * The usual deployment: two `durable-agent worker` processes on the queue, both warm (each has run
 * a task). Whichever runs the search is SIGKILLed; the other is the standby, already running. The
 * dead one is then replaced, and the replacement warmed, before the next sample.
 */
class WorkerPair {
  private readonly workers: ChildProcess[] = [];

  constructor(private readonly h: Harness) {}

  /** Spawns workers until there are two, each polling and having run at least one workflow task. */
  async fill(): Promise<void> {
    while (this.workers.length < 2) {
      const since = Date.now();
      const worker = spawnWorker(this.h);
      this.workers.push(worker);
      const identity = identityOf(worker);
      await waitFor('a worker to poll', async () => ((await polls(this.h, identity, 1, since)) && (await polls(this.h, identity, 2, since))) || undefined, 120_000);
      // Warm: short tasks until one of its workflow tasks ran on it (the other worker takes some).
      await waitFor(
        'a new worker to run a task',
        async () => {
          const ids = [this.h.taskId('warm'), this.h.taskId('warm')];
          const script = this.h.script([answer('warm')]);
          await Promise.all(ids.map((taskId) => this.h.client.start({ agent: 'demo', prompt: 'warm', model: { provider: 'scripted', script } }, { taskId })));
          await Promise.all(ids.map((taskId) => this.h.client.result(taskId)));
          const histories = await Promise.all(ids.map(async (taskId) => (await this.h.client.handle(taskId).fetchHistory()).events ?? []));
          return histories.some((events) => events.some((e) => e.workflowTaskStartedEventAttributes?.identity === identity)) || undefined;
        },
        120_000,
      );
    }
  }

  /** Kills the worker running the task's tool call; the other one is left to recover it. */
  killRunner(taskId: string): Promise<number> {
    return killCallRunner(this.h.client, taskId, this.workers);
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.splice(0).map((w) => sigkill(w)));
  }
}

/**
 * SIGKILLs the worker process (one of `workers`, which loses it) that runs the task's pending call,
 * as the server names it; returns the time of the kill.
 */
export async function killCallRunner(client: TaskClient, taskId: string, workers: ChildProcess[]): Promise<number> {
  const runner = await waitFor(
    "the call's worker",
    async () => {
      const { pendingActivities } = (await client.handle(taskId).describe()).raw;
      const identity = pendingActivities?.find((a) => a.lastWorkerIdentity)?.lastWorkerIdentity;
      return identity ? workers.find((w) => identityOf(w) === identity) : undefined;
    },
    60_000,
  );
  const killedAt = Date.now();
  await sigkill(runner);
  workers.splice(workers.indexOf(runner), 1);
  return killedAt;
}

/** A second worker already running: the pair's survivor takes the task over. */
async function killWithStandby(h: Harness, pair: WorkerPair): Promise<RecoverySample> {
  await pair.fill();
  const taskId = await startSlowSearch(h);
  const killedAt = await pair.killRunner(taskId);
  return recovered(h, taskId, killedAt);
}

/** The only worker, killed, and a new worker process started after the kill. */
async function killAndRestart(h: Harness): Promise<RecoverySample> {
  const doomed = spawnWorker(h);
  let killedAt: number;
  let taskId: string;
  try {
    taskId = await startSlowSearch(h);
    killedAt = Date.now();
  } finally {
    await sigkill(doomed);
  }
  const replacement = spawnWorker(h);
  try {
    return await recovered(h, taskId, killedAt);
  } finally {
    await sigkill(replacement);
  }
}

export interface HeartbeatCost {
  /** Tool calls running at once, each held by the orders service for `callMs`. */
  calls: number;
  callMs: number;
  /** RecordActivityTaskHeartbeat calls the worker made (its Core runtime's own request counter). */
  heartbeatRpcs: number;
  /** heartbeatRpcs per minute of one running tool call. */
  rpcsPerMinutePerCall: number;
  /** Calls whose history shows a second attempt: a live call timed out on its heartbeat (there was no kill). */
  falseTimeouts: number;
}

/** Sums a Core request counter's samples for one operation in a Prometheus text page. */
export function requestCount(page: string, operation: string): number {
  let total = 0;
  for (const line of page.split('\n')) {
    if (line.startsWith('#') || !/^temporal_request(_total)?\{/.test(line) || !line.includes(`operation="${operation}"`)) continue;
    total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

/**
 * What the short heartbeat timeout costs while nothing fails: `calls` tool calls held for `callMs`
 * at once on one worker process, whose Core runtime counts its heartbeat RPCs, and whether any of
 * them was timed out while alive on this (shared, loaded) machine.
 */
export async function measureHeartbeatCost(h: Harness, calls = 6, callMs = 8_000): Promise<HeartbeatCost> {
  const port = await freePort();
  const worker = spawnWorker(h, [], { [METRICS_ADDRESS_ENV]: `127.0.0.1:${port}` });
  const scrape = async () => {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`).catch(() => undefined);
    return res?.ok ? res.text() : undefined;
  };
  try {
    await waitFor('the worker to serve its metrics', scrape, 120_000);
    h.orders.clearFaults();
    h.orders.inject({ kind: 'slow', delayMs: callMs }, calls);
    const script = h.script([callTool('search_orders', { customer_id: 'C-1001', status: 'shipped' }), answer('done')]);
    const ids = Array.from({ length: calls }, () => h.taskId('heartbeat-cost'));
    const before = requestCount((await scrape())!, 'RecordActivityTaskHeartbeat');
    await Promise.all(ids.map((taskId) => h.client.start({ agent: 'demo', prompt: 'hold', model: { provider: 'scripted', script } }, { taskId })));
    await Promise.all(ids.map((taskId) => h.client.result(taskId)));
    const heartbeatRpcs = requestCount((await scrape())!, 'RecordActivityTaskHeartbeat') - before;
    let falseTimeouts = 0;
    for (const taskId of ids) {
      const events = (await h.client.handle(taskId).fetchHistory()).events ?? [];
      if (events.some((e) => (e.activityTaskStartedEventAttributes?.attempt ?? 0) >= 2)) falseTimeouts++;
    }
    return { calls, callMs, heartbeatRpcs, rpcsPerMinutePerCall: Math.round((heartbeatRpcs / calls / (callMs / 60_000)) * 10) / 10, falseTimeouts };
  } finally {
    await sigkill(worker);
  }
}

function summarizeCase(samples: RecoverySample[]): RecoveryCase {
  return {
    toolCompletedMs: summarize(
      samples.map((s) => s.toolCompletedMs),
      0,
    ),
    workflowTaskCompletedMs: summarize(
      samples.map((s) => s.workflowTaskCompletedMs),
      0,
    ),
    samples,
  };
}

/** The settings compared by default: the heartbeat timeout alone (the watch off), then the watch with either sticky timeout. */
export const RECOVERY_SETTINGS: Pick<RecoverySetting, 'stickyTimeoutMs' | 'deadWorkerWatch'>[] = [
  { stickyTimeoutMs: DEFAULT_STICKY_TIMEOUT_MS, deadWorkerWatch: false },
  { stickyTimeoutMs: SDK_DEFAULT_STICKY_TIMEOUT_MS, deadWorkerWatch: true },
  { stickyTimeoutMs: DEFAULT_STICKY_TIMEOUT_MS, deadWorkerWatch: true },
];

/**
 * Runs both cases for each setting. The sticky timeout that counts is the dead worker's (a worker
 * names it when it completes a workflow task), set here through DURABLE_AGENT_STICKY_TIMEOUT_MS, and
 * the watch through DURABLE_AGENT_DEAD_WORKERS, both inherited by the spawned worker processes.
 */
export async function measureRecovery(
  options: { settings?: Pick<RecoverySetting, 'stickyTimeoutMs' | 'deadWorkerWatch'>[]; standby?: number; restarted?: number; log?: (line: string) => void } = {},
): Promise<RecoveryResult> {
  const log = options.log ?? ((line: string) => console.log(line));
  const h = await startHarness();
  const saved = { sticky: process.env.DURABLE_AGENT_STICKY_TIMEOUT_MS, watch: process.env.DURABLE_AGENT_DEAD_WORKERS };
  try {
    const settings: RecoverySetting[] = [];
    const loadStart = os.loadavg();
    for (const { stickyTimeoutMs, deadWorkerWatch } of options.settings ?? RECOVERY_SETTINGS) {
      process.env.DURABLE_AGENT_STICKY_TIMEOUT_MS = String(stickyTimeoutMs);
      process.env.DURABLE_AGENT_DEAD_WORKERS = deadWorkerWatch ? '1' : '0';
      const line = (what: string, i: number, s: RecoverySample) =>
        log(
          `  watch ${deadWorkerWatch ? 'on' : 'off'}, sticky ${stickyTimeoutMs} ms, ${what}, run ${i + 1}: retry started ${s.retryStartedMs} ms, tool call ${s.toolCompletedMs} ms, next workflow task started ${s.workflowTaskStartedMs} ms, completed ${s.workflowTaskCompletedMs} ms after SIGKILL (sticky timeouts: ${s.stickyTimeouts})`,
        );
      const standby: RecoverySample[] = [];
      const pair = new WorkerPair(h);
      try {
        for (let i = 0; i < (options.standby ?? 5); i++) {
          standby.push(await killWithStandby(h, pair));
          line('standby worker', i, standby.at(-1)!);
        }
      } finally {
        await pair.close();
      }
      const restarted: RecoverySample[] = [];
      for (let i = 0; i < (options.restarted ?? 3); i++) {
        restarted.push(await killAndRestart(h));
        line('restarted worker process', i, restarted.at(-1)!);
      }
      settings.push({ stickyTimeoutMs, deadWorkerWatch, standbyWorker: summarizeCase(standby), restartedWorker: summarizeCase(restarted) });
    }
    const heartbeatCost = await measureHeartbeatCost(h);
    log(
      `  heartbeat cost: ${heartbeatCost.heartbeatRpcs} heartbeat RPCs for ${heartbeatCost.calls} calls of ${heartbeatCost.callMs} ms (${heartbeatCost.rpcsPerMinutePerCall} a minute per call); live calls timed out: ${heartbeatCost.falseTimeouts}`,
    );
    return {
      heartbeatTimeoutMs: HEARTBEAT_TIMEOUT_MS,
      maxHeartbeatThrottleMs: DEFAULT_MAX_HEARTBEAT_THROTTLE_MS,
      targetMs: RECOVERY_TARGET_MS,
      settings,
      heartbeatCost,
      loadAverage: { start: loadStart, end: os.loadavg() },
    };
  } finally {
    restore('DURABLE_AGENT_STICKY_TIMEOUT_MS', saved.sticky);
    restore('DURABLE_AGENT_DEAD_WORKERS', saved.watch);
    await h.close();
  }
}

function restore(name: string, value: string | undefined): void {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}

/** The Markdown table of docs/performance.md. */
export function recoveryTable(r: RecoveryResult): string {
  const rows = r.settings.flatMap((s) =>
    (
      [
        ['a second worker already running', s.standbyWorker],
        ['the only worker, restarted after the kill', s.restartedWorker],
      ] as const
    ).map(
      ([label, c]) =>
        `| ${s.deadWorkerWatch ? 'on' : 'off (heartbeat timeout only)'} | ${s.stickyTimeoutMs === SDK_DEFAULT_STICKY_TIMEOUT_MS ? '10 s (SDK default)' : `${s.stickyTimeoutMs / 1000} s`} | ${label} | ${c.samples.length} | ${ms(c.toolCompletedMs.median)} | ${ms(c.toolCompletedMs.max)} | ${ms(c.workflowTaskCompletedMs.median)} | ${ms(c.workflowTaskCompletedMs.max)} | ${c.samples.reduce((n, x) => n + x.stickyTimeouts, 0)} |`,
    ),
  );
  const c = r.heartbeatCost;
  return [
    '| dead-worker watch | sticky timeout | case | runs | SIGKILL -> tool call completed: median | max | SIGKILL -> next workflow task completed: median | max | sticky timeouts waited out |',
    '|---|---|---|---:|---:|---:|---:|---:|---:|',
    ...rows,
    '',
    `Heartbeat timeout ${r.heartbeatTimeoutMs / 1000} s, beats sent at most every ${Math.round(r.maxHeartbeatThrottleMs)} ms; load average ${r.loadAverage.start.map((x) => x.toFixed(1)).join(' / ')} at the start, ${r.loadAverage.end.map((x) => x.toFixed(1)).join(' / ')} at the end (1 / 5 / 15 min, 2 cores).`,
    '',
    '| running tool calls | each held | heartbeat RPCs | per minute per running call | live calls timed out |',
    '|---:|---:|---:|---:|---:|',
    `| ${c.calls} | ${c.callMs / 1000} s | ${c.heartbeatRpcs} | ${c.rpcsPerMinutePerCall} | ${c.falseTimeouts} |`,
  ].join('\n');
}

const ms = (x: number) => `${(x / 1000).toFixed(2)} s`;
