/**
 * When did the server record a decision sent as a signal? A signal can wait in history for hours
 * while no worker runs; its proof is judged at the time it was recorded, not when a worker got to
 * it, so an approval made during an outage still counts and a stale proof sent later does not.
 */
import { Context } from '@temporalio/activity';
import { TaskHistory } from '../history/task-history';
import type { DecisionReceivedAtInput } from '../protocol/activity-contracts';

/** Pages of history read from the newest event back before giving up (a signal is normally near the end). */
const MAX_PAGES = 20;

export async function decisionReceivedAt({ signal, signature }: DecisionReceivedAtInput): Promise<number | null> {
  const ctx = Context.current();
  const task = ctx.info.workflowExecution;
  if (!task) return null;
  const found = await new TaskHistory(ctx.client).lastSignal(
    { workflowId: task.workflowId, runId: task.runId },
    signal,
    (input) => (input as { proof?: { signature?: unknown } } | null)?.proof?.signature === signature,
    { maxPages: MAX_PAGES, onPage: () => ctx.heartbeat() },
  );
  return found?.at ?? null;
}
