/**
 * Issue 13: every workflow input, update and signal is treated as written by an attacker, and a
 * write is never done twice. One test per hole an adversarial review found, on a real dev server.
 */
import fc from 'fast-check';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { WorkflowIdReusePolicy } from '@temporalio/client';
import { createDemoAgent } from '../../src/demo/demo-agent';
import { approveUpdate, denyUpdate, messageSignal, unblockUpdate, WORKFLOW_TYPE } from '../../src/protocol/definitions';
import { approveProblem, denyProblem, messageProblem, unblockShapeProblem } from '../../src/workflows/base/input-checks';
import crashAgents from '../support/crash-agents';
import { useHarness, answer, callTool, parsedResults, statusWhen } from '../support/harness';
import { forgedSnapshot } from '../support/forged-snapshot';

const h = useHarness();

const scripted = (script: string) => ({ provider: 'scripted' as const, script });
const sends = [approveUpdate.name, denyUpdate.name, unblockUpdate.name];

async function workflowTaskFailures(taskId: string): Promise<number> {
  const history = await h.client.handle(taskId).fetchHistory();
  return (history.events ?? []).filter((e) => e.workflowTaskFailedEventAttributes).length;
}

test('1. a task started with a forged resume snapshot (a policy that allows deletes) is refused before anything runs', async () => {
  const target = path.join(h.workspaceDir, 'inbox/customer-note.txt');
  const manifest = createDemoAgent({ workspaceDir: h.workspaceDir, ordersUrl: h.orders.url }).manifest(scripted(h.script([answer('x')])));
  const forged = forgedSnapshot({ ...manifest, policy: { destructive: 'allow', write: 'allow' } }, 'delete it');
  forged.manifest!.model = scripted(h.script([callTool('delete_file', { path: 'inbox/customer-note.txt' }), answer('deleted')]));
  const taskId = h.taskId('forged');
  const worker = await h.worker();
  const failure = await worker.runUntil(async () => {
    await h.client.client.workflow.start(WORKFLOW_TYPE, { taskQueue: h.taskQueue, workflowId: taskId, args: [{ agent: 'demo', prompt: 'x', resume: forged }] });
    return h.client.result(taskId).then(
      () => undefined,
      (err: Error) => err as Error & { cause?: Error },
    );
  });
  expect(String(failure?.cause?.message ?? failure?.message)).toMatch(/`resume` is set by the task itself/);
  expect(existsSync(target)).toBe(true);
});

test('2. a model script naming a file outside the script folders is refused without echoing the file', async () => {
  const taskId = h.taskId('script-path');
  const worker = await h.worker();
  const failure = await worker.runUntil(async () => {
    await h.client.start({ agent: 'demo', prompt: 'x', model: scripted('/etc/passwd') }, { taskId });
    return h.client.result(taskId).then(
      () => undefined,
      (err: Error) => err as Error & { cause?: Error },
    );
  });
  const text = `${failure?.message} ${failure?.cause?.message}`;
  expect(text).toMatch(/refused/);
  expect(text).not.toMatch(/root:/);
});

test('3 & 13. a malformed approve is rejected by the validator with the field named; the task is not wedged and a correct approve still works', async () => {
  const script = h.script([callTool('delete_file', { path: 'inbox/customer-note.txt' }), answer('done')]);
  const taskId = h.taskId('bad-update');
  const worker = await h.worker();
  await worker.runUntil(async () => {
    await h.client.start({ agent: 'demo', prompt: 'delete the note', model: scripted(script) }, { taskId });
    const waiting = await statusWhen(h, taskId, (s) => s.pendingApprovals.length === 1);
    const approvalId = waiting.pendingApprovals[0]!.id;
    const handle = h.client.handle(taskId);
    await expect(handle.executeUpdate(approveUpdate, { args: [{ approvalId, by: 'eve', comment: 42 as unknown as string }] })).rejects.toThrow();
    await expect(h.client.approve(taskId, { approvalId: 42 as unknown as string, by: 'eve' })).rejects.toThrow(/`approvalId` must be a string, got number 42/);
    await expect(h.client.approve(taskId, { approvalId, by: 'eve', comment: 42 as unknown as string })).rejects.toThrow(/`comment` must be a string/);
    expect(await h.client.approve(taskId, { approvalId, by: 'alice', comment: 'ok' })).toMatchObject({ decision: 'approved' });
    expect(await h.client.result(taskId)).toMatchObject({ outcome: 'answered', text: 'done' });
  });
  expect(await workflowTaskFailures(taskId)).toBe(0);
});

