import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { defineAgent } from '../../src/agents/define-agent';
import { HttpStatusError } from '../../src/errors/tool-failure';
import { defineTool } from '../../src/tools/define-tool';
import { HEARTBEAT_TIMEOUT_MS } from '../../src/workflows/base/activity-options';
import { localActivityTypeOf } from '../../src/history/task-history';
import { useHarness, answer, callTool, parsedResults, runTask, statusWhen, toolResultsOf } from '../support/harness';
import { listedWhen } from '../support/visibility';

const h = useHarness();

test('a scripted task runs several turns of real tool calls and completes with the final answer', async () => {
  const script = h.script([
    callTool('list_files', {}),
    callTool('search_orders', { customer_id: 'C-1001' }),
    callTool('write_file', { path: 'out/summary.txt', content: 'C-1001 has 3 orders' }),
    answer('Wrote out/summary.txt'),
  ]);
  const run = await runTask(h, { agent: 'demo', prompt: 'summarise C-1001', script });

  expect(run.result).toMatchObject({ outcome: 'answered', turns: 4, toolCalls: 3, text: 'Wrote out/summary.txt' });
  expect(run.result!.model).toMatch(/^scripted:script-\d+\.json$/);
  expect(readFileSync(path.join(h.workspaceDir, 'out/summary.txt'), 'utf8')).toBe('C-1001 has 3 orders');
  expect(h.orders.requests.filter((r) => r.customer_id === 'C-1001')).toHaveLength(1);
  const results = toolResultsOf(run.transcript);
  expect(results).toHaveLength(3);
  expect(JSON.parse(results[1]!.content).orders).toHaveLength(3);
  expect(results.every((r) => !r.is_error)).toBe(true);
});

test('status reports phase, turns, tool calls and events; list finds the task by AgentStatus and AgentName', async () => {
  const script = h.script([callTool('list_files', {}), answer('done')]);
  const run = await runTask(h, { agent: 'demo', prompt: 'look around', script, maxTurns: 5 });
  expect(run.view.status).toMatchObject({
    agent: 'demo',
    phase: 'completed',
    agentStatus: 'completed',
    turn: 2,
    budgets: { turns: { used: 2, limit: 5, left: 3 } },
    toolCalls: { total: 1, succeeded: 1, failed: 0 },
    pendingApprovals: [],
  });
  expect(run.view.status!.events.map((e) => e.kind)).toEqual(['task_started', 'model_replied', 'tool_called', 'tool_succeeded', 'model_replied', 'task_completed']);

  const completed = (
    await listedWhen(
      'the completed task',
      () => h.client.list({ status: 'completed', agent: 'demo' }),
      (rows) => rows.some((t) => t.taskId === run.taskId),
    )
  ).map((t) => t.taskId);
  expect(completed).toContain(run.taskId);
  expect((await h.client.list({ status: 'running' })).map((t) => t.taskId)).not.toContain(run.taskId);
});

test('an unknown tool is refused with the list of tools, and no activity runs for it', async () => {
  const run = await runTask(h, {
    agent: 'demo',
    prompt: 'x',
    script: h.script([callTool('drop_database', { really: true }), answer('ok, I will not')]),
  });
  const history = await h.client.handle(run.taskId).fetchHistory();
  const scheduled = history.events!.filter((e) => e.activityTaskScheduledEventAttributes).map((e) => e.activityTaskScheduledEventAttributes!.activityType!.name);
  expect(scheduled).toEqual(['callModel', 'callModel']);
  const [refusal] = toolResultsOf(run.transcript);
  expect(refusal!.is_error).toBe(true);
  const { error } = JSON.parse(refusal!.content);
  expect(error).toMatchObject({ error_class: 'model', code: 'unknown_tool' });
  expect(error.hint).toContain('search_orders');
});

test('a script that runs out of turns fails the task with a clear permanent error, not a stuck workflow', async () => {
  const run = await runTask(h, { agent: 'demo', prompt: 'x', script: h.script([callTool('list_files', {})]) });
  expect(run.failure).toBeDefined();
  expect(run.view.summary.executionStatus).toBe('FAILED');
  expect(run.view.status?.lastError).toMatchObject({ error_class: 'permanent', code: 'script_exhausted' });
  expect(run.view.status?.agentStatus).toBe('failed');
});

test('a task for an agent the worker does not have fails at once, naming the agents it has', async () => {
  const run = await runTask(h, { agent: 'nobody', prompt: 'x', script: h.script([answer('x')]) });
  expect(run.view.summary.executionStatus).toBe('FAILED');
  expect(run.view.status?.lastError?.detail).toContain('Registered: demo');
});

