/**
 * Crash recovery at a small size, for the core lane (test/lanes.js): a `durable-agent worker` process
 * is SIGKILLed after an idempotent write committed and before its answer came back; a new worker
 * retries the write with the same idempotency key and the orders service answers it without
 * refunding again, and the retry sends the task's next step past the dead worker's sticky queue.
 * The rest of the crash matrix (every other point a worker can die) is in crash-matrix.test.ts, in
 * the soak lane.
 */
import { temporal } from '@temporalio/proto';
import { answer, useHarness } from '../support/harness';
import { HELD_MS, refund, useDoomedWorkers, waitFor } from '../support/doomed-workers';
import { documentedKeyShapes, keyPattern } from '../support/documented-key';

const h = useHarness();
const { doomedWorker, replacementWorker, effectsOn, writesTo } = useDoomedWorkers(h);

test('SIGKILL during an idempotent write: the retry carries the same idempotency key and the service answers it without refunding again', async () => {
  // The refund commits at once; its answer is slow, so the worker dies after the effect, before the reply.
  h.orders.inject({ kind: 'slow_reply', delayMs: HELD_MS }, 1);
  const script = h.script([refund('O-0003'), answer('refunded')]);
  const taskId = h.taskId('crash-idem');
  const doomed = doomedWorker();
  await h.client.start({ agent: 'demo', prompt: 'refund', model: { provider: 'scripted', script } }, { taskId });
  await waitFor('the refund to commit', () => effectsOn('O-0003').length > 0);
  // Made (not yet polling) before the kill, so that it takes the retry within seconds of the kill,
  // well inside the 10 s in which the server still counts the dead worker's sticky queue as live.
  const replacement = await replacementWorker();
  expect(await doomed.kill()).toBe('SIGKILL');

  const result = await replacement.runUntil(h.client.result(taskId));
  expect(result).toMatchObject({ outcome: 'answered', toolCalls: 1 });
  expect(effectsOn('O-0003')).toHaveLength(1);
  const [first, retry] = writesTo('O-0003');
  expect(writesTo('O-0003')).toHaveLength(2);
  // Issued by the workflow in the shape every doc states (README step 8, docs/architecture.md).
  for (const { shape } of documentedKeyShapes()) expect(first!.idempotency_key).toMatch(keyPattern(shape, taskId));
  expect(retry).toMatchObject({ idempotency_key: first!.idempotency_key, replayed: true });

  // The retry reset the dead worker's sticky queue (sticky-release.ts): the task's next workflow
  // task went to the shared queue and was started, instead of timing out on the dead worker's queue.
  const events = (await h.client.handle(taskId).fetchHistory()).events!;
  const retried = events.findIndex((e) => (e.activityTaskStartedEventAttributes?.attempt ?? 0) >= 2);
  const next = events.slice(retried + 1).find((e) => e.workflowTaskStartedEventAttributes || e.workflowTaskTimedOutEventAttributes);
  expect(retried).toBeGreaterThan(0);
  // The replacement saw the doomed worker's process gone and failed its call on its behalf
  // (worker/dead-workers): the retry did not wait for the heartbeat timeout.
  const lost = events[retried]!.activityTaskStartedEventAttributes!.lastFailure;
  expect(lost?.message).toMatch(/^runTool \(attempt 1\) stopped: the worker running it died \(process \d+ on .+ is gone/);
  expect(lost?.applicationFailureInfo?.type).toBe('DeadWorker');
  expect(next?.eventType).toBe(temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED);
});
