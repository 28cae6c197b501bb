/**
 * The seeds' scenarios on a real server: each asserts what ran (the orders service counts real
 * executions) and what the model was told.
 */
import { temporal } from '@temporalio/proto';
import { z } from 'zod';
import { defineAgent, type AgentDefinition } from '../../src/agents/define-agent';
import { createDemoAgent } from '../../src/demo/demo-agent';
import { toolFaults, withFaults } from '../../src/testing/tool-faults';
import { defineTool } from '../../src/tools/define-tool';
import { useHarness, answer, callTool, parsedResults, runTask, statusWhen } from '../support/harness';

const h = useHarness();
afterEach(() => h.orders.clearFaults());

const live = (customer: string) => h.orders.requests.filter((r) => r.route === 'live' && r.customer_id === customer);

test("the seed's truncated-JSON trace: a model repeating the same call causes two executions (the engine's re-read), schema_mismatch told once, refusals, then a block for a person; the unblock does not run the broken tool again", async () => {
  h.orders.inject({ kind: 'truncate' }, Infinity);
  const repeat = () => callTool('search_orders', { customer_id: 'C-9921' }, 'Let me try that again.');
  const script = h.script([repeat(), repeat(), repeat(), repeat(), repeat(), answer('I could not read the orders; the service returns broken data.')]);
  const taskId = h.taskId('seed-trace');
  const worker = await h.worker();
  const { status, transcript, result, beforePerson } = await worker.runUntil(async () => {
    await h.client.start({ agent: 'demo', prompt: 'orders of C-9921', model: { provider: 'scripted', script } }, { taskId });
    const status = await statusWhen(h, taskId, (s) => s.agentStatus === 'blocked');
    const beforePerson = live('C-9921').length;
    await h.client.unblock(taskId, { by: 'ops@example.com', message: 'The orders API is broken; tell the user and stop.' });
    const result = await h.client.result(taskId);
    return { status, result, beforePerson, transcript: await h.client.transcript(taskId) };
  });

  // Until a person stepped in: the first model call ran the tool twice (the engine read it, waited
  // 200 ms, read it again and found the same cut: the tool's own fault), and the model was told once.
  // Every repeat after that was refused without running.
  expect(beforePerson).toBe(2);
  const results = parsedResults(transcript);
  const errors = results.map((r) => `${r.error?.error_class}/${r.error?.code}`);
  // An unblock forgives only failures a person can fix (issue 49 item 4): a broken answer is the
  // tool's own, so the fifth repeat is refused too. The whole trace: 2 executions, the model told once.
  expect(errors).toEqual(['schema_mismatch/invalid_json', 'policy/repeated_failed_call', 'policy/repeated_failed_call', 'policy/loop_detected', 'policy/repeated_failed_call']);
  expect(live('C-9921')).toHaveLength(2);
  expect(results.filter((r) => r.error?.error_class === 'schema_mismatch').map((r) => r.error!.attempts)).toEqual([2]);
  // Told with what was cut and a smaller query.
  expect(results[0]!.error!.detail).toMatch(/it stops inside `orders\[\d\]\.[^`]+` after \d complete item\(s\) of `orders`.*The same answer came back on 2 reads/);
  expect(results[0]!.error!.hint).toContain('A smaller query that asks for less: {"customer_id":"C-9921","status":"placed"}');
  expect(status.blocked).toMatchObject({ level: 'block', code: 'loop_detected', turn: 4 });
  expect(result).toMatchObject({ outcome: 'answered', turns: 6 });
  // The person's message went into the conversation right after the blocked turn's results.
  expect(JSON.stringify(transcript.messages[8])).toContain('[guidance from ops@example.com] The orders API is broken');
});

test('503 twice then success: retried by Temporal with growing, jittered delays; the model sees only the data', async () => {
  h.orders.inject({ kind: 'unavailable' }, 2);
  const run = await runTask(h, { agent: 'demo', prompt: 'x', script: h.script([callTool('search_orders', { customer_id: 'C-1001' }), answer('ok')]) });
  const calls = live('C-1001').slice(-3);
  expect(calls).toHaveLength(3);
  // Backoff with jitter: attempt 2 waits 0.5-1 s, attempt 3 waits 1-2 s (plus scheduling).
  expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(500);
  expect(calls[2]!.at - calls[1]!.at).toBeGreaterThanOrEqual(1_000);
  expect(parsedResults(run.transcript)[0]).toMatchObject({ orders: expect.any(Array), has_more: false });
  // A failure the tool reported came from a live worker: the retry keeps that worker's sticky queue
  // (only a heartbeat timeout resets it, sticky-release.ts), so the next step goes back to its cache.
  const events = (await h.client.handle(run.taskId).fetchHistory()).events!;
  const retried = events.findIndex((e) => (e.activityTaskStartedEventAttributes?.attempt ?? 0) >= 3);
  const next = events.slice(retried + 1).find((e) => e.workflowTaskScheduledEventAttributes);
  expect(retried).toBeGreaterThan(0);
  expect(next?.workflowTaskScheduledEventAttributes?.taskQueue?.kind).toBe(temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_STICKY);
});

test('429 with Retry-After: the next attempt waits at least that long', async () => {
  h.orders.inject({ kind: 'rate_limited', retryAfterSeconds: 2 }, 1);
  await runTask(h, { agent: 'demo', prompt: 'x', script: h.script([callTool('search_orders', { customer_id: 'C-1002', page: 2 }), answer('ok')]) });
  const calls = live('C-1002').slice(-2);
  expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(2_000);
});

test('permission denied: no retry, the fallback runs, and the model is told a fallback was used', async () => {
  h.orders.inject({ kind: 'forbidden' }, 1);
  const before = live('C-1001').length;
  const run = await runTask(h, { agent: 'demo', prompt: 'x', script: h.script([callTool('search_orders', { customer_id: 'C-1001', status: 'shipped' }), answer('ok')]) });
  expect(live('C-1001').length - before).toBe(1);
  expect(h.orders.requests.filter((r) => r.route === 'archive' && r.status === 'shipped')).toHaveLength(1);
  expect(parsedResults(run.transcript)[0]).toMatchObject({
    used_fallback: 'search_orders_archive',
    primary_error: { error_class: 'permanent', code: 'permission_denied' },
    result: { source: 'archive' },
  });
});

test('enum \'shipping\' is refused with the allowed values; the corrected call succeeds; "5" and "true" are coerced', async () => {
  const run = await runTask(h, {
    agent: 'demo',
    prompt: 'x',
    script: h.script([
      callTool('search_orders', { customer_id: 'C-1002', status: 'shipping' }),
      callTool('search_orders', { customer_id: 'C-1002', status: 'shipped', page: '1', include_cancelled: 'true' }),
      answer('ok'),
    ]),
  });
  const [wrong, corrected] = parsedResults(run.transcript);
  expect(wrong!.error).toMatchObject({ error_class: 'model', code: 'invalid_arguments' });
  expect(wrong!.error!.detail).toBe('Field `status`: got "shipping"; expected one of "placed", "shipped", "delivered", "cancelled"');
  expect(corrected).toMatchObject({ page: 1, has_more: false });
  expect(h.orders.requests.at(-1)).toMatchObject({ customer_id: 'C-1002', status: 'shipped', page: 1 });
});

test('has_more comes back as partial_data with the data and the next page; an empty first page (twice: the engine reads it again) is semantic', async () => {
  h.orders.inject({ kind: 'empty_first_page' }, 2);
  const run = await runTask(h, {
    agent: 'demo',
    prompt: 'x',
    script: h.script([callTool('search_orders', { customer_id: 'C-9921', status: 'placed' }), callTool('search_orders', { customer_id: 'C-9921', page: 1 }), answer('ok')]),
  });
  const [empty, partial] = parsedResults(run.transcript);
  expect(empty!.note).toMatchObject({ error_class: 'semantic', code: 'empty_first_page' });
  expect(partial).toMatchObject({ data: { orders: expect.any(Array), has_more: true }, note: { error_class: 'partial_data', hint: 'Call again with page=2 to continue.' } });
  expect((partial!.data as { orders: unknown[] }).orders).toHaveLength(5);
});

test('a duplicate read is answered from the ledger without running; a duplicate write is refused', async () => {
  const before = live('C-1001').length;
  const run = await runTask(h, {
    agent: 'demo',
    prompt: 'x',
    script: h.script([
      callTool('search_orders', { customer_id: 'C-1001' }),
      callTool('search_orders', { page: 1, customer_id: 'C-1001' }),
      callTool('write_file', { path: 'dup.txt', content: 'once' }),
      callTool('write_file', { path: 'dup.txt', content: 'once' }),
      answer('ok'),
    ]),
  });
  expect(live('C-1001').length - before).toBe(1);
  const [, reused, , dupWrite] = parsedResults(run.transcript);
  expect(reused).toMatchObject({ ledger: expect.stringContaining('turn 1'), result: { orders: expect.any(Array) } });
  expect(dupWrite!.error).toMatchObject({ error_class: 'policy', code: 'duplicate_write' });
  const history = await h.client.handle(run.taskId).fetchHistory();
  const toolActivities = history.events!.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'runTool');
  expect(toolActivities).toHaveLength(2);
});

test('a spent turn budget blocks the task; a bad unblock is rejected; unblock with more turns resumes it', async () => {
  const script = h.script([callTool('list_files', { dir: '.' }), callTool('list_files', { dir: 'inbox' }), answer('finished after more turns')]);
  const taskId = h.taskId('budget');
  const worker = await h.worker();
  await worker.runUntil(async () => {
    await h.client.start({ agent: 'demo', prompt: 'x', model: { provider: 'scripted', script }, maxTurns: 2 }, { taskId });
    const blocked = await statusWhen(h, taskId, (s) => s.agentStatus === 'blocked');
    expect(blocked.blocked).toMatchObject({ code: 'turn_budget' });
    const historyLength = async () => (await h.client.handle(taskId).fetchHistory()).events!.length;
    // The block's notice is delivered without the task waiting for it: let its activity and the
    // workflow task after it land before counting, so only the rejected updates could add events.
    for (;;) {
      const { raw } = await h.client.handle(taskId).describe();
      if (!raw.pendingActivities?.length && !raw.pendingWorkflowTask) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const before = await historyLength();
    await expect(h.client.unblock(taskId, { by: '', message: 'x' })).rejects.toThrow(/`by` must not be empty/);
    await expect(h.client.unblock(taskId, { by: 'ana', budget: { turns: 1 } })).rejects.toThrow(/budget.turns must be an integer above what is used \(2\)/);
    // Rejected by the validator: nothing was written to the task's history.
    expect(await historyLength()).toBe(before);
    await h.client.unblock(taskId, { by: 'ana', budget: { turns: 4 } });
    expect(await h.client.result(taskId)).toMatchObject({ outcome: 'answered', text: 'finished after more turns', turns: 3 });
    const status = await h.client.status(taskId);
    expect(status.escalations[0]).toMatchObject({ code: 'turn_budget', resolved: { by: 'ana', how: 'raised turns 2 -> 4' } });
    expect(status.decisions).toEqual([expect.objectContaining({ by: 'ana', action: 'unblock' })]);
    await expect(h.client.unblock(taskId, { by: 'ana' })).rejects.toThrow();
  });
});

test('a message from a person reaches the model before its next call and is in the audit trail', async () => {
  h.orders.inject({ kind: 'slow', delayMs: 1_500 }, 1);
  const script = h.script([callTool('search_orders', { customer_id: 'C-1002', status: 'placed' }), answer('noted')]);
  const taskId = h.taskId('message');
  const worker = await h.worker();
  await worker.runUntil(async () => {
    await h.client.start({ agent: 'demo', prompt: 'x', model: { provider: 'scripted', script } }, { taskId });
    await statusWhen(h, taskId, (s) => s.phase === 'running_tools');
    await h.client.message(taskId, { by: 'lead', text: 'Only placed orders matter.' });
    await h.client.result(taskId);
    const transcript = await h.client.transcript(taskId);
    expect(JSON.stringify(transcript.messages[2])).toContain('[guidance from lead] Only placed orders matter.');
    expect((await h.client.status(taskId)).decisions).toEqual([expect.objectContaining({ by: 'lead', action: 'message' })]);
  });
});

test('too many tool calls in one turn: the rest are refused and the model answers in a last call without tools', async () => {
  const script = h.script([
    {
      content: [
        { type: 'tool_use', name: 'list_files', input: { dir: '.' } },
        { type: 'tool_use', name: 'list_files', input: { dir: 'inbox' } },
        { type: 'tool_use', name: 'read_file', input: { path: 'inbox/customer-note.txt' } },
      ],
    },
    answer('answered with what I had'),
  ]);
  const run = await runTask(h, { agent: 'demo', prompt: 'x', script, budgets: { toolCallsPerTurn: 2 } });
  expect(run.result).toMatchObject({ outcome: 'budget_exhausted', finalCallWithoutTools: true, toolCalls: 2 });
  expect(parsedResults(run.transcript)[2]!.error).toMatchObject({ code: 'turn_tool_budget' });
});

test('the self-correction bound: after repeated invalid calls to one tool, the next is refused and a person is asked', async () => {
  const bad = (n: number) => callTool('search_orders', { customer_id: `customer ${n}` });
  const script = h.script([bad(1), bad(2), bad(3), bad(4), answer('gave up')]);
  const taskId = h.taskId('corrections');
  const worker = await h.worker();
  const blocked = await worker.runUntil(async () => {
    await h.client.start({ agent: 'demo', prompt: 'x', model: { provider: 'scripted', script } }, { taskId });
    const status = await statusWhen(h, taskId, (s) => s.agentStatus === 'blocked');
    await h.client.handle(taskId).terminate('test over');
    return status;
  });
  expect(blocked.blocked).toMatchObject({ code: 'correction_budget', turn: 4 });
  expect(blocked.lastError).toMatchObject({ code: 'correction_budget' });
});

test('every tool result tells the model the budget left, with a warning before it runs out', async () => {
  const run = await runTask(h, {
    agent: 'demo',
    prompt: 'x',
    budgets: { toolCalls: 3 },
    script: h.script([callTool('list_files', { dir: '.' }), answer('ok')]),
  });
  const note = JSON.stringify(run.transcript.messages[2]);
  expect(note).toContain('[budget] turn 1 of 20; 2 of 3 tool calls left.');
  expect(note).toContain('Warning: the budget is nearly spent');
});

// Issue 49, items 1 and 2: a broken answer is read again by the engine inside the tool's activity,
// before the model sees anything; only the same break twice reaches the model, once; an idempotent
// write whose answer was garbled after it committed is asked again under the same key; a
// non-idempotent write with a garbled answer is never sent again.

async function runToolActivities(taskId: string): Promise<number> {
  const history = await h.client.handle(taskId).fetchHistory();
  return history.events!.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'runTool').length;
}

test('a read truncated once, then whole: the model sees only the orders, no error, and the task answers without a person', async () => {
  h.orders.inject({ kind: 'truncate' }, 1);
  const before = live('C-1002').length;
  const run = await runTask(h, {
    agent: 'demo',
    prompt: 'orders of C-1002',
    script: h.script([callTool('search_orders', { customer_id: 'C-1002', status: 'placed' }), answer('Here are the placed orders.')]),
  });
  expect(live('C-1002').length - before).toBe(2);
  const [result] = parsedResults(run.transcript);
  expect(result).toMatchObject({ orders: expect.any(Array), page: 1, has_more: false });
  expect(result!.error).toBeUndefined();
  expect(JSON.stringify(run.transcript)).not.toContain('invalid_json');
  expect(run.result).toMatchObject({ outcome: 'answered', text: 'Here are the placed orders.' });
  expect(run.view.status?.escalations).toEqual([]);
  expect(run.view.status?.decisions).toEqual([]);
  // One activity, one scheduled/started/completed triple: the re-read left no trace in history.
  expect(await runToolActivities(run.taskId)).toBe(1);
});

test('an empty first page with more to come, once, is read again: the model gets the real page', async () => {
  h.orders.inject({ kind: 'empty_first_page' }, 1);
  const run = await runTask(h, { agent: 'demo', prompt: 'x', script: h.script([callTool('search_orders', { customer_id: 'C-1001' }), answer('ok')]) });
  const [result] = parsedResults(run.transcript);
  expect(result).toMatchObject({ orders: [expect.anything(), expect.anything(), expect.anything()], has_more: false });
  expect(run.result).toMatchObject({ outcome: 'answered' });
});

test('truncated the same way every time: two reads in one activity, the structured error told once, in one model call', async () => {
  h.orders.inject({ kind: 'truncate' }, Infinity);
  const before = live('C-9921').length;
  const run = await runTask(h, {
    agent: 'demo',
    prompt: 'orders of C-9921',
    script: h.script([callTool('search_orders', { customer_id: 'C-9921' }), answer('The orders service cuts its answers; I asked for placed orders only.')]),
  });
  expect(live('C-9921').length - before).toBe(2);
  const results = parsedResults(run.transcript);
  expect(results).toHaveLength(1);
  expect(results[0]!.error).toMatchObject({ error_class: 'schema_mismatch', code: 'invalid_json', retryable: false, attempts: 2 });
  expect(results[0]!.error!.detail).toContain('The same answer came back on 2 reads');
  expect(results[0]!.error!.hint).toContain('{"customer_id":"C-9921","status":"placed"}');
  expect(await runToolActivities(run.taskId)).toBe(1);
  expect(run.result).toMatchObject({ outcome: 'answered', turns: 2 });
});

test('an idempotent write whose answer was garbled after it committed is re-sent under the same key: one effect, one key', async () => {
  h.orders.inject({ kind: 'truncate' }, 1);
  const writesBefore = h.orders.writes.length;
  const effectsBefore = h.orders.effects.length;
  const run = await runTask(h, {
    agent: 'demo',
    prompt: 'refund O-0014',
    script: h.script([callTool('refund_order', { order_id: 'O-0014', amount_cents: 150, reason: 'late' }), answer('refunded')]),
  });
  const effects = h.orders.effects.slice(effectsBefore);
  const writes = h.orders.writes.slice(writesBefore);
  expect(effects).toHaveLength(1);
  expect(effects[0]).toMatchObject({ kind: 'refund', order_id: 'O-0014', amount_cents: 150 });
  expect(writes).toHaveLength(2);
  expect(new Set(writes.map((w) => w.idempotency_key))).toEqual(new Set([effects[0]!.idempotency_key]));
  expect(writes.map((w) => w.replayed)).toEqual([false, true]);
  // The model got the service's stored answer, not an error.
  expect(parsedResults(run.transcript)[0]).toMatchObject({ order_id: 'O-0014', amount_cents: 150, refund_id: expect.stringMatching(/^R-/) });
  expect(run.result).toMatchObject({ outcome: 'answered' });
});

test('a non-idempotent write with a garbled answer is never sent again, by the engine or by a repeat of the model', async () => {
  const notes: string[] = [];
  const append = withFaults(
    defineTool({
      name: 'append_note',
      description: 'Append a line to the shared notes (not idempotent: each call appends).',
      input: z.object({ text: z.string() }),
      output: z.object({ lines: z.number().int() }),
      effect: 'write',
      idempotent: false,
      run: async ({ text }) => {
        notes.push(text);
        return { lines: notes.length };
      },
    }),
  ).inject(toolFaults.garble(), Infinity);
  const agent: AgentDefinition = defineAgent({
    name: `notes-${Math.random().toString(36).slice(2, 8)}`,
    system: 'test',
    policy: { write: 'allow' },
    tools: [append],
  });
  const run = await runTask(
    h,
    {
      agent: agent.name,
      prompt: 'add a note',
      script: h.script([callTool('append_note', { text: 'called the customer' }), callTool('append_note', { text: 'called the customer' }), answer('noted')]),
    },
    [agent, createDemoAgent({ workspaceDir: h.workspaceDir, ordersUrl: h.orders.url })],
  );
  expect(append.executions).toBe(1);
  expect(notes).toEqual(['called the customer']);
  const [first, repeat] = parsedResults(run.transcript);
  expect(first!.error).toMatchObject({ error_class: 'schema_mismatch', code: 'invalid_json', attempts: 1 });
  expect(repeat!.error).toMatchObject({ error_class: 'policy' });
});
