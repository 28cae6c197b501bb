/**
 * Temporal suggests continue-as-new when a run's history passes its event or size limit (here made
 * 150 events on the test's server). A task hands over to a new run on the suggestion, before its
 * own turn count, and the suggestion is read when a model call answers: under constant status
 * queries racing its local calls, every run of the chain replays without nondeterminism.
 */
import { Worker } from '@temporalio/worker';
import { createDataConverter } from '../../src/codec';
import { useHarness, answer } from '../support/harness';
import { pollStatus, queryRaceAgent as agent, readThenWrite } from '../support/query-race';

const SUGGEST_AT_EVENTS = 150;

const h = useHarness({ dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': SUGGEST_AT_EVENTS } });

test('a long task continues as new when Temporal suggests it, and every run of the chain replays', async () => {
  const turns = 40;
  const script = h.script([...Array.from({ length: turns }, (_, i) => readThenWrite(i + 1)), answer('done')]);
  const worker = await h.worker([agent]);
  const ids = [h.taskId('suggested'), h.taskId('suggested')];
  await worker.runUntil(async () => {
    const polling = pollStatus(h, ids);
    const input = { agent: agent.name, prompt: 'go', model: { provider: 'scripted' as const, script }, budgets: { turns: 50, toolCalls: 100 }, continueAsNewEveryTurns: 1_000 };
    for (const taskId of ids) await h.client.start(input, { taskId });
    for (const taskId of ids) await expect(h.client.result(taskId)).resolves.toMatchObject({ outcome: 'answered', toolCalls: 2 * turns, turns: turns + 1 });
    await polling.stop();
  });

  for (const taskId of ids) {
    const runs: string[] = [];
    for await (const execution of h.client.client.workflow.list({ query: `WorkflowId = '${taskId}'` })) runs.push(execution.runId);
    // 40 turns of about 12 events each, with a new run soon after every 150 events, and never 1,000 turns.
    expect(runs.length).toBeGreaterThanOrEqual(3);
    for (const runId of runs) {
      const history = await h.client.client.workflow.getHandle(taskId, runId).fetchHistory();
      const events = history.events ?? [];
      // A run hands over at the first turn boundary after the suggestion: a turn's events past the limit at most.
      expect(events.length).toBeLessThan(SUGGEST_AT_EVENTS + 40);
      await expect(Worker.runReplayHistory({ workflowBundle: h.bundle, dataConverter: createDataConverter() }, history, taskId)).resolves.toBeUndefined();
    }
  }
}, 300_000);
