/**
 * A task closed by the server or an operator (terminated) shows that in `list`, `status` and the
 * search attribute view, never `running`; and a task that continued as new is listed once.
 */
import { failureOf } from '../../src/client/task-client';
import { AgentNameKey, AgentStatusKey, WORKFLOW_TYPE } from '../../src/protocol/definitions';
import { CONTINUED_RUN_STATUS } from '../../src/protocol/task';
import { useHarness, answer, callTool, statusWhen } from '../support/harness';
import { waitFor } from '../support/processes';
import { listedWhen } from '../support/visibility';

const h = useHarness();

test('a terminated task reads as terminated in the view and in list, and is not listed as running', async () => {
  const script = h.script([callTool('delete_file', { path: 'inbox/customer-note.txt' }), answer('never')]);
  const taskId = h.taskId('terminated');
  const worker = await h.worker();
  await worker.runUntil(async () => {
    await h.client.start({ agent: 'demo', prompt: 'delete it', model: { provider: 'scripted', script } }, { taskId });
    await statusWhen(h, taskId, (s) => s.agentStatus === 'awaiting_approval');
    await h.client.handle(taskId).terminate('operator stopped it');
  });
  const view = await h.client.view(taskId);
  expect(view.summary).toMatchObject({ executionStatus: 'TERMINATED', agentStatus: 'terminated' });
  // Once the row says terminated, it is no longer listed as waiting (it is one row).
  const terminated = await listedWhen(
    'the terminated row',
    () => h.client.list({ status: 'terminated' }),
    (rows) => rows.some((t) => t.taskId === taskId),
  );
  expect(terminated.map((t) => t.taskId)).toContain(taskId);
  const waiting = await h.client.list({ status: 'awaiting_approval' });
  expect(waiting.map((t) => t.taskId)).not.toContain(taskId);
});

test('a task that continued as new is one row in list, and none under running once it completed', async () => {
  const script = h.script([...Array.from({ length: 5 }, (_, i) => callTool('list_files', { offset: i })), answer('done')]);
  const taskId = h.taskId('continued');
  const worker = await h.worker();
  await worker.runUntil(async () => {
    await h.client.start({ agent: 'demo', prompt: 'list', model: { provider: 'scripted', script }, continueAsNewEveryTurns: 2 }, { taskId });
    await h.client.result(taskId);
  });
  const rows = (
    await listedWhen(
      'the completed row',
      () => h.client.list({ limit: 500 }),
      (all) => all.some((t) => t.taskId === taskId && t.agentStatus === 'completed'),
    )
  ).filter((t) => t.taskId === taskId);
  expect(rows).toHaveLength(1);
  expect(rows[0]).toMatchObject({ agentStatus: 'completed' });
  expect((await h.client.list({ status: 'running', limit: 500 })).map((t) => t.taskId)).not.toContain(taskId);
});

test('while a continued task waits for a person it is one row; each run it left behind says AgentStatus=continued', async () => {
  const script = h.script([...Array.from({ length: 4 }, (_, i) => callTool('list_files', { offset: i })), callTool('delete_file', { path: 'old.log' }), answer('done')]);
  const taskId = h.taskId('continued-waiting');
  const worker = await h.worker();
  await worker.runUntil(async () => {
    await h.client.start({ agent: 'demo', prompt: 'clean up', model: { provider: 'scripted', script }, continueAsNewEveryTurns: 2 }, { taskId });
    const waiting = await statusWhen(h, taskId, (s) => s.agentStatus === 'awaiting_approval');
    // Visibility is eventually consistent: wait for the waiting run's row before reading the rest.
    await waitFor('the waiting row', async () => ((await h.client.list({ status: 'awaiting_approval', limit: 500 })).some((t) => t.taskId === taskId) ? true : undefined));
    expect((await h.client.list({ limit: 500 })).filter((t) => t.taskId === taskId)).toHaveLength(1);
    expect((await h.client.list({ status: 'running', limit: 500 })).map((t) => t.taskId)).not.toContain(taskId);
    // Two runs were left behind (continue-as-new every 2 turns, waiting in the third run); read until both rows say so.
    const earlier = await listedWhen(
      'the continued runs marked continued',
      async () => {
        const found: string[] = [];
        for await (const run of h.client.client.workflow.list({ query: `WorkflowId = '${taskId}' AND ExecutionStatus = 'ContinuedAsNew'` })) {
          found.push(String(run.searchAttributes?.AgentStatus ?? run.typedSearchAttributes?.getAll().find((p) => p.key.name === 'AgentStatus')?.value));
        }
        return found;
      },
      (found) => found.length >= 2 && found.every((s) => s === CONTINUED_RUN_STATUS),
    );
    expect(earlier.length).toBeGreaterThanOrEqual(2);
    expect(new Set(earlier)).toEqual(new Set([CONTINUED_RUN_STATUS]));
    await h.client.approve(taskId, { approvalId: waiting.pendingApprovals[0]!.id, by: 'ops' });
    await h.client.result(taskId);
  });
});

