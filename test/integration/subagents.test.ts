/**
 * Sub-agents as child tasks on a real dev server: a lead agent's delegation calls start the
 * researcher's own agentTask as a child workflow (scripted models on both sides).
 */
import { useHarness, answer, callTool, parsedResults, statusWhen } from '../support/harness';
import teamAgents, { type TeamOptions } from '../support/team-agents';
import { ParentTaskKey } from '../../src/protocol/definitions';
import type { ModelScript } from '../../src/models/scripted-model';
import { nestedLabel } from '../../src/client/child-tasks';
import { runCli } from '../support/processes';
import { waitingTasks } from '../../src/inbox/inbox-data';
import { inboxPage } from '../../src/inbox/pages';
import { ApprovalArguments } from '../../src/client/approval-arguments';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createTaskToolsServer } from '../../src/mcp-server/task-tools-server';

const h = useHarness();

const team = (researcher: ModelScript['turns'], options: Omit<TeamOptions, 'researcherScript' | 'ordersUrl'> = {}) =>
  h.worker(teamAgents({ workspaceDir: h.workspaceDir }, { ordersUrl: h.orders.url, researcherScript: h.script(researcher), ...options }));

/** The MCP server's task tools, in process, with an MCP client on the other end. */
async function mcpClient(): Promise<McpClient> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createTaskToolsServer({ client: h.client, version: 'test', blobStore: h.blobStore }).connect(serverSide);
  const client = new McpClient({ name: 'subagents-test', version: '1.0.0' });
  await client.connect(clientSide);
  return client;
}

const delegate = (task: string, budget?: Record<string, number>) => callTool('delegate_to_researcher', { task, ...(budget ? { budget } : {}) });

/** One assistant turn with several delegation calls. */
function delegateMany(tasks: string[], budget: Record<string, number>): ModelScript['turns'][number] {
  return { content: [{ type: 'text', text: 'splitting the work' }, ...tasks.map((task) => ({ type: 'tool_use' as const, name: 'delegate_to_researcher', input: { task, budget } }))] };
}

const childrenOf = async (taskId: string) => {
  const out = [];
  for await (const e of h.client.client.workflow.list({ query: `${ParentTaskKey.name} = '${taskId}'` })) out.push(e);
  return out;
};

async function startLead(script: ModelScript['turns'], budgets: Record<string, number> = { turns: 10, toolCalls: 20 }): Promise<string> {
  const taskId = h.taskId('lead');
  await h.client.start({ agent: 'lead', prompt: 'Work with your team.', budgets, model: { provider: 'scripted', script: h.script(script) } }, { taskId });
  return taskId;
}

test("a delegation call runs the sub-agent as a child task: listed under ParentTask, its answer in the parent's conversation, its spend in the parent's totals and the unspent slice back", async () => {
  const worker = await team([callTool('search_orders', { customer_id: 'C-1002' }), answer('C-1002 has two orders.')]);
  await worker.runUntil(async () => {
    const taskId = await startLead([delegate('Find the orders of C-1002.', { turns: 4, toolCalls: 5 }), answer('The researcher found them.')]);
    const result = await h.client.result(taskId);
    expect(result).toMatchObject({ outcome: 'answered', text: 'The researcher found them.', turns: 2, toolCalls: 1 });
    expect(result.delegated).toMatchObject({ turns: 2, toolCalls: 1 });

    const childId = `${taskId}--researcher-1`;
    const [delegated] = parsedResults(await h.client.transcript(taskId));
    expect(delegated).toMatchObject({ sub_agent: 'researcher', task_id: childId, outcome: 'answered', answer: 'C-1002 has two orders.', spent: { turns: 2, tool_calls: 1 } });

    // A task of its own: listed (found by ParentTask), with its own status and result.
    expect((await childrenOf(taskId)).map((e) => e.workflowId)).toEqual([childId]);
    const child = await h.client.describe(childId);
    expect(child).toMatchObject({ agent: 'researcher', agentStatus: 'completed', parentTask: taskId });
    expect(await h.client.result(childId)).toMatchObject({ outcome: 'answered', turns: 2, toolCalls: 1 });
    expect((await h.client.status(childId)).budgets.turns.limit).toBe(4);

    const status = await h.client.status(taskId);
    expect(status.children).toEqual([
      expect.objectContaining({ taskId: childId, agent: 'researcher', state: 'completed', slice: { turns: 4, toolCalls: 5 }, spent: expect.objectContaining({ turns: 2, toolCalls: 1 }) }),
    ]);
    // Own 2 turns + the child's 2; the 2 turns of the slice the child did not use came back.
    expect(status.budgets.turns).toEqual({ used: 4, limit: 10, left: 6 });
    expect(status.budgets.toolCalls).toEqual({ used: 2, limit: 20, left: 18 });
  });
});

