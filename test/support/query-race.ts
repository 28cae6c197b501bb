/**
 * What the tests of status queries racing local calls share: an agent whose read always runs as a
 * local activity, turns that read then write, constant status polling, and how a history shows the
 * race (a local call's answer handed to the workflow in a workflow task forced after a query).
 */
import { z } from 'zod';
import { defineAgent } from '../../src/agents/define-agent';
import { defineTool } from '../../src/tools/define-tool';
import { localActivityTypeOf } from '../../src/history/task-history';
import type { Harness } from './harness';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export const queryRaceAgent = defineAgent({
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
      run: async ({ n }) => ({ n }),
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
export function readThenWrite(n: number) {
  return {
    content: [
      { type: 'text' as const, text: `turn ${n}` },
      { type: 'tool_use' as const, name: 'local_lookup', input: { n } },
      { type: 'tool_use' as const, name: 'save', input: { n } },
    ],
  };
}

export type HistoryEvent = NonNullable<Awaited<ReturnType<ReturnType<Harness['client']['handle']>['fetchHistory']>>['events']>[number];

/** Whether a local call's answer reached the workflow in a task the worker forced for it after answering a query. */
export function localAnswerInForcedTask(events: HistoryEvent[]): boolean {
  return events.some((event, i) => {
    // A local tool call's marker (the run's describeAgent is a local activity too).
    if (localActivityTypeOf(event) !== 'runTool') return false;
    const started = events[i + 2]?.workflowTaskStartedEventAttributes;
    return started?.requestId === 'request-from-RespondWorkflowTaskCompleted';
  });
}

/** Polls `status` of each task as fast as it answers, `perTask` at a time, until the returned stop() is called. */
export function pollStatus(h: Harness, taskIds: string[], perTask = 3): { stop(): Promise<void> } {
  let polling = true;
  const pollers = taskIds
    .flatMap((taskId) => Array.from({ length: perTask }, () => taskId))
    .map(async (taskId) => {
      while (polling) await h.client.status(taskId).catch(() => sleep(5));
    });
  return {
    stop: async () => {
      polling = false;
      await Promise.all(pollers);
    },
  };
}