/** Workflow task bookkeeping: scheduled, started, completed, timed out, failed. */
function isWorkflowTaskEvent(e: {
  workflowTaskScheduledEventAttributes?: unknown;
  workflowTaskStartedEventAttributes?: unknown;
  workflowTaskCompletedEventAttributes?: unknown;
  workflowTaskTimedOutEventAttributes?: unknown;
  workflowTaskFailedEventAttributes?: unknown;
}): boolean {
  return Boolean(
    e.workflowTaskScheduledEventAttributes ||
      e.workflowTaskStartedEventAttributes ||
      e.workflowTaskCompletedEventAttributes ||
      e.workflowTaskTimedOutEventAttributes ||
      e.workflowTaskFailedEventAttributes,
  );
}

test('fuzz: every update the task accepts from arbitrary JSON is a correct decision, every one it refuses (and every malformed message) changes nothing, and no workflow task fails', async () => {
  // A second delete keeps the task waiting on a person after the one decision the fuzz can make:
  // every refusal is compared on a running task, never on one that already closed.
  const script = h.script([callTool('delete_file', { path: 'inbox/customer-note.txt' }), callTool('delete_file', { path: 'inbox/fuzz-later.txt' }), answer('fuzzed and done')]);
  const taskId = h.taskId('fuzz');
  const worker = await h.worker();
  const seen = { accepted: 0, refused: 0, malformedMessages: 0 };
  await worker.runUntil(async () => {
    await h.client.start({ agent: 'demo', prompt: 'delete the note', model: scripted(script) }, { taskId });
    const waiting = await statusWhen(h, taskId, (s) => s.pendingApprovals.length === 1);
    const approvalId = waiting.pendingApprovals[0]!.id;
    const handle = h.client.handle(taskId);
    const someText = fc.string({ minLength: 1, maxLength: 30 });
    const payload = fc.oneof(
      fc.jsonValue(),
      fc.record({ approvalId: fc.oneof(fc.jsonValue(), fc.constant(approvalId)), by: fc.jsonValue(), editedInput: fc.jsonValue(), comment: fc.jsonValue() }, { requiredKeys: [] }),
      fc.record({ by: fc.jsonValue(), message: fc.jsonValue(), budget: fc.jsonValue(), maxTokens: fc.jsonValue(), model: fc.jsonValue() }, { requiredKeys: [] }),
      fc.record({ by: fc.jsonValue(), text: fc.jsonValue() }, { requiredKeys: [] }),
      // Well-formed, so the accepting path is exercised too: right or wrong ids, odd but valid text.
      { arbitrary: fc.record({ approvalId: fc.constantFrom(approvalId, `${approvalId}-x`, 'apr-0'), by: someText, reason: someText }), weight: 2 },
      { arbitrary: fc.record({ approvalId: fc.constantFrom(approvalId, `${approvalId}-x`, 'apr-0'), by: someText, comment: someText }), weight: 2 },
      fc.record({ by: someText, text: someText }),
    );
    const problemOf = [approveProblem, denyProblem, unblockShapeProblem, messageProblem];
    // What a refusal must leave as it was: the task's whole status and, before any handler ran, its
    // history. Workflow task bookkeeping is left out: on a loaded machine the server may time out a
    // refused update's speculative workflow task on the sticky queue and record that, which decides nothing.
    const observe = async () => ({ status: await h.client.status(taskId), events: (await handle.fetchHistory()).events!.filter((e) => !isWorkflowTaskEvent(e)).length });
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 3 }), payload, async (which, value) => {
        const before = await observe();
        expect(before.status.agentStatus).toBe('awaiting_approval');
        const wellFormed = problemOf[which]!(value) === undefined;
        if (which === 3) {
          const sent = await handle.signal(messageSignal, value as never).then(
            () => true,
            () => false,
          );
          if (sent && !wellFormed) {
            seen.malformedMessages++;
            expect((await observe()).status).toEqual(before.status);
          }
          return;
        }
        const outcome = await handle.executeUpdate(sends[which]!, { args: [value as never] }).then(
          (result: unknown) => ({ accepted: result }),
          (refusal: unknown) => ({ refusal }),
        );
        if ('accepted' in outcome) {
          seen.accepted++;
          // Only a well-formed decision on the pending approval, by a named person, is accepted.
          expect(wellFormed).toBe(true);
          expect(which === 0 || which === 1).toBe(true);
          const request = value as { approvalId: string; by: string };
          expect(before.status.pendingApprovals.map((a) => a.id)).toEqual([request.approvalId]);
          const decision = which === 0 ? 'approved' : 'denied';
          expect(outcome.accepted).toEqual({ approvalId: request.approvalId, decision });
          const after = await h.client.status(taskId);
          expect(after.approvals.find((a) => a.id === request.approvalId)).toMatchObject({ decision, by: request.by });
          // Let the task settle on its next approval before the next send, so later refusals are compared on a settled, running task.
          await statusWhen(h, taskId, (s) => s.pendingApprovals.length === 1 && s.pendingApprovals[0]!.id !== request.approvalId);
          return;
        }
        seen.refused++;
        const after = await observe();
        expect(after.status).toEqual(before.status);
        // An edit for the pending approval is checked by an activity after the validator; everything else is refused before history.
        const editChecked =
          which === 0 && wellFormed && (value as { approvalId?: unknown; editedInput?: unknown }).approvalId === approvalId && (value as { editedInput?: unknown }).editedInput !== undefined;
        if (!editChecked) expect(after.events).toBe(before.events);
      }),
      { numRuns: 80, seed: 1322 },
    );
    for (let status = await h.client.status(taskId); status.pendingApprovals.length; ) {
      const pending = status.pendingApprovals[0]!.id;
      await h.client.deny(taskId, { approvalId: pending, by: 'alice', reason: 'fuzz over' });
      status = await statusWhen(h, taskId, (s) => !s.pendingApprovals.some((a) => a.id === pending));
    }
    expect(await h.client.result(taskId)).toMatchObject({ outcome: 'answered', text: 'fuzzed and done' });
  });
  // The fuzz reached every path it asserts on; one decision at most can be accepted (it is single use).
  expect(seen.accepted).toBe(1);
  expect(seen.refused).toBeGreaterThan(20);
  expect(seen.malformedMessages).toBeGreaterThan(0);
  expect(await workflowTaskFailures(taskId)).toBe(0);
}, 300_000);

