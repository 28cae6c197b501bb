/**
 * Recovery: a worker process is killed with SIGKILL while a tool call runs on it; the time from the
 * kill to the task's next completed step is read from the server's history (event times), so the
 * bench's own polling does not count. Two cases: a second worker already running (the usual
 * deployment), and a worker process started only after the kill (the only worker restarts).
 */
import { HEARTBEAT_TIMEOUT_MS } from '../src/workflows/activity-options';
import { answer, callTool, spawnWorker, startHarness, type Harness } from '../test/support/harness';
import { sigkill, waitFor } from '../test/support/processes';
import { summarize, type Summary } from './stats';

export interface RecoveryResult {
  heartbeatTimeoutMs: number;
  standbyWorker: { retryStartedMs: Summary; stepCompletedMs: Summary; samples: number[] };
  restartedWorker: { stepCompletedMs: Summary; samples: number[] };
}

/** Starts a task whose search is slow, kills the worker running it, and returns the kill time and the retried step's times. */
async function killDuringTool(h: Harness, replace: () => Promise<() => Promise<void>>): Promise<{ retryStartedMs: number; stepCompletedMs: number }> {
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
  const timeOf = (e: (typeof events)[number]) => Number(e.eventTime!.seconds) * 1000 + Math.floor((e.eventTime!.nanos ?? 0) / 1e6);
  const started = events.find((e) => (e.activityTaskStartedEventAttributes?.attempt ?? 0) >= 2);
  const scheduledId = String(started?.activityTaskStartedEventAttributes?.scheduledEventId);
  const completed = events.find((e) => String(e.activityTaskCompletedEventAttributes?.scheduledEventId) === scheduledId);
  if (!started || !completed) throw new Error(`task ${taskId}: no retried tool call in its history`);
  return { retryStartedMs: timeOf(started) - killedAt, stepCompletedMs: timeOf(completed) - killedAt };
}

export async function measureRecovery(options: { standby?: number; restarted?: number } = {}): Promise<RecoveryResult> {
  const h = await startHarness();
  try {
    const standby: { retryStartedMs: number; stepCompletedMs: number }[] = [];
    for (let i = 0; i < (options.standby ?? 10); i++) {
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
      console.log(`  standby worker, run ${i + 1}: next step completed ${standby.at(-1)!.stepCompletedMs} ms after SIGKILL`);
    }
    const restarted: number[] = [];
    for (let i = 0; i < (options.restarted ?? 5); i++) {
      const sample = await killDuringTool(h, async () => {
        const child = spawnWorker(h);
        return async () => void (await sigkill(child));
      });
      restarted.push(sample.stepCompletedMs);
      console.log(`  restarted worker process, run ${i + 1}: next step completed ${sample.stepCompletedMs} ms after SIGKILL`);
    }
    const completed = standby.map((s) => s.stepCompletedMs);
    return {
      heartbeatTimeoutMs: HEARTBEAT_TIMEOUT_MS,
      standbyWorker: { retryStartedMs: summarize(standby.map((s) => s.retryStartedMs), 0), stepCompletedMs: summarize(completed, 0), samples: completed },
      restartedWorker: { stepCompletedMs: summarize(restarted, 0), samples: restarted },
    };
  } finally {
    await h.close();
  }
}
