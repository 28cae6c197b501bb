/**
 * Issue 51: a decision binds what was decided. On a real server, a refund waits for a person under
 * one tool; the worker is replaced, under the same build, by one whose refund tool takes another
 * field. The person's approval, made for the old tool, does not run the new one: the worker refuses
 * it, the task asks again naming the difference, and only the second approval runs the refund, once.
 * The same replacement with an unchanged tool runs on the first approval.
 */
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { defineAgent } from '../../src/agents/define-agent';
import { defineTool } from '../../src/tools/define-tool';
import { answer, callTool, runInBackground, statusWhen, useHarness } from '../support/harness';

jest.setTimeout(180_000);

const h = useHarness();

function shop(log: string, release: 'v1' | 'v2') {
  const input = release === 'v1' ? z.object({ order: z.string() }) : z.object({ order: z.string(), note: z.string().optional() });
  const refund = defineTool({
    name: 'refund',
    description: 'Refunds an order.',
    input,
    output: z.object({ refunded: z.string() }),
    effect: 'write',
    idempotent: false,
    run: async ({ order }: { order: string }) => {
      appendFileSync(log, `${release} ${order}\n`);
      return { refunded: order };
    },
  });
  return defineAgent({ name: 'shop', system: 'You refund orders.', tools: [refund], policy: { write: 'confirm' } });
}

async function waitingRefund(release: 'v1' | 'v2', log: string, taskQueue: string, deploymentName: string) {
  // One build whose agents change on purpose, as a build moved under a waiting task would.
  const versioning = { deploymentName, buildId: 'b1', allowAgentChanges: true };
  const first = runInBackground(await h.worker([shop(log, 'v1')], { taskQueue, versioning }));
  const taskId = h.taskId('refund');
  await h.client.start({ agent: 'shop', prompt: 'Refund A-1.', model: { provider: 'scripted', script: h.script([callTool('refund', { order: 'A-1' }), answer('Refunded.')]) } }, { taskId, taskQueue });
  const asked = await statusWhen(h, taskId, (s) => s.pendingApprovals.length > 0, 60_000);
  await first.stop();
  const second = runInBackground(await h.worker([shop(log, release)], { taskQueue, versioning }));
  return { taskId, asked, second };
}

test('an approval made for the old tool does not run a changed one: the person is asked again with the difference, and the refund runs once', async () => {
  const log = path.join(h.tmpDir, `refunds-${randomUUID().slice(0, 6)}.log`);
  writeFileSync(log, '');
  const taskQueue = `${h.taskQueue}-changed`;
  const { taskId, asked, second } = await waitingRefund('v2', log, taskQueue, `bind-${randomUUID().slice(0, 8)}`);
  try {
    const first = asked.pendingApprovals[0]!;
    expect(first.bound).toEqual({ agentVersion: asked.agentVersion, toolContract: expect.stringMatching(/^[0-9a-f]{16}$/) });
    await h.client.approve(taskId, { approvalId: first.id, by: 'ana' });
    const again = await statusWhen(h, taskId, (s) => s.pendingApprovals.length > 0 && s.pendingApprovals[0]!.id !== first.id, 60_000);
    const second_ = again.pendingApprovals[0]!;
    expect(second_.reason).toContain('refund changed after ana approved this call (input fields +note?); it did not run on that approval.');
    expect(second_.bound?.toolContract).not.toBe(first.bound?.toolContract);
    expect(readFileSync(log, 'utf8')).toBe('');
    await h.client.approve(taskId, { approvalId: second_.id, by: 'ana' });
    expect(await h.client.result(taskId)).toMatchObject({ outcome: 'answered', text: 'Refunded.' });
    expect(readFileSync(log, 'utf8')).toBe('v2 A-1\n');
  } finally {
    await second.stop();
  }
});

test('the same tool on a new worker runs on the approval given before: nobody is asked twice', async () => {
  const log = path.join(h.tmpDir, `refunds-${randomUUID().slice(0, 6)}.log`);
  writeFileSync(log, '');
  const taskQueue = `${h.taskQueue}-same`;
  const { taskId, asked, second } = await waitingRefund('v1', log, taskQueue, `bind-${randomUUID().slice(0, 8)}`);
  try {
    await h.client.approve(taskId, { approvalId: asked.pendingApprovals[0]!.id, by: 'ana' });
    expect(await h.client.result(taskId)).toMatchObject({ outcome: 'answered', text: 'Refunded.' });
    expect(readFileSync(log, 'utf8')).toBe('v1 A-1\n');
    expect((await h.client.status(taskId)).approvals).toHaveLength(1);
  } finally {
    await second.stop();
  }
});