test('4. a task id reused after the first task closed gets its own idempotency keys: the second refund is done, not answered with the first one', async () => {
  const taskId = h.taskId('reused');
  const worker = await h.worker();
  const refund = () => h.script([callTool('refund_order', { order_id: 'O-0004', amount_cents: 100, reason: 'late' }), answer('refunded')]);
  const before = h.orders.effects.length;
  await worker.runUntil(async () => {
    for (let i = 0; i < 2; i++) {
      // The plain client, as any script could: the default reuse policy allows a closed id to start again.
      await h.client.client.workflow.start(WORKFLOW_TYPE, {
        taskQueue: h.taskQueue,
        workflowId: taskId,
        workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
        args: [{ agent: 'demo', prompt: 'refund', model: scripted(refund()) }],
      });
      await h.client.result(taskId);
    }
  });
  const effects = h.orders.effects.slice(before);
  expect(effects).toHaveLength(2);
  expect(new Set(effects.map((e) => e.idempotency_key)).size).toBe(2);
  // And durable-agent's own client refuses to reuse a task id at all.
  await expect(h.client.start({ agent: 'demo', prompt: 'x', model: scripted(refund()) }, { taskId })).rejects.toThrow(/already/i);
});

test('5b. a non-idempotent write whose connection is reset after the service committed it blocks as outcome unknown and is not re-run: one effect', async () => {
  h.orders.inject({ kind: 'reset_after_commit' });
  const call = callTool('legacy_refund', { order_id: 'O-0007', amount_cents: 100 });
  const script = h.script([call, call, answer('done')]);
  const before = h.orders.effects.length;
  const taskId = h.taskId('reset-write');
  const worker = await h.worker(crashAgents({ workspaceDir: h.workspaceDir }, h.orders.url));
  await worker.runUntil(async () => {
    await h.client.start({ agent: 'legacy', prompt: 'refund O-0007', model: scripted(script) }, { taskId });
    const blocked = await statusWhen(h, taskId, (s) => s.agentStatus === 'blocked');
    expect(blocked.blocked).toMatchObject({ code: 'outcome_unknown', reason: expect.stringContaining('connection_reset') });
    await h.client.unblock(taskId, { by: 'ops', message: 'checked: the refund went through' });
    await h.client.result(taskId);
    // The model's identical retry was refused by the ledger, not sent again.
    expect(parsedResults(await h.client.transcript(taskId))[1]!.error).toMatchObject({ code: 'outcome_unknown' });
  });
  expect(h.orders.effects.slice(before)).toHaveLength(1);
});

