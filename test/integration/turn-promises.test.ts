/**
 * What a turn costs the workflow sandbox, counted rather than timed: the SDK captures a
 * source-mapped stack for every promise created in a workflow's context (its `__stack_trace` hook),
 * so the turn path keeps them few (docs/performance.md, "A turn against the bare SDK, counted").
 * Counted with a v8 promise hook while the workflows run on the test's thread (`debugMode`), for
 * two task lengths: their difference per turn leaves out each task's start and end.
 */
import v8 from 'node:v8';
import { createBenchAgent, EchoModel } from '../../bench/bench-agent';
import { useHarness } from '../support/harness';

/**
 * The bench turn (one model call, one fast read run locally), the SDK's own promises included, as
 * counted here (while a workflow's activator is set): 14 since issue 23 (18 before), and 2 more for
 * the cancellation scope a model call runs in so an interrupt can cancel it (steering.ts).
 */
const MAX_PROMISES_PER_TURN = 16;

const h = useHarness();

/**
 * Whether `promise` was created by workflow code running for the first time: its realm's global
 * holds the SDK's activator (as the SDK's own hook asks), and the activator is not replaying. A
 * loaded machine can evict a cached run, whose replay would count its promises twice.
 */
function inWorkflowContext(promise: Promise<unknown>): boolean {
  const realmFunction = promise.constructor.constructor as FunctionConstructor;
  const activator = realmFunction('return globalThis.__TEMPORAL_ACTIVATOR__')() as { info?: { unsafe?: { isReplaying?: boolean } } } | undefined;
  return activator !== undefined && activator.info?.unsafe?.isReplaying !== true;
}

/** Runs a bench task of `turns` turns and returns how many promises its workflow code created. */
async function workflowPromisesOfTask(turns: number): Promise<number> {
  const model = new EchoModel(turns);
  const agent = createBenchAgent();
  const worker = await h.worker([agent], { models: { echo: model }, workerOptions: { debugMode: true } });
  let count = 0;
  const stop = v8.promiseHooks.onInit((promise) => {
    if (inWorkflowContext(promise)) count += 1;
  });
  try {
    await worker.runUntil(async () => {
      const taskId = h.taskId('promises');
      await h.client.start({ agent: agent.name, prompt: 'go', model: { provider: 'custom', name: 'echo' }, budgets: { turns: turns + 5, toolCalls: turns + 5, toolCallsPerTurn: 1 } }, { taskId });
      const result = await h.client.result(taskId);
      expect(result.toolCalls).toBe(turns);
    });
  } finally {
    stop();
  }
  return count;
}

test('a turn of the bench agent creates at most 16 promises in the workflow sandbox, the SDK own included', async () => {
  const short = await workflowPromisesOfTask(10);
  const long = await workflowPromisesOfTask(30);
  const perTurn = (long - short) / 20;
  // The hook sees the workflow's promises at all (a count of zero would pass the bound for nothing).
  expect(perTurn).toBeGreaterThan(0);
  expect(perTurn).toBeLessThanOrEqual(MAX_PROMISES_PER_TURN);
}, 120_000);
