/**
 * The dead-worker watch on a real server (worker/dead-workers): a worker whose process is gone has
 * its running calls failed by another worker on the machine, so they are retried at once, not after
 * the heartbeat timeout; a worker that is alive but frozen keeps its calls until the heartbeat
 * timeout, as before; a worker that stops in order leaves nothing behind. The records live in a
 * folder of this file's own (DURABLE_AGENT_WORKERS_DIR, inherited by the spawned workers).
 */
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { answer, useHarness } from '../support/harness';
import { HELD_MS, refund, rescript, useDoomedWorkers, waitFor } from '../support/doomed-workers';

const workersDir = mkdtempSync(path.join(tmpdir(), 'dead-workers-'));
process.env.DURABLE_AGENT_WORKERS_DIR = workersDir;

const h = useHarness();
const { doomedWorker, replacementWorker, inFlight, effectsOn, attemptsOf, startedOf } = useDoomedWorkers(h);

/** The failure the server recorded for the attempt before the retry of `type`'s last call. */
async function failureBeforeRetry(taskId: string, type: string) {
  const retry = (await startedOf(taskId, type)).reverse().find((a) => (a.attempt ?? 1) >= 2);
  return retry?.lastFailure;
}

/** The workers' folders in the namespace's records (one per running worker process), other than those being reaped. */
function recordedWorkers(): string[] {
  return readdirSync(workersDir).flatMap((ns) => readdirSync(path.join(workersDir, ns)).filter((d) => !d.startsWith('.')));
}

test('SIGKILL during a model call: a worker on the same machine sees the process gone and fails the call on its behalf; the call is retried exactly once and the task completes', async () => {
  const turns = [answer('answered after the kill')];
  const script = h.script([{ ...turns[0]!, delay_ms: HELD_MS }]);
  const taskId = h.taskId('dead-model');
  const doomed = doomedWorker();
  await h.client.start({ agent: 'demo', prompt: 'answer', model: { provider: 'scripted', script } }, { taskId });
  await inFlight(taskId, 'callModel');
  await waitFor('the doomed worker to record its call', () => recordedWorkers().some((d) => d.startsWith(`${doomed.process.pid}-`)));
  // The retry's turn is in the script before anything can retry (the doomed call holds the turn it read).
  rescript(script, turns);
  // The replacement, and its watch, run before the kill: a worker's start (seconds on a loaded
  // machine) is not raced against the 3 s heartbeat timeout.
  const replacement = await replacementWorker();
  const done = replacement.runUntil(h.client.result(taskId));
  await waitFor('the replacement to run', () => replacement.getState() === 'RUNNING' || undefined);
  expect(await doomed.kill()).toBe('SIGKILL');

  // The guarantee: the call is retried exactly once, and the task completes.
  expect(await done).toMatchObject({ outcome: 'answered', text: 'answered after the kill' });
  expect(await attemptsOf(taskId, 'callModel')).toEqual([2]);
  // The watch judged the dead worker's process gone: it claimed and removed its folder (the
  // replacement, stopped in order, removed its own).
  await waitFor("the dead worker's folder to be removed", () => recordedWorkers().length === 0 || undefined);
  // Which of the two ended the lost attempt is a race the watch nearly always wins (about 0.2 s
  // against 3 s) but may lose on a loaded machine: either is a lost worker's failure, and the
  // watch's says whose process died and who saw it.
  const lost = await failureBeforeRetry(taskId, 'callModel');
  if (lost?.applicationFailureInfo) {
    expect(lost.applicationFailureInfo.type).toBe('DeadWorker');
    expect(lost.message).toMatch(new RegExp(`^callModel \\(attempt 1\\) stopped: the worker running it died \\(process ${doomed.process.pid} on .+ is gone, seen by ${process.pid}@`));
  } else {
    expect(lost?.timeoutFailureInfo?.timeoutType).toBe(temporal.api.enums.v1.TimeoutType.TIMEOUT_TYPE_HEARTBEAT);
  }
});

test('a frozen worker (SIGSTOP) is alive: the watch leaves its call alone, and the heartbeat timeout retries it as before, once', async () => {
  h.orders.inject({ kind: 'slow_reply', delayMs: HELD_MS }, 1);
  const script = h.script([refund('O-0004'), answer('refunded')]);
  const taskId = h.taskId('frozen');
  const doomed = doomedWorker();
  await h.client.start({ agent: 'demo', prompt: 'refund', model: { provider: 'scripted', script } }, { taskId });
  await waitFor('the refund to commit', () => effectsOn('O-0004').length > 0);
  const replacement = await replacementWorker();
  doomed.process.kill('SIGSTOP');
  const done = replacement.runUntil(h.client.result(taskId));
  await waitFor('the retry of the refund', async () => {
    const d = await h.client.handle(taskId).describe();
    return (d.raw.pendingActivities ?? []).some((a) => a.activityType?.name === 'runTool' && (a.attempt ?? 1) >= 2);
  });
  // Retried by the heartbeat timeout, while the frozen worker's record stayed: nobody may call a live process dead.
  expect(recordedWorkers()).toContainEqual(expect.stringMatching(new RegExp(`^${doomed.process.pid}-`)));
  // Killed now: if the replacement reaps its record, the call's token names the attempt the server already timed out, and is refused.
  expect(await doomed.kill()).toBe('SIGKILL');

  expect(await done).toMatchObject({ outcome: 'answered', toolCalls: 1 });
  expect(effectsOn('O-0004')).toHaveLength(1);
  const lost = await failureBeforeRetry(taskId, 'runTool');
  expect(lost?.timeoutFailureInfo?.timeoutType).toBe(temporal.api.enums.v1.TimeoutType.TIMEOUT_TYPE_HEARTBEAT);
  expect(lost?.applicationFailureInfo).toBeFalsy();
});
