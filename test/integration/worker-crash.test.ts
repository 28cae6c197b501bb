import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { defineAgent } from '../../src/agents/define-agent';
import { defineTool } from '../../src/tools/define-tool';
import { answer, callTool, spawnWorker, startHarness, statusWhen, type Harness } from '../support/harness';
import { waitFor } from '../support/processes';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

test('a worker killed with SIGKILL in the middle of a tool call is replaced, and the task completes', async () => {
  // The first search is slow, so the kill lands while the activity is in flight on the old worker.
  h.orders.inject({ kind: 'slow', delayMs: 4_000 }, 1);
  const script = h.script([
    callTool('write_file', { path: 'before.txt', content: 'written before the crash' }),
    callTool('search_orders', { customer_id: 'C-1002' }),
    callTool('write_file', { path: 'after.txt', content: 'written after the crash' }),
    answer('survived'),
  ]);
  const taskId = h.taskId('crash');
  const doomed = spawnWorker(h);
  const exited = new Promise<NodeJS.Signals | null>((resolve) => doomed.on('exit', (_code, signal) => resolve(signal)));
  try {
    await h.client.start({ agent: 'demo', prompt: 'survive', model: { provider: 'scripted', script } }, { taskId });
    await waitFor('the slow search to reach the orders service', () =>
      h.orders.requests.some((r) => r.customer_id === 'C-1002') ? true : undefined,
    );
  } finally {
    doomed.kill('SIGKILL');
  }
  expect(await exited).toBe('SIGKILL');

  const worker = await h.worker();
  const result = await worker.runUntil(h.client.result(taskId));
  expect(result).toMatchObject({ outcome: 'answered', text: 'survived', toolCalls: 3 });
  expect(readFileSync(path.join(h.workspaceDir, 'after.txt'), 'utf8')).toBe('written after the crash');

  // The in-flight read was retried once on the new worker; each write was scheduled exactly once.
  expect(h.orders.requests.filter((r) => r.customer_id === 'C-1002')).toHaveLength(2);
  const history = await h.client.handle(taskId).fetchHistory();
  const toolScheduled = history.events!
    .map((e) => e.activityTaskScheduledEventAttributes)
    .filter((a) => a?.activityType?.name === 'runTool');
  expect(toolScheduled).toHaveLength(3);
  const searchStarted = history.events!.find(
    (e) => e.activityTaskStartedEventAttributes && e.activityTaskStartedEventAttributes.attempt === 2,
  );
  expect(searchStarted).toBeDefined();
});

test('SIGTERM drains the worker: the tool call in flight finishes (no retry), the worker exits 0, the task goes on elsewhere', async () => {
  h.orders.inject({ kind: 'slow', delayMs: 2_000 }, 1);
  const script = h.script([callTool('search_orders', { customer_id: 'C-1001' }), answer('drained')]);
  const taskId = h.taskId('drain');
  const worker = spawnWorker(h);
  let stderr = '';
  worker.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => worker.on('exit', (code) => resolve(code)));
  await h.client.start({ agent: 'demo', prompt: 'drain', model: { provider: 'scripted', script } }, { taskId });
  const before = h.orders.requests.length;
  await waitFor('the slow search to be in flight', () => (h.orders.requests.length > before ? true : undefined));
  worker.kill('SIGTERM');
  expect(await exited).toBe(0);
  expect(stderr).toContain('worker: stopped');

  const result = await (await h.worker()).runUntil(h.client.result(taskId));
  expect(result).toMatchObject({ outcome: 'answered', text: 'drained' });
  expect(h.orders.requests.length - before).toBe(1);
});

test('a non-idempotent write that times out is not retried: the task blocks with "outcome unknown" for a person', async () => {
  let calls = 0;
  const charge = defineTool({
    name: 'charge_card',
    description: 'Charge a card (not idempotent).',
    input: z.object({ cents: z.number().int() }),
    output: z.object({ ok: z.boolean() }),
    effect: 'write',
    idempotent: false,
    timeoutMs: 1_000,
    run: async (_input, ctx) => {
      calls += 1;
      // The payment service never answers; the call ends only when the activity is cancelled.
      return new Promise<never>((_, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('aborted'))));
    },
  });
  const agent = defineAgent({ name: 'payments', system: 'x', tools: [charge], policy: { write: 'allow' } });
  const script = h.script([callTool('charge_card', { cents: 500 }), answer('checked')]);
  const taskId = h.taskId('unknown');
  const worker = await h.worker([agent]);
  await worker.runUntil(async () => {
    await h.client.start({ agent: 'payments', prompt: 'charge', model: { provider: 'scripted', script } }, { taskId });
    const blocked = await statusWhen(h, taskId, (s) => s.agentStatus === 'blocked');
    expect(blocked.blocked).toMatchObject({ code: 'outcome_unknown', reason: expect.stringContaining('may or may not have taken effect') });
    expect(blocked.lastError).toMatchObject({ error_class: 'transient', code: 'timeout', hint: expect.stringContaining('outcome is unknown') });
    await h.client.unblock(taskId, { by: 'ops', message: 'The charge did not go through; do not retry.' });
    await h.client.result(taskId);
  });
  expect(calls).toBe(1);
});
