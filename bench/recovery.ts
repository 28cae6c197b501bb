/**
 * Recovery: a worker process is killed with SIGKILL while a tool call runs on it. What a user waits
 * for is the task moving again, so two times are read from the server's history (event times, so the
 * bench's own polling does not count), both from the kill:
 * - the retried tool call completed (ActivityTaskCompleted): the heartbeat timeout noticed the dead
 *   call and another worker ran it again;
 * - the task's next completed workflow task (WorkflowTaskCompleted): the workflow saw the result and
 *   took its next step. This one also waits out the sticky queue of the dead worker, which ran the
 *   task's last workflow task (`stickyQueueScheduleToStartTimeout`).
 * Two cases: a second worker already running (the usual deployment), and a worker process started
 * only after the kill (the only worker restarts). Each is run with the SDK's default sticky timeout
 * (10 s, what this project used before), the project's default (1 s) and 0.5 s, in the same run.
 */
import { HEARTBEAT_TIMEOUT_MS } from '../src/workflows/base/activity-options';
import { DEFAULT_STICKY_TIMEOUT_MS } from '../src/worker/create-worker';
import { answer, callTool, spawnWorker, startHarness, type Harness } from '../test/support/harness';
import { sigkill, waitFor } from '../test/support/processes';
import { summarize, type Summary } from './stats';

/** The SDK's stickyQueueScheduleToStartTimeout when none is set: the "before" of this bench. */
export const SDK_DEFAULT_STICKY_TIMEOUT_MS = 10_000;

export interface RecoverySample {
  /** SIGKILL -> the retried tool call's ActivityTaskCompleted. */
  toolCompletedMs: number;
  /** SIGKILL -> the first WorkflowTaskCompleted after the kill: the task's next step. */
  workflowTaskCompletedMs: number;
  /** SIGKILL -> the retry's ActivityTaskStarted (its attempt 2). */
  retryStartedMs: number;
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
  standbyWorker: RecoveryCase;
  restartedWorker: RecoveryCase;
}

export interface RecoveryResult {
  heartbeatTimeoutMs: number;
  /** The issue's target for the median of SIGKILL -> next workflow task: heartbeat timeout + 2 s. */
  targetMs: number;
  settings: RecoverySetting[];
}

type HistoryEvent = NonNullable<Awaited<ReturnType<ReturnType<Harness['client']['handle']>['fetchHistory']>>['events']>[number];

const timeOf = (e: HistoryEvent) => Number(e.eventTime!.seconds) * 1000 + Math.floor((e.eventTime!.nanos ?? 0) / 1e6);

/** Reads a recovery sample out of a task's history, given the kill time. */
export function recoveryFromHistory(events: HistoryEvent[], killedAt: number): RecoverySample {
  const after = events.filter((e) => timeOf(e) >= killedAt);
  const toolCompleted = after.find((e) => e.activityTaskCompletedEventAttributes);
  const workflowTaskCompleted = after.find((e) => e.workflowTaskCompletedEventAttributes);
  const retryStarted = events.find((e) => (e.activityTaskStartedEventAttributes?.attempt ?? 0) >= 2);
  if (!toolCompleted || !workflowTaskCompleted || !retryStarted) throw new Error('no retried tool call and next workflow task after the kill in the history');
  return {
    toolCompletedMs: timeOf(toolCompleted) - killedAt,
    workflowTaskCompletedMs: timeOf(workflowTaskCompleted) - killedAt,
    retryStartedMs: timeOf(retryStarted) - killedAt,
    // TimeoutType 2 is SCHEDULE_TO_START: the only timeout a workflow task can have on a sticky queue.
    stickyTimeouts: after.filter((e) => e.workflowTaskTimedOutEventAttributes?.timeoutType === 2).length,
  };
}

