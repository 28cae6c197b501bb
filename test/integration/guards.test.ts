/**
 * The seeds' scenarios on a real server: each asserts what ran (the orders service counts real
 * executions) and what the model was told.
 */
import { temporal } from '@temporalio/proto';
import { useHarness, answer, callTool, parsedResults, runTask, statusWhen } from '../support/harness';

const h = useHarness();
afterEach(() => h.orders.clearFaults());

const live = (customer: string) => h.orders.requests.filter((r) => r.route === 'live' && r.customer_id === customer);

test("the seed's truncated-JSON trace: a model repeating the same call causes one execution, schema_mismatch, refusals, then a block for a person", async () => {
  h.orders.inject({ kind: 'truncate' }, Infinity);
  const repeat = () => callTool('search_orders', { customer_id: 'C-9921' }, 'Let me try that again.');
  const script = h.script([repeat(), repeat(), repeat(), repeat(), repeat(), answer('I could not read the orders; the service returns broken data.')]);
  const taskId = h.taskId('seed-trace');
  const worker = await h.worker();
  const { status, transcript, result } = await worker.runUntil(async () => {
    await h.client.start({ agent: 'demo', prompt: 'orders of C-9921', model: { provider: 'scripted', script } }, { taskId });
    const status = await statusWhen(h, taskId, (s) => s.agentStatus === 'blocked');
    await h.client.unblock(taskId, { by: 'ops@example.com', message: 'The orders API is broken; tell the user and stop.' });
    const result = await h.client.result(taskId);
    return { status, result, transcript: await h.client.transcript(taskId) };
  });

  expect(live('C-9921')).toHaveLength(1);
  const errors = parsedResults(transcript).map((r) => `${r.error?.error_class}/${r.error?.code}`);
  expect(errors).toEqual(['schema_mismatch/invalid_json', 'policy/repeated_failed_call', 'policy/repeated_failed_call', 'policy/loop_detected', 'policy/repeated_failed_call']);
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

test('has_more comes back as partial_data with the data and the next page; an empty first page is semantic', async () => {
  h.orders.inject({ kind: 'empty_first_page' }, 1);
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