test('a budget slice larger than what the parent has left is a policy tool error, and no child is started', async () => {
  const worker = await team([answer('never runs')]);
  await worker.runUntil(async () => {
    const taskId = await startLead([delegate('Too big.', { turns: 50 }), answer('I will do it myself.')], { turns: 5, toolCalls: 20 });
    expect(await h.client.result(taskId)).toMatchObject({ outcome: 'answered' });
    const [refused] = parsedResults(await h.client.transcript(taskId));
    expect(refused!.error).toMatchObject({ error_class: 'policy', code: 'budget_slice_too_large' });
    expect(refused!.error!.detail).toContain('turns 50 (3 left to give)');
    expect(await childrenOf(taskId)).toEqual([]);
    await expect(h.client.describe(`${taskId}--researcher-1`)).rejects.toThrow(/No task/);
    expect((await h.client.status(taskId)).children).toBeUndefined();
  });
});

test('delegation calls of one turn run as children at once, up to the concurrency limit; results come back in call order', async () => {
  // Each child's first model call takes a while, so overlapping children are seen overlapping.
  const worker = await team([{ ...answer('researched'), delay_ms: 1_500 }], { maxConcurrentSubagents: 2 });
  await worker.runUntil(async () => {
    const taskId = await startLead([delegateMany(['one', 'two', 'three'], { turns: 2, toolCalls: 2 }), answer('all three done')], { turns: 20, toolCalls: 20 });
    expect(await h.client.result(taskId)).toMatchObject({ outcome: 'answered', text: 'all three done' });
    const results = parsedResults(await h.client.transcript(taskId));
    expect(results.map((r) => r.task_id)).toEqual([1, 2, 3].map((n) => `${taskId}--researcher-${n}`));
    expect(results.every((r) => r.outcome === 'answered')).toBe(true);

    const [a, b, c] = await Promise.all(results.map((r) => h.client.client.workflow.getHandle(r.task_id as string).describe()));
    // The first two ran at the same time; the third waited for a free place (limit 2).
    expect(Math.max(a!.startTime.getTime(), b!.startTime.getTime())).toBeLessThan(Math.min(a!.closeTime!.getTime(), b!.closeTime!.getTime()));
    expect(c!.startTime.getTime()).toBeGreaterThanOrEqual(Math.min(a!.closeTime!.getTime(), b!.closeTime!.getTime()));
    const status = await h.client.status(taskId);
    expect(status.budgets.turns.used).toBe(2 + 3);
  });
});

test('a child task that fails comes back to the parent model as a classified tool error, charged what it spent', async () => {
  // The researcher's script ends after one turn: its second model call fails the child task.
  const worker = await team([callTool('list_files', { dir: '.' })]);
  await worker.runUntil(async () => {
    const taskId = await startLead([delegate('Look around.', { turns: 5, toolCalls: 5 }), answer('The researcher failed; I report that.')]);
    expect(await h.client.result(taskId)).toMatchObject({ outcome: 'answered' });
    const [failed] = parsedResults(await h.client.transcript(taskId));
    expect(failed!.error).toMatchObject({ error_class: 'permanent', code: 'subagent_failed', retryable: false });
    expect(failed!.error!.detail).toContain(`researcher (task ${taskId}--researcher-1) failed`);
    expect(failed!.error!.hint).toMatch(/smaller task|another sub-agent|yourself/);
    expect((await h.client.describe(`${taskId}--researcher-1`)).executionStatus).toBe('FAILED');
    const [child] = (await h.client.status(taskId)).children!;
    // The child said what it spent (2 turns, 1 tool call), so it is not charged its whole slice (5, 5).
    expect(child).toMatchObject({ state: 'failed', spent: expect.objectContaining({ turns: 2, toolCalls: 1 }) });
  });
});

