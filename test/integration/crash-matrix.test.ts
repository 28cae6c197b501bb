/**
 * The crash matrix: a `durable-agent worker` process is killed with SIGKILL at each point where a
 * real worker can die, a new worker takes over, and the task completes. The orders service's
 * effect log is the witness: every write happened exactly once, and no approval was asked twice.
 * The core lane's crash (an idempotent write killed after it committed) is in crash-core.test.ts.
 */
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { localActivityTypeOf, manifestIn } from '../../src/history/task-history';
import { heldListingFiles } from '../support/crash-agents';
import { useHarness, answer, callTool, familyNameOf, parsedResults, statusWhen, toolResultsOf } from '../support/harness';
import { HELD_MS, refund, rescript, useDoomedWorkers, waitFor } from '../support/doomed-workers';
import { IntentClaims } from '../../src/forks/intent-claims';

const h = useHarness();
const { doomedWorker, replacementWorker, inFlight, effectsOn, writesTo, approvalsAsked, attemptsOf } = useDoomedWorkers(h);

test('SIGKILL during a model call: the call is retried on the new worker after the heartbeat timeout; earlier writes are not redone', async () => {
  // The doomed worker's model call is held until it dies; the retry reads the script without the hold.
  const turns = [refund('O-0001'), answer('refunded once')];
  const script = h.script([turns[0]!, { ...turns[1]!, delay_ms: HELD_MS }]);
  const taskId = h.taskId('crash-model');
  const doomed = doomedWorker();
  await h.client.start({ agent: 'demo', prompt: 'refund', model: { provider: 'scripted', script } }, { taskId });
  await waitFor('the refund', () => effectsOn('O-0001').length > 0);
  await inFlight(taskId, 'callModel');
  expect(await doomed.kill()).toBe('SIGKILL');
  rescript(script, turns);

  const result = await (await replacementWorker()).runUntil(h.client.result(taskId));
  expect(result).toMatchObject({ outcome: 'answered', text: 'refunded once' });
  expect(effectsOn('O-0001')).toHaveLength(1);
  expect(writesTo('O-0001')).toHaveLength(1);
  // History keeps the last attempt of each call: the first model call, then the killed one's retry.
  expect(await attemptsOf(taskId, 'callModel')).toEqual([1, 2]);
});

test('SIGKILL during a read tool: the read is retried on the new worker, the writes around it happen once', async () => {
  h.orders.inject({ kind: 'slow', delayMs: HELD_MS }, 1);
  const script = h.script([
    callTool('search_orders', { customer_id: 'C-1002' }),
    refund('O-0002'),
    callTool('write_file', { path: 'after.txt', content: 'written after the crash' }),
    answer('survived'),
  ]);
  const taskId = h.taskId('crash-read');
  const doomed = doomedWorker();
  await h.client.start({ agent: 'demo', prompt: 'survive', model: { provider: 'scripted', script } }, { taskId });
  await waitFor('the slow search to reach the orders service', () => h.orders.requests.some((r) => r.customer_id === 'C-1002'));
  expect(await doomed.kill()).toBe('SIGKILL');

  const result = await (await replacementWorker()).runUntil(h.client.result(taskId));
  expect(result).toMatchObject({ outcome: 'answered', text: 'survived', toolCalls: 3 });
  expect(h.orders.requests.filter((r) => r.customer_id === 'C-1002')).toHaveLength(2);
  expect(effectsOn('O-0002')).toHaveLength(1);
  expect(await attemptsOf(taskId, 'runTool')).toEqual([2, 1, 1]);
});

test('SIGKILL during an idempotent write whose every attempt dies: the model is told the outcome is unknown, its identical retry reuses the key, one effect', async () => {
  h.orders.inject({ kind: 'slow_reply', delayMs: HELD_MS }, 1);
  const call = callTool('refund_once', { order_id: 'O-0012', amount_cents: 100, reason: 'late delivery' });
  const script = h.script([call, call, answer('refunded once')]);
  const taskId = h.taskId('crash-all-died');
  const doomed = doomedWorker();
  await h.client.start({ agent: 'once', prompt: 'refund', model: { provider: 'scripted', script } }, { taskId });
  await waitFor('the refund to commit', () => effectsOn('O-0012').length > 0);
  expect(await doomed.kill()).toBe('SIGKILL');

  const { result, transcript } = await (await replacementWorker()).runUntil(async () => ({
    result: await h.client.result(taskId),
    transcript: await h.client.transcript(taskId),
  }));
  expect(result).toMatchObject({ outcome: 'answered', text: 'refunded once' });
  const [first, second] = parsedResults(transcript);
  expect(first!.error).toMatchObject({ code: 'timeout', retryable: false, hint: expect.stringContaining('same idempotency key') });
  expect(second!.error).toBeUndefined();
  expect(effectsOn('O-0012')).toHaveLength(1);
  const writes = writesTo('O-0012');
  expect(new Set(writes.map((w) => w.idempotency_key)).size).toBe(1);
  expect(writes.at(-1)).toMatchObject({ replayed: true });
});

