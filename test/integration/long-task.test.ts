/**
 * A long task continues as new every N turns, carrying transcript, ledger, budgets, usage and audit
 * trail, so no run's history grows with the task's length.
 */
import { answer, callTool, startHarness, type Harness } from '../support/harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

test('a 120-turn task completes across continue-as-new runs, each with a bounded history, its state carried along', async () => {
  const turns = Array.from({ length: 120 }, (_, i) => callTool('read_file', { path: 'inbox/customer-note.txt', offset: i }));
  // The last call repeats the first one's arguments: the ledger, carried across runs, answers it without running.
  const script = h.script([...turns, callTool('read_file', { path: 'inbox/customer-note.txt', offset: 0 }), answer('read it all')]);
  const taskId = h.taskId('long');
  const worker = await h.worker();
  const { result, status } = await worker.runUntil(async () => {
    await h.client.start(
      { agent: 'demo', prompt: 'read a lot', model: { provider: 'scripted', script }, budgets: { turns: 200, toolCalls: 200 }, continueAsNewEveryTurns: 40 },
      { taskId },
    );
    const result = await h.client.result(taskId);
    return { result, status: await h.client.status(taskId) };
  });
  expect(result).toMatchObject({ outcome: 'answered', turns: 122, text: 'read it all', toolCalls: 120 });
  expect(status.eventCount).toBeGreaterThan(240);
  expect(status.budgets.turns).toMatchObject({ used: 122, limit: 200 });

  const runs: { runId: string; events: number }[] = [];
  for await (const execution of h.client.client.workflow.list({ query: `WorkflowId = '${taskId}'` })) {
    const history = await h.client.client.workflow.getHandle(taskId, execution.runId).fetchHistory();
    runs.push({ runId: execution.runId, events: history.events!.length });
  }
  expect(runs).toHaveLength(4);
  for (const run of runs) expect(run.events).toBeLessThan(600);
}, 120_000);
