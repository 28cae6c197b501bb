/**
 * Recovery has a bill and a budget (issue 49 item 5), on a real server: a read that fails twice
 * with an outage and then answers is billed two calls run again and the time its retries waited;
 * a task whose recovery budget that spends blocks for a person before the next model call, and goes
 * on when they raise it.
 */
import { z } from 'zod';
import { defineAgent } from '../../src/agents/define-agent';
import { renderStatus } from '../../src/cli/render';
import { ToolFailure } from '../../src/errors/tool-failure';
import { defineTool } from '../../src/tools/define-tool';
import { answer, callTool, statusWhen, useHarness } from '../support/harness';

jest.setTimeout(120_000);

const h = useHarness();

/** A stock read whose service is down for the first `outages` attempts of each call. */
function warehouse(outages: number) {
  const stock = defineTool({
    name: 'stock',
    description: 'Reads the stock of an item.',
    input: z.object({ sku: z.string() }),
    output: z.object({ sku: z.string(), count: z.number() }),
    effect: 'read',
    idempotent: true,
    run: async ({ sku }: { sku: string }, ctx) => {
      if (ctx.attempt <= outages) throw new ToolFailure('transient', 'warehouse_down', `the warehouse API answered 503 (attempt ${ctx.attempt})`);
      return { sku, count: 12 };
    },
  });
  return defineAgent({ name: 'warehouse', system: 'You count stock.', tools: [stock] });
}

test('a read that recovered from two outages is billed two calls run again and the time they waited; status shows the bill', async () => {
  const worker = await h.worker([warehouse(2)]);
  const taskId = h.taskId('bill');
  const script = h.script([callTool('stock', { sku: 'A-1' }), answer('12 in stock.')]);
  const status = await worker.runUntil(async () => {
    await h.client.start({ agent: 'warehouse', prompt: 'How many A-1?', model: { provider: 'scripted', script } }, { taskId });
    expect(await h.client.result(taskId)).toMatchObject({ outcome: 'answered', text: '12 in stock.' });
    return h.client.status(taskId);
  });
  expect(status.recovery).toMatchObject({ callsRepeated: 2, tokensAgain: 0, costUsdAgain: 0 });
  expect(status.recovery!.waitedMs).toBeGreaterThan(0);
  expect(status.budgets.recoveryCalls).toBeUndefined();
  expect(renderStatus(taskId, status)).toMatch(/^recovery {3}2 calls run again, \d+\.\d s waited$/m);
});

test('a spent recovery budget pauses the task for a person before the next model call; raised, the task goes on', async () => {
  const worker = await h.worker([warehouse(2)]);
  const taskId = h.taskId('budget');
  const script = h.script([callTool('stock', { sku: 'A-1' }), callTool('stock', { sku: 'B-2' }), answer('12 of each.')]);
  const status = await worker.runUntil(async () => {
    await h.client.start({ agent: 'warehouse', prompt: 'Count A-1 and B-2.', model: { provider: 'scripted', script }, budgets: { recoveryCalls: 2 } }, { taskId });
    const blocked = await statusWhen(h, taskId, (s) => s.agentStatus === 'blocked', 60_000);
    expect(blocked.blocked).toMatchObject({ code: 'recovery_budget', reason: expect.stringContaining("reached the task's limit of 2 calls run again: 2 calls run again") });
    // Blocked before the second model call: the second read never started.
    expect(blocked.turn).toBe(1);
    expect(blocked.budgets.recoveryCalls).toEqual({ used: 2, limit: 2, left: 0 });
    // A raise must be above what was used.
    await expect(h.client.unblock(taskId, { by: 'ops', budget: { recoveryCalls: 2 } })).rejects.toThrow(/budget.recoveryCalls must be an integer above what is used \(2\)/);
    await h.client.unblock(taskId, { by: 'ops', budget: { recoveryCalls: 10 } });
    expect(await h.client.result(taskId)).toMatchObject({ outcome: 'answered', text: '12 of each.' });
    return h.client.status(taskId);
  });
  expect(status.recovery?.callsRepeated).toBe(4);
  expect(status.budgets.recoveryCalls).toEqual({ used: 4, limit: 10, left: 6 });
});