test("a child waiting for a person shows nested in the parent's view, holds its slice, and is answered from the parent by the child's own rules", async () => {
  const worker = await team([callTool('delete_file', { path: 'inbox/customer-note.txt' }), answer('deleted the note')]);
  await worker.runUntil(async () => {
    const taskId = await startLead([delegate('Delete the customer note.', { turns: 3, toolCalls: 3 }), answer('The note is gone.')]);
    const childId = `${taskId}--researcher-1`;
    await statusWhen(h, childId, (s) => s.pendingApprovals.length === 1);
    const parent = await statusWhen(h, taskId, (s) => s.children?.[0]?.state === 'running');
    // The parent waits on its child: the slice is held out of what it has left.
    expect(parent.budgets.turns).toEqual({ used: 1, limit: 10, left: 6, held: 3 });

    const view = await h.client.view(taskId);
    expect(view.nested).toHaveLength(1);
    const [nested] = view.nested!;
    expect(nested).toMatchObject({ taskId: childId, path: ['researcher'], agentStatus: 'awaiting_approval' });
    expect(nested!.approvals[0]).toMatchObject({ tool: 'delete_file', effect: 'destructive' });
    expect(nestedLabel(taskId, nested!, 'delete_file')).toBe(`${taskId} › researcher: delete_file`);
    // The CLI's status of the parent says so.
    const cli = await runCli(['status', taskId, '--address', h.server.address, '--task-queue', h.taskQueue]);
    expect(cli.stdout).toContain(`${taskId} › researcher: delete_file`);

    // The inbox names the child's approval under the task it works for.
    const waiting = (await waitingTasks(h.client, new ApprovalArguments(h.client.client, h.blobStore), 50)).find((t) => t.summary.taskId === childId);
    expect(waiting?.nested).toEqual({ top: taskId, path: ['researcher'] });
    expect(inboxPage({}, [waiting!])).toContain(`${taskId} › researcher: delete_file`);

    // The MCP server's list_pending_approvals names it under the parent too.
    const mcp = await mcpClient();
    const listed = (await mcp.callTool({ name: 'list_pending_approvals', arguments: {} })).structuredContent as { approvals: Record<string, unknown>[] };
    expect(listed.approvals.find((a) => a.task_id === childId)).toMatchObject({ parent_task: taskId, nested: `${taskId} › researcher: delete_file` });
    await mcp.close();

    // Answered through the parent: the decision goes to the child task that holds the approval.
    const outcome = await h.client.decide(taskId, { kind: 'approve', input: { approvalId: nested!.approvals[0]!.id, by: 'alice' } });
    expect(outcome).toMatchObject({ applied: true, decidedOn: childId });
    expect(await h.client.result(taskId)).toMatchObject({ outcome: 'answered', text: 'The note is gone.' });
    expect((await h.client.status(childId)).approvals[0]).toMatchObject({ decision: 'approved', by: 'alice' });
    expect((await h.client.status(taskId)).budgets.turns).toEqual({ used: 4, limit: 10, left: 6 });
  });
});

test('a task started by hand that claims a parent (ParentTask, delegation depth) is not nested under it and cannot take its decisions', async () => {
  const worker = await team([callTool('delete_file', { path: 'inbox/customer-note.txt' }), answer('deleted')]);
  await worker.runUntil(async () => {
    const parentId = await startLead([delegate('Delete the customer note.', { turns: 3, toolCalls: 3 }), answer('done')]);
    const childId = `${parentId}--researcher-1`;
    await statusWhen(h, childId, (s) => s.pendingApprovals.length === 1);
    const forgedId = h.taskId('forged');
    await h.client.client.workflow.start('agentTask', {
      taskQueue: h.taskQueue,
      workflowId: forgedId,
      args: [{ agent: 'researcher', prompt: 'x', delegation: { depth: 3 } }],
      typedSearchAttributes: [{ key: ParentTaskKey, value: parentId }],
    });
    const forged = await statusWhen(h, forgedId, (s) => s.pendingApprovals.length === 1);
    expect((await h.client.describe(forgedId)).parentTask).toBeUndefined();

    const nested = (await h.client.view(parentId)).nested ?? [];
    expect(nested.map((n) => n.taskId)).toEqual([childId]);
    // Its approval is not the parent's to route: the parent refuses it as unknown.
    await expect(h.client.decide(parentId, { kind: 'approve', input: { approvalId: forged.pendingApprovals[0]!.id, by: 'mallory' } })).rejects.toThrow(/approval/);
    await h.client.cancel(forgedId);
    await h.client.cancel(parentId);
  });
});