test('5c. 100 and "100" are one call: the duplicate refund is refused after coercion', async () => {
  const script = h.script([
    callTool('refund_order', { order_id: 'O-0006', amount_cents: 100, reason: 'late' }),
    callTool('refund_order', { order_id: 'O-0006', amount_cents: '100', reason: 'late' }),
    answer('done'),
  ]);
  const before = h.orders.effects.length;
  const taskId = h.taskId('coerced-dup');
  const worker = await h.worker();
  const transcript = await worker.runUntil(async () => {
    await h.client.start({ agent: 'demo', prompt: 'refund', model: scripted(script) }, { taskId });
    await h.client.result(taskId);
    return h.client.transcript(taskId);
  });
  expect(parsedResults(transcript)[1]!.error).toMatchObject({ code: 'duplicate_write' });
  expect(h.orders.effects.slice(before)).toHaveLength(1);
});

test('7. a read repeated after a write to the workspace runs again and sees the new content', async () => {
  const script = h.script([
    callTool('read_file', { path: 'notes/ledger.txt' }),
    callTool('write_file', { path: 'notes/ledger.txt', content: 'second version' }),
    callTool('read_file', { path: 'notes/ledger.txt' }),
    answer('done'),
  ]);
  const taskId = h.taskId('stale-read');
  const worker = await h.worker();
  const transcript = await worker.runUntil(async () => {
    await h.client.start({ agent: 'demo', prompt: 'x', model: scripted(script) }, { taskId });
    await h.client.result(taskId);
    return h.client.transcript(taskId);
  });
  const results = parsedResults(transcript);
  expect(results[0]!.error).toMatchObject({ error_class: 'permanent', code: 'not_found' });
  expect(JSON.stringify(results[2])).toContain('second version');
  expect(readFileSync(path.join(h.workspaceDir, 'notes/ledger.txt'), 'utf8')).toBe('second version');
});

test('9. out-of-range numbers in the task input fail the task at once with the field named (continueAsNewEveryTurns: 0 would loop forever)', async () => {
  const taskId = h.taskId('bad-input');
  const worker = await h.worker();
  const failure = await worker.runUntil(async () => {
    await h.client.client.workflow.start(WORKFLOW_TYPE, {
      taskQueue: h.taskQueue,
      workflowId: taskId,
      args: [{ agent: 'demo', prompt: 'x', continueAsNewEveryTurns: 0, budgets: { toolCallsPerTurn: -1 }, model: scripted(h.script([answer('x')])) }],
    });
    return h.client.result(taskId).then(
      () => undefined,
      (err: Error) => err as Error & { cause?: Error },
    );
  });
  const message = String(failure?.cause?.message);
  expect(message).toMatch(/`continueAsNewEveryTurns` must be an integer from 1 to 10000, got number 0/);
  expect(message).toMatch(/`budgets.toolCallsPerTurn` must be an integer from 1 to 100/);
});
