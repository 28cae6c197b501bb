/**
 * A long task continues as new every N turns (or when Temporal suggests it), carrying transcript,
 * ledger, budgets, usage and audit trail, so no run's history grows with the task's length.
 */
import { useHarness, answer, callTool } from '../support/harness';

const h = useHarness();

test('a 500-turn task completes across continue-as-new runs (every 100 turns by default), each with a bounded history, its state carried along', async () => {
  const turns = Array.from({ length: 500 }, (_, i) => callTool('read_file', { path: 'inbox/customer-note.txt', offset: i }));
  // The last call repeats the first one's arguments: the ledger, carried across runs, answers it without running.
  const script = h.script([...turns, callTool('read_file', { path: 'inbox/customer-note.txt', offset: 0 }), answer('read it all')]);
  const taskId = h.taskId('long');
  const worker = await h.worker();
  const { result, status } = await worker.runUntil(async () => {
    await h.client.start({ agent: 'demo', prompt: 'read a lot', model: { provider: 'scripted', script }, budgets: { turns: 600, toolCalls: 600 } }, { taskId });
    const result = await h.client.result(taskId);
    return { result, status: await h.client.status(taskId) };
  });
  expect(result).toMatchObject({ outcome: 'answered', turns: 502, text: 'read it all', toolCalls: 500 });
  expect(status.eventCount).toBeGreaterThan(1000);
  expect(status.budgets.turns).toMatchObject({ used: 502, limit: 600 });

  const runs: { runId: string; events: number; bytes: number }[] = [];
  for await (const execution of h.client.client.workflow.list({ query: `WorkflowId = '${taskId}'` })) {
    const d = await h.client.client.workflow.getHandle(taskId, execution.runId).describe();
    runs.push({ runId: execution.runId, events: d.historyLength, bytes: d.historySize ?? Infinity });
  }
  // Every 100 turns at the latest; sooner once Temporal suggests it, because each model call's input
  // carries the whole conversation and a run's history grows in bytes faster than in events.
  expect(runs.length).toBeGreaterThanOrEqual(6);
  for (const run of runs) {
    expect(run.events).toBeLessThan(1_500);
    // Temporal warns at 10 MB per run and suggests continue-as-new well before.
    expect(run.bytes).toBeLessThan(8 * 1024 * 1024);
  }
}, 600_000);
