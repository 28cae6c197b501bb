/**
 * A delegation whose child id is taken (issue 49: a finished child is never run again). Child ids
 * are derived from the lead and its call number, so a lead reset after a child finished asks for
 * the same id again: when that task is this lead's own child, its result stands for the delegation
 * instead of a new child; when it is someone else's (or gone), nothing is taken over.
 */
import { Context } from '@temporalio/activity';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { EarlierChild, EarlierChildInput } from '../protocol/activity-contracts';
import type { TaskResult } from '../protocol/task';

export async function earlierChild({ childId }: EarlierChildInput): Promise<EarlierChild> {
  const ctx = Context.current();
  const parent = ctx.info.workflowExecution?.workflowId;
  const handle = ctx.client.workflow.getHandle(childId);
  let described: Awaited<ReturnType<typeof handle.describe>>;
  try {
    described = await handle.describe();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return { kind: 'not_ours' };
    throw err;
  }
  // Temporal records who started a child: a task that only claims this lead as its parent is not ours.
  if (!parent || described.parentExecution?.workflowId !== parent) return { kind: 'not_ours' };
  const status = described.status.name;
  if (status === 'RUNNING') return { kind: 'running' };
  if (status !== 'COMPLETED') return { kind: 'ended', status: status.toLowerCase() };
  return { kind: 'completed', result: (await handle.result()) as TaskResult };
}