/** Starts a task whose search is slow, kills the worker running it, and reads what followed from history. */
async function killDuringTool(h: Harness, replace: () => Promise<() => Promise<void>>): Promise<RecoverySample> {
  const doomed = spawnWorker(h);
  h.orders.clearFaults();
  h.orders.inject({ kind: 'slow', delayMs: 30_000 }, 1);
  const script = h.script([callTool('search_orders', { customer_id: 'C-1001', status: 'shipped' }), answer('done')]);
  const taskId = h.taskId('recovery');
  const before = h.orders.requests.length;
  let killedAt: number;
  try {
    await h.client.start({ agent: 'demo', prompt: 'recover', model: { provider: 'scripted', script } }, { taskId });
    await waitFor('the search to be in flight', () => h.orders.requests.length > before, 60_000);
    killedAt = Date.now();
  } finally {
    await sigkill(doomed);
  }
  const stop = await replace();
  try {
    await h.client.result(taskId);
  } finally {
    await stop();
  }
  const events = (await h.client.handle(taskId).fetchHistory()).events!;
  return recoveryFromHistory(events, killedAt);
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

/**
 * Runs both cases for each sticky timeout. The timeout that counts is the dead worker's (a worker
 * names it when it completes a workflow task), set here through DURABLE_AGENT_STICKY_TIMEOUT_MS,
 * which the spawned worker processes inherit.
 */
export async function measureRecovery(options: { stickyTimeoutsMs?: number[]; standby?: number; restarted?: number; log?: (line: string) => void } = {}): Promise<RecoveryResult> {
  const log = options.log ?? ((line: string) => console.log(line));
  const h = await startHarness();
  const saved = process.env.DURABLE_AGENT_STICKY_TIMEOUT_MS;
  try {
    const settings: RecoverySetting[] = [];
    for (const stickyTimeoutMs of options.stickyTimeoutsMs ?? [...new Set([SDK_DEFAULT_STICKY_TIMEOUT_MS, DEFAULT_STICKY_TIMEOUT_MS, 500])]) {
      process.env.DURABLE_AGENT_STICKY_TIMEOUT_MS = String(stickyTimeoutMs);
      const line = (what: string, i: number, s: RecoverySample) =>
        log(
          `  sticky ${stickyTimeoutMs} ms, ${what}, run ${i + 1}: tool call ${s.toolCompletedMs} ms, next workflow task ${s.workflowTaskCompletedMs} ms after SIGKILL (sticky timeouts: ${s.stickyTimeouts})`,
        );
      const standby: RecoverySample[] = [];
      for (let i = 0; i < (options.standby ?? 5); i++) {
        standby.push(
          await killDuringTool(h, async () => {
            // Created after the kill so it cannot have taken the task first; created in-process from a
            // prebuilt bundle, it is polling well within the heartbeat timeout.
            const worker = await h.worker();
            const running = worker.run();
            return async () => {
              worker.shutdown();
              await running;
            };
          }),
        );
        line('standby worker', i, standby.at(-1)!);
      }
      const restarted: RecoverySample[] = [];
      for (let i = 0; i < (options.restarted ?? 3); i++) {
        restarted.push(
          await killDuringTool(h, async () => {
            const child = spawnWorker(h);
            return async () => void (await sigkill(child));
          }),
        );
        line('restarted worker process', i, restarted.at(-1)!);
      }
      settings.push({ stickyTimeoutMs, standbyWorker: summarizeCase(standby), restartedWorker: summarizeCase(restarted) });
    }
    return { heartbeatTimeoutMs: HEARTBEAT_TIMEOUT_MS, targetMs: HEARTBEAT_TIMEOUT_MS + 2_000, settings };
  } finally {
    if (saved === undefined) delete process.env.DURABLE_AGENT_STICKY_TIMEOUT_MS;
    else process.env.DURABLE_AGENT_STICKY_TIMEOUT_MS = saved;
    await h.close();
  }
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
        `| ${s.stickyTimeoutMs === SDK_DEFAULT_STICKY_TIMEOUT_MS ? '10 s (SDK default, before)' : `${s.stickyTimeoutMs / 1000} s`} | ${label} | ${c.samples.length} | ${ms(c.toolCompletedMs.median)} | ${ms(c.toolCompletedMs.max)} | ${ms(c.workflowTaskCompletedMs.median)} | ${ms(c.workflowTaskCompletedMs.max)} |`,
    ),
  );
  return [
    '| sticky timeout | case | runs | SIGKILL -> tool call completed: median | max | SIGKILL -> next workflow task completed: median | max |',
    '|---|---|---:|---:|---:|---:|---:|',
    ...rows,
  ].join('\n');
}

const ms = (x: number) => `${(x / 1000).toFixed(2)} s`;
