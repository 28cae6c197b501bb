/**
 * A retried call whose previous attempt timed out on its heartbeat, or was failed by another worker
 * because its process is gone (worker/dead-workers), ran on a worker that most likely died (for
 * certain, in the second case). That worker also ran the task's last workflow task, so the server
 * would offer the task's next step to the dead worker's sticky queue first and wait out the sticky
 * schedule-to-start timeout (1 s by default) before any other worker could take it: the server calls
 * a sticky worker gone only 10 s after its last poll, a window it does not let anyone configure. The
 * retry tells the server to forget that worker (ResetStickyTaskQueue, the call the API provides for a
 * worker that lost a run from its cache) before it completes, so the next step goes straight to the
 * shared queue.
 *
 * If the worker was alive after all (a stalled event loop), the only cost is one replay of the task
 * on whichever worker takes the step. Anything that goes wrong here is ignored: the step still
 * happens, only after the sticky timeout.
 */
import type { Context } from '@temporalio/activity';
import { temporal } from '@temporalio/proto';

const HEARTBEAT_TIMEOUT = temporal.api.enums.v1.TimeoutType.TIMEOUT_TYPE_HEARTBEAT;

/**
 * The failure type a worker gives a call of another worker whose process is gone (worker/dead-workers):
 * the server takes only application failures from a worker, so the type is how a retry tells that
 * failure from a live worker's.
 */
export const DEAD_WORKER_FAILURE_TYPE = 'DeadWorker';

/** One release per attempt: an activity can run several heartbeat scopes (run-tool's journal check and call). */
const released = new WeakMap<Context, Promise<void>>();

/** The longest a call's result waits for the release: a slow server must not hold a finished call back. */
const MAX_WAIT_MS = 2_000;

/**
 * Starts the release for this attempt (once) and returns a promise that settles when it is done, or
 * after MAX_WAIT_MS, and never rejects.
 */
export function releaseDeadWorkersRun(ctx: Context): Promise<void> {
  let pending = released.get(ctx);
  if (!pending) {
    const done = release(ctx).catch((err: unknown) => {
      ctx.log.debug('could not reset the sticky queue of a retried call', { error: err instanceof Error ? err.message : String(err) });
    });
    pending = Promise.race([done, new Promise<void>((resolve) => setTimeout(resolve, MAX_WAIT_MS).unref())]);
    released.set(ctx, pending);
  }
  return pending;
}

async function release(ctx: Context): Promise<void> {
  const { info } = ctx;
  // A first attempt has no dead predecessor; a local activity runs inside the workflow task itself.
  if (info.attempt < 2 || info.isLocal || !info.workflowExecution) return;
  const execution = { workflowId: info.workflowExecution.workflowId, runId: info.workflowExecution.runId };
  const namespace = info.namespace;
  const { pendingActivities } = await ctx.client.workflowService.describeWorkflowExecution({ namespace, execution });
  const self = pendingActivities?.find((a) => a.activityId === info.activityId);
  // Only a heartbeat timeout, or another worker's word that the worker's process is gone
  // (worker/dead-workers), says the previous attempt's worker stopped answering; a failure it
  // reported (a 429, a tool error) came from a live worker, whose cached run is worth keeping.
  const lost = self?.lastFailure;
  const dead = lost?.timeoutFailureInfo?.timeoutType === HEARTBEAT_TIMEOUT || lost?.applicationFailureInfo?.type === DEAD_WORKER_FAILURE_TYPE;
  if (!dead) return;
  await ctx.client.workflowService.resetStickyTaskQueue({ namespace, execution });
}