test('status keeps a bounded window; the entries that left it are archived to the blob store and read back in order (status --all)', async () => {
  const script = h.script([...Array.from({ length: 70 }, (_, i) => callTool('list_files', { offset: i })), answer('done')]);
  const taskId = h.taskId('archive');
  const worker = await h.worker();
  const status = await worker.runUntil(async () => {
    await h.client.start({ agent: 'demo', prompt: 'list', model: { provider: 'scripted', script }, continueAsNewEveryTurns: 30, budgets: { turns: 80, toolCalls: 80 } }, { taskId });
    await h.client.result(taskId);
    return h.client.status(taskId);
  });
  expect(status.events.length).toBeLessThanOrEqual(200);
  expect(status.archive?.markers.length).toBeGreaterThan(0);
  const archived = await h.client.archivedEntries(status, h.blobStore);
  const events = archived.filter((a) => a.kind === 'event').map((a) => a.entry as { seq: number; kind: string });
  expect(events[0]).toMatchObject({ seq: 1, kind: 'task_started' });
  // Archived and live events together are the whole story, nothing lost or repeated.
  const seqs = [...events.map((e) => e.seq), ...status.events.map((e) => e.seq)];
  expect(new Set(seqs).size).toBe(seqs.length);
  expect(Math.max(...seqs)).toBe(status.eventCount);
  expect(seqs.length).toBe(status.eventCount);
});

test('a task closed by its execution timeout reads as timed_out in the view and in list, and its result says timed_out', async () => {
  const taskId = h.taskId('timed-out');
  // Started the way TaskClient.start does (same search attributes), plus a server-side execution
  // timeout; no worker runs, so the server closes it.
  await h.client.client.workflow.start(WORKFLOW_TYPE, {
    taskQueue: h.taskQueue,
    workflowId: taskId,
    args: [{ agent: 'demo', prompt: 'never runs', model: { provider: 'scripted', script: h.script([answer('never')]) } }],
    workflowExecutionTimeout: '2s',
    typedSearchAttributes: [
      { key: AgentStatusKey, value: 'running' },
      { key: AgentNameKey, value: 'demo' },
    ],
  });
  const failure = await h.client.result(taskId).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(failureOf(failure)).toMatchObject({ code: 'timed_out' });
  const view = await h.client.view(taskId);
  expect(view.summary).toMatchObject({ executionStatus: 'TIMED_OUT', agentStatus: 'timed_out' });
  const timedOut = await listedWhen(
    'the timed-out row',
    () => h.client.list({ status: 'timed_out' }),
    (rows) => rows.some((t) => t.taskId === taskId),
  );
  expect(timedOut.find((t) => t.taskId === taskId)).toMatchObject({ agentStatus: 'timed_out' });
  expect((await h.client.list({ status: 'running', limit: 500 })).map((t) => t.taskId)).not.toContain(taskId);
});