test('SIGKILL during a non-idempotent write: not retried; the task blocks with "outcome unknown" until a person says what happened', async () => {
  h.orders.inject({ kind: 'slow_reply', delayMs: HELD_MS }, 1);
  const script = h.script([callTool('legacy_refund', { order_id: 'O-0005', amount_cents: 100 }), answer('the refund went through once')]);
  const taskId = h.taskId('crash-unknown');
  const doomed = doomedWorker();
  await h.client.start({ agent: 'legacy', prompt: 'refund', model: { provider: 'scripted', script } }, { taskId });
  await waitFor('the refund to commit', () => effectsOn('O-0005').length > 0);
  expect(await doomed.kill()).toBe('SIGKILL');

  const worker = await replacementWorker();
  const result = await worker.runUntil(async () => {
    const blocked = await statusWhen(h, taskId, (s) => s.agentStatus === 'blocked');
    expect(blocked.blocked).toMatchObject({ code: 'outcome_unknown', reason: expect.stringContaining('may or may not have taken effect') });
    // Failed by the replacement's dead-worker watch (the doomed process is gone), or by the heartbeat timeout if it noticed first.
    expect(blocked.lastError).toMatchObject({ code: 'timeout', detail: expect.stringMatching(/the worker running it died|stopped heartbeating/) });
    await h.client.unblock(taskId, { by: 'ops', message: 'The refund went through (R-0003 in the ledger). Do not repeat it.' });
    return h.client.result(taskId);
  });
  expect(result).toMatchObject({ outcome: 'answered' });
  expect(writesTo('O-0005')).toHaveLength(1);
  expect(effectsOn('O-0005')).toHaveLength(1);
});

test('SIGKILL during a non-idempotent write that can be reconciled: the next attempt looks at the order, finds the refund and settles it as done; nobody is asked, nothing is sent twice (issue 49)', async () => {
  // The refund's POST is held (its GET before it is not): the worker dies after the service committed it.
  h.orders.gate = (request) => (request.kind === 'write' && request.order_id === 'O-0015' ? { kind: 'slow_reply', delayMs: HELD_MS } : undefined);
  try {
    const script = h.script([callTool('reconciled_refund', { order_id: 'O-0015', amount_cents: 100 }), answer('the refund went through once')]);
    const taskId = h.taskId('crash-reconciled');
    const doomed = doomedWorker();
    await h.client.start({ agent: 'legacy', prompt: 'refund', model: { provider: 'scripted', script } }, { taskId });
    await waitFor('the refund to commit', () => effectsOn('O-0015').length > 0);
    expect(await doomed.kill()).toBe('SIGKILL');
    const { result, status, transcript } = await (await replacementWorker()).runUntil(async () => {
      const result = await h.client.result(taskId);
      return { result, status: await h.client.status(taskId), transcript: await h.client.transcript(taskId) };
    });
    expect(result).toMatchObject({ outcome: 'answered' });
    expect(effectsOn('O-0015')).toHaveLength(1);
    expect(writesTo('O-0015')).toHaveLength(1);
    // Settled from evidence: no approval, no block, no unblock.
    expect(status.pendingApprovals).toEqual([]);
    expect(status.decisions).toEqual([]);
    const [refunded] = toolResultsOf(transcript);
    expect(JSON.parse(String(refunded!.content))).toMatchObject({ refund_id: 'found by reconcile', refunded_cents: expect.any(Number) });
  } finally {
    h.orders.gate = undefined;
  }
});