function library(release: 'v1' | 'v2') {
  const lookup = defineTool({
    name: 'lookup',
    description: 'Reads a book.',
    input: z.object({ id: z.string() }),
    output: z.object({ title: z.string() }),
    effect: 'read',
    idempotent: true,
    run: async ({ id }: { id: string }) => ({ title: `book ${id}` }),
  });
  const lend = defineTool({
    name: 'lend',
    description: 'Lends a book.',
    input: z.object({ id: z.string() }),
    output: z.object({ lent: z.string() }),
    effect: 'write',
    idempotent: false,
    run: async ({ id }: { id: string }) => ({ lent: id }),
  });
  // v2 gains a write tool and lets it run without a person: what a resumed agent must not gain silently.
  return release === 'v1'
    ? defineAgent({ name: 'library', system: 'You look up books.', tools: [lookup] })
    : defineAgent({ name: 'library', system: 'You look up books.', tools: [lookup, lend], policy: { tools: { lend: 'allow' } } });
}

test('a block binds its agent: an unblock on a worker whose agent gained a tool is refused with the difference, and only the second unblock moves the task onto the new agent', async () => {
  const taskQueue = `${h.taskQueue}-block`;
  const versioning = { deploymentName: `bind-${randomUUID().slice(0, 8)}`, buildId: 'b1', allowAgentChanges: true };
  const first = runInBackground(await h.worker([library('v1')], { taskQueue, versioning }));
  const taskId = h.taskId('block');
  const script = h.script([callTool('lookup', { id: '7' }), answer('Book 7 is in.')]);
  await h.client.start({ agent: 'library', prompt: 'Is book 7 in?', model: { provider: 'scripted', script }, budgets: { turns: 1 } }, { taskId, taskQueue });
  const blocked = await statusWhen(h, taskId, (s) => s.blocked?.code === 'turn_budget', 60_000);
  expect(blocked.blocked!.bound).toEqual({ agentVersion: blocked.agentVersion });
  await first.stop();
  const second = runInBackground(await h.worker([library('v2')], { taskQueue, versioning }));
  try {
    const refused = h.client.unblock(taskId, { by: 'ana', blockId: blocked.blocked!.id, budget: { turns: 3 } });
    await expect(refused).rejects.toThrow(/the agent changed since block .* was raised \(agent version [0-9a-f]{16} -> [0-9a-f]{16}; tools gained: lend \(write\); permission policy changed\)/);
    const again = await h.client.status(taskId);
    expect(again.blocked).toMatchObject({ code: 'agent_changed', reason: expect.stringContaining('tools gained: lend (write)') });
    expect(again.blocked!.bound!.agentVersion).not.toBe(blocked.agentVersion);
    // Nothing the refused unblock asked for was taken.
    expect(again.budgets.turns).toMatchObject({ limit: 1 });
    // The old block's id is stale now.
    await expect(h.client.unblock(taskId, { by: 'ana', blockId: blocked.blocked!.id })).rejects.toThrow(/is not the current one/);

    await h.client.unblock(taskId, { by: 'ana', blockId: again.blocked!.id, budget: { turns: 3 } });
    expect(await h.client.result(taskId)).toMatchObject({ outcome: 'answered', text: 'Book 7 is in.' });
    const done = await h.client.status(taskId);
    expect(done.agentVersion).toBe(again.blocked!.bound!.agentVersion);
    expect(done.events.map((e) => e.detail).join('\n')).toMatch(/continued as new with agent version [0-9a-f]{16} -> [0-9a-f]{16}/);
    // `list` reads the run's memo (visibility catches up with the close a moment later).
    let listed: string | undefined;
    for (let i = 0; i < 50 && listed !== done.agentVersion; i++) {
      listed = (await h.client.list({ agent: 'library' })).find((t) => t.taskId === taskId)?.agentVersion;
      if (listed !== done.agentVersion) await new Promise((r) => setTimeout(r, 200));
    }
    expect(listed).toBe(done.agentVersion);
  } finally {
    await second.stop();
  }
});
