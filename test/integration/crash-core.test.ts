/**
 * Crash recovery at a small size, for the core lane (test/lanes.js): a `durable-agent worker` process
 * is SIGKILLed after an idempotent write committed and before its answer came back; a new worker
 * retries the write with the same idempotency key and the orders service answers it without
 * refunding again. The rest of the crash matrix (every other point a worker can die) is in
 * crash-matrix.test.ts, in the soak lane.
 */
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
  expect(await doomed.kill()).toBe('SIGKILL');

  const result = await (await replacementWorker()).runUntil(h.client.result(taskId));
  expect(result).toMatchObject({ outcome: 'answered', toolCalls: 1 });
  expect(effectsOn('O-0003')).toHaveLength(1);
  const [first, retry] = writesTo('O-0003');
  expect(writesTo('O-0003')).toHaveLength(2);
  // Issued by the workflow in the shape every doc states (README step 8, docs/architecture.md).
  for (const { shape } of documentedKeyShapes()) expect(first!.idempotency_key).toMatch(keyPattern(shape, taskId));
  expect(retry).toMatchObject({ idempotency_key: first!.idempotency_key, replayed: true });
});
