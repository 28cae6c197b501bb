/**
 * A status query that reaches a workflow task while a local tool call is running makes the worker
 * hand the call's answer to the workflow in a workflow task of its own (the SDK's core answers the
 * query, records the call's result and asks the server for a new task). On replay the answer comes in the earlier task, so a
 * patch marker asked right after a local call would be looked for in the wrong task (TMPRL1100).
 * The workflow asks no marker today (docs/architecture.md, "Changing workflow code"): this test
 * makes the race happen under constant status polling, checks that no run recorded a marker, and
 * replays every history it produced.
 */
import { Worker } from '@temporalio/worker';
import { createDataConverter } from '../../src/codec';
import { useHarness, answer } from '../support/harness';
import { type HistoryEvent, localAnswerInForcedTask, pollStatus, queryRaceAgent as agent, readThenWrite } from '../support/query-race';

const h = useHarness();

/** Whether the run recorded no patch marker (one asked after a local call could land in the wrong workflow task). */
function noPatchMarkers(events: HistoryEvent[]): boolean {
  return events.every((e) => e.markerRecordedEventAttributes?.markerName !== 'core_patch');
}

/** Runs `tasks` tasks of `turns` read-then-write turns under constant status queries; returns their ids once all answered. */
async function raceQueries(tasks: number, turns: number): Promise<string[]> {
  const script = h.script([...Array.from({ length: turns }, (_, i) => readThenWrite(i + 1)), answer('done')]);
  // A query joins a workflow task that the server has scheduled but not yet handed out. With two
  // workflow task slots for six busy tasks, tasks wait there long enough for the status polling to
  // meet them even on a loaded machine: unlimited slots hand each one out within a few ms, and under
  // CI load five batches met no race at all.
  const worker = await h.worker([agent], { workerOptions: { maxConcurrentWorkflowTaskExecutions: 2 } });
  const ids = Array.from({ length: tasks }, () => h.taskId('query-race'));
  await worker.runUntil(async () => {
    const polling = pollStatus(h, ids);
    for (const taskId of ids) await h.client.start({ agent: agent.name, prompt: 'go', model: { provider: 'scripted', script } }, { taskId });
    for (const taskId of ids) await expect(h.client.result(taskId)).resolves.toMatchObject({ outcome: 'answered', toolCalls: 2 * turns });
    await polling.stop();
  });
  return ids;
}

test('histories where a query forced a local call answer into its own workflow task replay without nondeterminism', async () => {
  let raced = 0;
  // The race takes a query joining the workflow task that runs a local call, and the call ending
  // while the query is answered. Batches run until one happened (each batch is 108 turns).
  for (let batch = 0; batch < 5 && raced === 0; batch++) {
    for (const taskId of await raceQueries(6, 18)) {
      const history = await h.client.handle(taskId).fetchHistory();
      const events = history.events ?? [];
      if (localAnswerInForcedTask(events)) raced += 1;
      expect(noPatchMarkers(events)).toBe(true);
      await expect(Worker.runReplayHistory({ workflowBundle: h.bundle, dataConverter: createDataConverter() }, history, taskId)).resolves.toBeUndefined();
    }
  }
  // The race this test is about happened, or it proved nothing.
  expect(raced).toBeGreaterThan(0);
}, 300_000);
