/** Worker shutdown and timeouts outside the crash matrix: a graceful drain, a write that never answers. */
import { z } from 'zod';
import { defineAgent } from '../../src/agents/define-agent';
import { defineTool } from '../../src/tools/define-tool';
import { useHarness, answer, callTool, spawnWorker, statusWhen } from '../support/harness';
import { waitFor } from '../support/processes';

const h = useHarness();

test('SIGTERM drains the worker: the tool call in flight finishes (no retry), the worker exits 0, the task goes on elsewhere', async () => {
  // The search is held until the worker is draining (it says so at INFO), so the SIGTERM always
  // lands mid-call, however loaded the machine.
  h.orders.inject({ kind: 'slow', delayMs: 10 * 60_000 }, 1);
  const script = h.script([callTool('search_orders', { customer_id: 'C-1001' }), answer('drained')]);
  const taskId = h.taskId('drain');
  const worker = spawnWorker(h, [], { DURABLE_AGENT_LOG_LEVEL: 'INFO' });
  let stderr = '';
  worker.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => worker.on('exit', (code) => resolve(code)));
  await h.client.start({ agent: 'demo', prompt: 'drain', model: { provider: 'scripted', script } }, { taskId });
  const before = h.orders.requests.length;
  await waitFor('the slow search to be in flight', () => (h.orders.requests.length > before ? true : undefined));
  worker.kill('SIGTERM');
  await waitFor('the worker to start draining', () => /state: 'DRAINING'/.test(stderr) || undefined).catch((err: Error) => {
    throw new Error(`${err.message}; stderr:\n${stderr.slice(-3000)}`);
  });
  h.orders.releaseHeld();
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