test('SIGKILL while a write is pending, then a rewind from before it: the family journal holds it pending, and the rewound branch asks a person instead of refunding again', async () => {
  h.orders.inject({ kind: 'slow_reply', delayMs: HELD_MS }, 1);
  const script = h.script([callTool('legacy_refund', { order_id: 'O-0014', amount_cents: 100 }), answer('the refund went through once')]);
  const taskId = h.taskId('crash-rewind');
  const doomed = doomedWorker();
  await h.client.start({ agent: 'legacy', prompt: 'refund', model: { provider: 'scripted', script } }, { taskId });
  await waitFor('the refund to commit', () => effectsOn('O-0014').length > 0);
  expect(await doomed.kill()).toBe('SIGKILL');

  // Journaled before it ran; nothing settled it.
  const [journal] = await new IntentClaims(h.blobStore).family(await familyNameOf(h, taskId));
  expect(journal!.claims.map((c) => c.state)).toEqual(['pending']);

  // The call is still pending in Temporal (its heartbeat timeout has not fired): the rewind does not wait for ever.
  const rewound = await h.client.rewind(taskId, 0, { blobStore: h.blobStore, settleTimeoutMs: 500 });
  const worker = await replacementWorker();
  await worker.runUntil(async () => {
    const [approval] = (await statusWhen(h, rewound.taskId, (s) => s.pendingApprovals.length === 1)).pendingApprovals;
    expect(approval!.tool).toBe('legacy_refund');
    expect(approval!.reason).toMatch(new RegExp(`started in ${taskId} at turn 1 at .* UTC and has not reported back`));
    expect(writesTo('O-0014')).toHaveLength(1);
    await h.client.deny(rewound.taskId, { approvalId: approval!.id, by: 'ops', reason: 'the ledger shows the refund' });
    await h.client.result(rewound.taskId);
  });
  expect(writesTo('O-0014')).toHaveLength(1);
  expect(effectsOn('O-0014')).toHaveLength(1);
});

test('SIGKILL while waiting for an approval: the new worker holds the same approval; approving it runs the call once', async () => {
  const script = h.script([callTool('cancel_order', { order_id: 'O-0004', reason: 'customer asked' }), answer('cancelled')]);
  const taskId = h.taskId('crash-waiting');
  const doomed = doomedWorker();
  await h.client.start({ agent: 'demo', prompt: 'cancel', model: { provider: 'scripted', script } }, { taskId });
  const [asked] = (await statusWhen(h, taskId, (s) => s.agentStatus === 'awaiting_approval')).pendingApprovals;
  expect(await doomed.kill()).toBe('SIGKILL');

  await (await replacementWorker()).runUntil(async () => {
    const [pending] = (await statusWhen(h, taskId, (s) => s.agentStatus === 'awaiting_approval')).pendingApprovals;
    expect(pending).toEqual(asked);
    await h.client.approve(taskId, { approvalId: pending!.id, by: 'ana' });
    expect(await h.client.result(taskId)).toMatchObject({ outcome: 'answered', text: 'cancelled' });
    expect(await approvalsAsked(taskId)).toBe(1);
  });
  expect(effectsOn('O-0004')).toMatchObject([{ kind: 'cancel' }]);
});

test('SIGKILL right after an approval, before the approved call took effect: it runs once on the new worker, without asking again', async () => {
  // The cancel request is held before it takes effect; the worker dies while it is held.
  h.orders.inject({ kind: 'slow', delayMs: HELD_MS }, 1);
  const script = h.script([callTool('cancel_order', { order_id: 'O-0008', reason: 'customer asked' }), answer('cancelled')]);
  const taskId = h.taskId('crash-approved');
  const doomed = doomedWorker();
  await h.client.start({ agent: 'demo', prompt: 'cancel', model: { provider: 'scripted', script } }, { taskId });
  const [pending] = (await statusWhen(h, taskId, (s) => s.agentStatus === 'awaiting_approval')).pendingApprovals;
  await h.client.approve(taskId, { approvalId: pending!.id, by: 'ana' });
  await waitFor('the approved cancel to reach the service', () => writesTo('O-0008').length > 0);
  expect(await doomed.kill()).toBe('SIGKILL');
  expect(effectsOn('O-0008')).toHaveLength(0);

  await (await replacementWorker()).runUntil(async () => {
    expect(await h.client.result(taskId)).toMatchObject({ outcome: 'answered', text: 'cancelled' });
    const status = await h.client.status(taskId);
    expect(status.approvals.map((a) => [a.decision, a.by])).toEqual([['approved', 'ana']]);
    expect(await approvalsAsked(taskId)).toBe(1);
  });
  expect(effectsOn('O-0008')).toMatchObject([{ kind: 'cancel' }]);
  expect(writesTo('O-0008').map((w) => w.idempotency_key)).toEqual([writesTo('O-0008')[0]!.idempotency_key, writesTo('O-0008')[0]!.idempotency_key]);
});

