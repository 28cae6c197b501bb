/**
 * Per-turn time of the bench's turn on the bare Temporal SDK (bench/bare-temporal/workflows.ts),
 * on the same server as the engine: the floor no engine on this SDK and server goes under.
 */
import { bundleWorkflowCode, DefaultLogger, Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { Harness } from '../test/support/harness';

let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;

export async function bareTurns(h: Harness, turns: number, options: { local?: boolean; window?: number } = {}): Promise<number[]> {
  bundle ??= bundleWorkflowCode({ workflowsPath: require.resolve('./bare-temporal/workflows'), logger: new DefaultLogger('WARN') });
  const callTimes: number[] = [];
  const taskQueue = `${h.taskQueue}-bare`;
  const worker = await Worker.create({
    connection: h.connection,
    taskQueue,
    workflowBundle: await bundle,
    activities: {
      bareModel: async (messages: unknown[]) => {
        callTimes.push(performance.now());
        return { callTool: callTimes.length <= turns, n: messages.length };
      },
      bareTool: async (n: number) => ({ echoed: n }),
    },
  });
  await worker.runUntil(
    h.client.client.workflow.execute('bareAgent', { taskQueue, workflowId: h.taskId('bare'), args: [options.local ?? false, ...(options.window === undefined ? [] : [options.window])] }),
  );
  return callTimes.slice(1).map((t, i) => t - callTimes[i]!);
}