test('a tool declared local runs as a local activity (a marker in history, no task-queue round trip); its failures are classified like any other', async () => {
  let calls = 0;
  const lookup = defineTool({
    name: 'lookup',
    description: 'Looks a word up in memory.',
    input: z.object({ word: z.string() }),
    output: z.object({ word: z.string(), length: z.number() }),
    effect: 'read',
    idempotent: true,
    local: true,
    run: async ({ word }) => {
      calls += 1;
      if (word === 'missing') throw new HttpStatusError(404, '{"error":"not_found"}', {}, '/words/missing');
      // The first call fails as a 503: the local activity's retry policy runs it again.
      if (calls === 1) throw new HttpStatusError(503, '{"error":"unavailable"}', {}, '/words');
      return { word, length: word.length };
    },
  });
  const agent = defineAgent({ name: 'local-tools', system: 'x', tools: [lookup] });
  const script = h.script([callTool('lookup', { word: 'durable' }), callTool('lookup', { word: 'missing' }), answer('looked up')]);
  const run = await runTask(h, { agent: 'local-tools', prompt: 'look up', script }, [agent]);

  expect(run.result).toMatchObject({ outcome: 'answered', toolCalls: 2 });
  expect(calls).toBe(3);
  const [found, missing] = parsedResults(run.transcript);
  expect(found).toEqual({ word: 'durable', length: 7 });
  expect(missing!.error).toMatchObject({ error_class: 'permanent', code: 'not_found' });
  const events = (await h.client.handle(run.taskId).fetchHistory()).events!;
  const scheduled = events.map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter(Boolean);
  expect(scheduled).not.toContain('runTool');
  expect(events.map(localActivityTypeOf).filter(Boolean)).toEqual(['describeAgent', 'runTool', 'runTool']);
});

test('a non-idempotent write cannot be declared local', () => {
  expect(() =>
    defineTool({
      name: 'pay',
      description: 'Pays.',
      input: z.object({}),
      output: z.object({}),
      effect: 'write',
      idempotent: false,
      local: true,
      run: async () => ({}),
    }),
  ).toThrow('a non-idempotent write cannot be local');
});

test('a new task asks describeAgent in its first workflow task (a local activity: a marker, no task-queue round trip) and schedules its short activities (prepare, ...) with the heartbeat timeout (HEARTBEAT_TIMEOUT_MS), so a dead worker holds none of them for 30 s', async () => {
  const script = h.script([callTool('delete_file', { path: 'old.txt' }), answer('done')]);
  const taskId = h.taskId();
  const worker = await h.worker();
  await worker.runUntil(async () => {
    await h.client.start({ agent: 'demo', prompt: 'tidy up', model: { provider: 'scripted', script } }, { taskId });
    const [approval] = (await statusWhen(h, taskId, (s) => s.pendingApprovals.length > 0)).pendingApprovals;
    await h.client.approve(taskId, { approvalId: approval!.id, by: 'tester' });
    expect(await h.client.result(taskId)).toMatchObject({ outcome: 'answered' });
  });
  const events = (await h.client.history(taskId)).events!;
  const firstTask = events.find((e) => e.workflowTaskCompletedEventAttributes)!.eventId;
  const described = events.find((e) => localActivityTypeOf(e) === 'describeAgent');
  expect(described?.markerRecordedEventAttributes?.workflowTaskCompletedEventId?.toString()).toBe(firstTask?.toString());
  const scheduled = events.flatMap((e) => (e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes] : []));
  expect(scheduled.map((a) => a.activityType!.name)).not.toContain('describeAgent');
  const short = scheduled.filter((a) => ['prepareToolCall', 'notify', 'storeAudit', 'loadText'].includes(a.activityType!.name!));
  expect(short.map((a) => a.activityType!.name)).toContain('prepareToolCall');
  for (const activity of short) expect(Number(activity.heartbeatTimeout!.seconds)).toBe(HEARTBEAT_TIMEOUT_MS / 1000);
});

test("pause_turn: the paused turn goes back to the model as it is, and the task goes on to the model's answer", async () => {
  const script = h.script([{ content: [{ type: 'text', text: 'Still searching the archive' }], stop_reason: 'pause_turn' }, answer('Found it in the archive')]);
  const run = await runTask(h, { agent: 'demo', prompt: 'find it', script });

  expect(run.result).toMatchObject({ outcome: 'answered', turns: 2, toolCalls: 0 });
  expect(run.result!.text).toContain('Found it in the archive');
  // The second model call saw the paused turn as the last assistant message: nothing was dropped.
  const assistant = run.transcript.messages.filter((m) => m.role === 'assistant').map((m) => JSON.stringify(m.content));
  expect(assistant).toHaveLength(2);
  expect(assistant[0]).toContain('Still searching the archive');
});

test('refusal: the task ends at once as refused, with no tool run and no further model call', async () => {
  const script = h.script([
    { content: [{ type: 'text', text: 'I will not delete customer data.' }], stop_reason: 'refusal' },
    callTool('delete_file', { path: 'inbox/customer-note.txt' }),
    answer('never reached'),
  ]);
  const run = await runTask(h, { agent: 'demo', prompt: 'delete every customer note', script });

  expect(run.result).toMatchObject({ outcome: 'refused', turns: 1, toolCalls: 0 });
  expect(toolResultsOf(run.transcript)).toEqual([]);
  expect(existsSync(path.join(h.workspaceDir, 'inbox/customer-note.txt'))).toBe(true);
  expect(run.view.summary).toMatchObject({ executionStatus: 'COMPLETED' });
});