test("cancelling the parent cancels its running child, waits for the child's running tool to stop, and both end cancelled", async () => {
  h.orders.inject({ kind: 'slow', delayMs: 60_000 }, 1);
  const worker = await team([callTool('search_orders', { customer_id: 'C-1001' }), answer('never reached')]);
  await worker.runUntil(async () => {
    const taskId = await startLead([delegate('Search slowly.', { turns: 3, toolCalls: 3 }), answer('never reached')]);
    const childId = `${taskId}--researcher-1`;
    await statusWhen(h, childId, (s) => s.events.some((e) => e.kind === 'tool_called' && e.tool === 'search_orders'));
    await h.client.cancel(taskId);
    await expect(h.client.result(taskId)).rejects.toThrow();
    expect((await h.client.describe(taskId)).executionStatus).toBe('CANCELLED');
    expect((await h.client.describe(childId)).executionStatus).toBe('CANCELLED');

    // The child's tool call confirmed it stopped before the child closed, and the child closed before the parent.
    const child = (await h.client.handle(childId).fetchHistory()).events!;
    const toolStopped = child.findIndex((e) => e.activityTaskCanceledEventAttributes);
    expect(toolStopped).toBeGreaterThan(0);
    expect(toolStopped).toBeLessThan(child.findIndex((e) => e.workflowExecutionCanceledEventAttributes));
    const parent = (await h.client.handle(taskId).fetchHistory()).events!;
    const childClosed = parent.findIndex((e) => e.childWorkflowExecutionCanceledEventAttributes);
    expect(childClosed).toBeGreaterThan(0);
    expect(childClosed).toBeLessThan(parent.findIndex((e) => e.workflowExecutionCanceledEventAttributes));
    expect((await h.client.status(taskId)).children?.[0]).toMatchObject({ state: 'cancelled' });
  });
});

test('a child that runs out of its slice blocks for a person; the parent keeps waiting, shows the block nested, and an unblock through the parent reaches the child', async () => {
  const worker = await team([callTool('list_files', { dir: '.' }), answer('looked around')]);
  await worker.runUntil(async () => {
    const taskId = await startLead([delegate('Look around.', { turns: 1, toolCalls: 3 }), answer('The researcher looked.')]);
    const childId = `${taskId}--researcher-1`;
    const blocked = await statusWhen(h, childId, (s) => s.agentStatus === 'blocked');
    expect(blocked.blocked).toMatchObject({ code: 'turn_budget' });
    const [nested] = (await h.client.view(taskId)).nested!;
    expect(nested).toMatchObject({ taskId: childId, path: ['researcher'], agentStatus: 'blocked', block: { id: blocked.blocked!.id, code: 'turn_budget' } });
    expect((await h.client.status(taskId)).agentStatus).toBe('running');

    // `durable-agent unblock PARENT` without --block: the one blocked child is the one meant.
    const cli = await runCli(['unblock', taskId, '--as', 'alice', '--turns', '3', '--address', h.server.address, '--task-queue', h.taskQueue]);
    expect(cli.code).toBe(0);
    expect(cli.stdout).toContain(`(decided on sub-agent task ${childId}, by its own rules)`);
    expect(await h.client.result(taskId)).toMatchObject({ outcome: 'answered', text: 'The researcher looked.' });
    // The child spent 2 turns, one more than its slice: the parent is charged what it spent.
    expect((await h.client.status(taskId)).budgets.turns).toEqual({ used: 4, limit: 10, left: 6 });
  });
});

test('a child cancelled by a person (not its parent) comes back to the parent model as a policy tool error, and the parent goes on', async () => {
  h.orders.inject({ kind: 'slow', delayMs: 60_000 }, 1);
  const worker = await team([callTool('search_orders', { customer_id: 'C-1001' }), answer('never reached')]);
  await worker.runUntil(async () => {
    const taskId = await startLead([delegate('Search slowly.', { turns: 3, toolCalls: 3 }), answer('The search was cancelled; I stop here.')]);
    const childId = `${taskId}--researcher-1`;
    await statusWhen(h, childId, (s) => s.events.some((e) => e.kind === 'tool_called' && e.tool === 'search_orders'));
    await h.client.cancel(childId);
    expect(await h.client.result(taskId)).toMatchObject({ outcome: 'answered', text: 'The search was cancelled; I stop here.' });
    const [cancelled] = parsedResults(await h.client.transcript(taskId));
    expect(cancelled!.error).toMatchObject({ error_class: 'policy', code: 'subagent_cancelled' });
    expect((await h.client.describe(childId)).executionStatus).toBe('CANCELLED');
    // It could not say what it spent: its whole slice is charged.
    expect((await h.client.status(taskId)).children?.[0]).toMatchObject({ state: 'cancelled', spent: expect.objectContaining({ turns: 3, toolCalls: 3 }) });
  });
});
