/**
 * Single-use start proofs: is a signed start the first use of its proof? A
 * start proof names its task id, and the id names one task for good (TaskClient starts with
 * REJECT_DUPLICATE), so any other execution of the same id that started after the proof could have
 * been signed, and before this task's own chain, was started with it first: this start replays it
 * (the attack: a signed start read from history, started again under the same id once the original
 * closed). The server's visibility store is asked, through the worker's client; the answer is an
 * activity result, so replay decides the same.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { StartClaimInput } from '../protocol/activity-contracts';

/** Runs of one id read at most (a task id is reused by hand only). */
const MAX_RUNS = 1_000;

export async function startClaimProblem({ taskId, runId, firstRunId, earliestSignedMs }: StartClaimInput): Promise<string | null> {
  const ctx = Context.current();
  const runs: { runId: string; startMs: number }[] = [];
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await ctx.client.workflowService.listWorkflowExecutions({
      namespace: ctx.info.namespace,
      query: `WorkflowId = ${queryString(taskId)}`,
      pageSize: 200,
      ...(nextPageToken ? { nextPageToken } : {}),
    });
    for (const e of page.executions ?? []) {
      const t = e.startTime;
      if (e.execution?.runId && t) runs.push({ runId: e.execution.runId, startMs: Number(t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1e6) });
    }
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
    ctx.heartbeat();
  } while (nextPageToken && runs.length < MAX_RUNS);
  const own = runs.find((r) => r.runId === runId);
  // Visibility is written after the start: until this run is listed, an earlier one may not be either.
  if (!own) throw ApplicationFailure.retryable(`run ${runId} of ${taskId} is not in the visibility store yet`, 'visibility_lag');
  // A reset run keeps its chain's first run id: the chain began with that run.
  const chainStartMs = runs.find((r) => r.runId === firstRunId)?.startMs ?? own.startMs;
  const before = runs.filter((r) => r.runId !== runId && r.runId !== firstRunId && r.startMs < chainStartMs && r.startMs >= earliestSignedMs).sort((a, b) => a.startMs - b.startMs)[0];
  if (!before) return null;
  return (
    `this signed start was already used: task id "${taskId}" ran before (run ${before.runId}, started ${new Date(before.startMs).toISOString()}), ` +
    'after its proof could have been signed; a start proof is good for one task once. Sign a new start under a new task id'
  );
}

/** A string literal of Temporal's list filter. */
function queryString(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}