test('SIGKILL right after continue-as-new (the new run started, its first step in flight): the new run finishes with the carried state', async () => {
  const turns = [refund('O-0006'), refund('O-0007'), refund('O-0009'), answer('three refunds')];
  const script = h.script(turns.map((turn, i) => (i === 2 ? { ...turn, delay_ms: HELD_MS } : turn)));
  const taskId = h.taskId('crash-can');
  const doomed = doomedWorker();
  const started = await h.client.start({ agent: 'demo', prompt: 'refund three', model: { provider: 'scripted', script }, continueAsNewEveryTurns: 2 }, { taskId });
  const secondRun = await inFlight(taskId, 'callModel', { notInRun: started.firstExecutionRunId });
  expect(await doomed.kill()).toBe('SIGKILL');
  rescript(script, turns);

  const result = await (await replacementWorker()).runUntil(h.client.result(taskId));
  expect(result).toMatchObject({ outcome: 'answered', text: 'three refunds', toolCalls: 3 });
  for (const order of ['O-0006', 'O-0007', 'O-0009']) expect(effectsOn(order)).toHaveLength(1);
  expect((await h.client.handle(taskId).describe()).runId).toBe(secondRun);
  // The latest run's history: its first model call (killed, then retried), then the answer.
  expect(await attemptsOf(taskId, 'callModel')).toEqual([2, 1]);
});

test("SIGKILL while a run describes its agent (a local activity in its first workflow task, here held in its MCP server's tool listing): the workflow task times out, the new worker describes it again, and the task answers with one manifest recorded", async () => {
  const { hold, listing } = heldListingFiles(h.workspaceDir);
  rmSync(listing, { force: true });
  writeFileSync(hold, '');
  try {
    const taskId = h.taskId('crash-describe');
    const doomed = doomedWorker();
    await h.client.start({ agent: 'held-describe', prompt: 'ping', model: { provider: 'scripted', script: h.script([answer('pong')]) } }, { taskId });
    await waitFor('the doomed worker to ask its MCP server for the tools', () => existsSync(listing) || undefined);
    expect(await doomed.kill()).toBe('SIGKILL');
    rmSync(hold);

    const result = await (await replacementWorker()).runUntil(h.client.result(taskId));
    expect(result).toMatchObject({ outcome: 'answered', text: 'pong' });
    const events = (await h.client.handle(taskId).fetchHistory()).events!;
    expect(events.some((e) => e.workflowTaskTimedOutEventAttributes)).toBe(true);
    expect(events.map(localActivityTypeOf).filter(Boolean)).toEqual(['describeAgent']);
    const manifest = await manifestIn(events, h.client.client.options.loadedDataConverter);
    expect(manifest?.tools.map((t) => t.name)).toEqual(['held__ping']);
  } finally {
    rmSync(hold, { force: true });
  }
});

test('SIGKILL during a local tool: the workflow task times out, the new worker replays it and runs the call again', async () => {
  h.orders.inject({ kind: 'slow', delayMs: HELD_MS }, 1);
  const script = h.script([callTool('search_orders_local', { customer_id: 'C-1001', status: 'placed' }), answer('found')]);
  const taskId = h.taskId('crash-local');
  const doomed = doomedWorker();
  await h.client.start({ agent: 'local', prompt: 'search', model: { provider: 'scripted', script } }, { taskId });
  await waitFor('the local search to reach the orders service', () => h.orders.requests.some((r) => r.customer_id === 'C-1001' && r.status === 'placed'));
  expect(await doomed.kill()).toBe('SIGKILL');

  const result = await (await replacementWorker()).runUntil(h.client.result(taskId));
  expect(result).toMatchObject({ outcome: 'answered', text: 'found', toolCalls: 1 });
  expect(h.orders.requests.filter((r) => r.customer_id === 'C-1001' && r.status === 'placed')).toHaveLength(2);
  const events = (await h.client.handle(taskId).fetchHistory()).events!;
  expect(events.some((e) => e.workflowTaskTimedOutEventAttributes)).toBe(true);
  // One tool call recorded (the killed attempt left none); the run's describeAgent is the other local activity.
  expect(events.map(localActivityTypeOf).filter(Boolean)).toEqual(['describeAgent', 'runTool']);
});
