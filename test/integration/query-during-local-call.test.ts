/**
 * A status query that reaches a workflow task while a local tool call is running makes the server
 * give the call's answer to the workflow in a workflow task of its own (the SDK's core answers the
 * query first and asks for a new task). On replay the answer comes in the earlier task, so a
 * patch marker asked right after a local call would be looked for in the wrong task. Markers that
 * used to be asked at their first use (the effect journal at a run's first write, here right after
 * a local read) are asked at a run's start since `markers-at-run-start`: this test makes the race
 * happen under constant status polling and replays every history it produced.
 */
import { Worker } from '@temporalio/worker';
import { z } from 'zod';
import { defineAgent } from '../../src/agents/define-agent';
import { defineTool } from '../../src/tools/define-tool';
import { createDataConverter } from '../../src/codec';
import { answer, startHarness, type Harness } from '../support/harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const agent = defineAgent({
  name: 'query-race',
  system: 'test',
  policy: { write: 'allow' },
  tools: [
    defineTool({
      name: 'local_lookup',
      description: 'A read that always runs as a local activity.',
      input: z.object({ n: z.number().int() }),
      output: z.object({ n: z.number().int() }),
      effect: 'read',
      idempotent: true,
      cacheTtlMs: 0,
      local: true,
      run: async ({ n }) => (Number(process.env.QS ?? 0) ? await sleep(Number(process.env.QS)) : undefined, { n }),
    }),
    defineTool({
      name: 'save',
      description: 'An idempotent write.',
      input: z.object({ n: z.number().int() }),
      output: z.object({ saved: z.number().int() }),
      effect: 'write',
      idempotent: true,
      run: async ({ n }) => ({ saved: n }),
    }),
  ],
});

/** A turn that reads locally, then writes: the run's first write comes right after the local call's answer. */
function readThenWrite(n: number) {
  return {
    content: [
      { type: 'text' as const, text: `turn ${n}` },
      { type: 'tool_use' as const, name: 'local_lookup', input: { n } },
      { type: 'tool_use' as const, name: 'save', input: { n } },
    ],
  };
}

type HistoryEvent = NonNullable<Awaited<ReturnType<ReturnType<Harness['client']['handle']>['fetchHistory']>>['events']>[number];

/** Whether a local call's answer reached the workflow in a task the worker forced for it after answering a query. */
function localAnswerInForcedTask(events: HistoryEvent[]): boolean {
  return events.some((event, i) => {
    const marker = event.markerRecordedEventAttributes;
    if (marker?.markerName !== 'core_local_activity') return false;
    const started = events[i + 2]?.workflowTaskStartedEventAttributes;
    return started?.requestId === 'request-from-RespondWorkflowTaskCompleted';
  });
}

/** Whether every patch marker of the run was recorded by its first workflow task (markers-at-run-start). */
function markersAtRunStart(events: HistoryEvent[]): boolean {
  const firstCompleted = events.findIndex((e) => e.workflowTaskCompletedEventAttributes);
  const firstCommandsEnd = events.findIndex((e, i) => i > firstCompleted && (e.workflowTaskScheduledEventAttributes || e.activityTaskScheduledEventAttributes));
  return events.every((e, i) => e.markerRecordedEventAttributes?.markerName !== 'core_patch' || i < firstCommandsEnd);
}

/** Runs `tasks` tasks of `turns` read-then-write turns under constant status queries; returns their ids once all answered. */
async function raceQueries(tasks: number, turns: number): Promise<string[]> {
  const script = h.script([...Array.from({ length: turns }, (_, i) => readThenWrite(i + 1)), answer('done')]);
  const worker = await h.worker([agent]);
  const ids = Array.from({ length: tasks }, () => h.taskId('query-race'));
  await worker.runUntil(async () => {
    let polling = true;
    // Status queries as fast as they answer, three at a time per task, from its start to its end.
    const pollers = ids
      .flatMap((taskId) => [taskId, taskId, taskId])
      .map(async (taskId) => {
        while (polling) await h.client.status(taskId).catch(() => sleep(5));
      });
    for (const taskId of ids) await h.client.start({ agent: agent.name, prompt: 'go', model: { provider: 'scripted', script } }, { taskId });
    for (const taskId of ids) await expect(h.client.result(taskId)).resolves.toMatchObject({ outcome: 'answered', toolCalls: 2 * turns });
    polling = false;
    await Promise.all(pollers);
  });
  return ids;
}

test('histories where a query forced a local call answer into its own workflow task replay without nondeterminism', async () => {
  let raced = 0;
  // The race takes a query arriving as a workflow task is handed out and a local call ending while
  // it is answered: a few in a hundred turns. Batches run until one happened (each batch is 108 turns).
  for (let batch = 0; batch < 5 && raced === 0; batch++) {
    for (const taskId of await raceQueries(6, 18)) {
      const history = await h.client.handle(taskId).fetchHistory();
      const events = history.events ?? [];
      if (localAnswerInForcedTask(events)) raced += 1;
      expect(markersAtRunStart(events)).toBe(true);
      await expect(Worker.runReplayHistory({ workflowBundle: h.bundle, dataConverter: createDataConverter() }, history, taskId)).resolves.toBeUndefined();
    }
  }
  // The race this test is about happened, or it proved nothing.
  expect(raced).toBeGreaterThan(0);
}, 300_000);
