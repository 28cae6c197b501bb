/**
 * A task's sub-agent children as front ends show them: found by the `ParentTask` search attribute,
 * kept only when Temporal itself records the task as their parent (the attribute is written by
 * whoever starts a workflow, so a task started by hand could claim any parent), and what each waits
 * for from its memo (no worker needed). A decision on a nested approval or block goes to the child
 * task that holds it, judged by that task's own approver rules.
 */
import type { Client } from '@temporalio/client';
import { AgentNameKey, AgentStatusKey, ParentTaskKey, WORKFLOW_TYPE } from '../protocol/definitions';
import { MAX_DELEGATION_DEPTH } from '../protocol/delegation';
import type { PendingMemo } from '../protocol/task';

/** Children read per task (a task runs at most its concurrency limit at once; closed ones are not read). */
const CHILDREN_READ = 100;

/** What a running descendant of a task waits for from a person. */
export interface NestedPending {
  /** The descendant that holds it: decisions go there. */
  taskId: string;
  /** The agents from the task's child down to this one, e.g. ['researcher'] or ['researcher', 'fetcher']. */
  path: string[];
  agentStatus?: string;
  approvals: PendingMemo['approvals'];
  block: PendingMemo['block'];
}

/** The running children of `taskId` whose parent, as Temporal records it, is that task. */
export async function runningChildren(client: Client, taskId: string): Promise<{ taskId: string; agent: string; agentStatus?: string; pending?: PendingMemo }[]> {
  const query = `WorkflowType = '${WORKFLOW_TYPE}' AND ${ParentTaskKey.name} = '${taskId.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}' AND ExecutionStatus = 'Running'`;
  const out: { taskId: string; agent: string; agentStatus?: string; pending?: PendingMemo }[] = [];
  for await (const execution of client.workflow.list({ query })) {
    // The search attribute only finds candidates; the server's parent link decides.
    if (execution.parentExecution?.workflowId !== taskId) continue;
    const memo = execution.memo as { pending?: PendingMemo } | undefined;
    const agentStatus = execution.typedSearchAttributes.get(AgentStatusKey);
    out.push({
      taskId: execution.workflowId,
      agent: execution.typedSearchAttributes.get(AgentNameKey) ?? '?',
      ...(agentStatus ? { agentStatus } : {}),
      ...(memo?.pending ? { pending: memo.pending } : {}),
    });
    if (out.length >= CHILDREN_READ) break;
  }
  return out;
}

/** Everything the running descendants of `taskId` wait for from a person, depth first. */
export async function nestedPending(client: Client, taskId: string, path: string[] = []): Promise<NestedPending[]> {
  if (path.length >= MAX_DELEGATION_DEPTH) return [];
  const out: NestedPending[] = [];
  for (const child of await runningChildren(client, taskId)) {
    const childPath = [...path, child.agent];
    const pending = child.pending;
    if (pending && (pending.approvals.length || pending.block)) {
      out.push({ taskId: child.taskId, path: childPath, ...(child.agentStatus ? { agentStatus: child.agentStatus } : {}), approvals: pending.approvals, block: pending.block });
    }
    out.push(...(await nestedPending(client, child.taskId, childPath)));
  }
  return out;
}

/** How a nested item reads: `TASK › researcher: delete_file …` (the parent's id, then the agents down to the child). */
export function nestedLabel(taskId: string, nested: Pick<NestedPending, 'path'>, what: string): string {
  return `${taskId} › ${nested.path.join(' › ')}: ${what}`;
}

/**
 * The task a decision belongs to: `taskId` itself when it holds the approval (or block), else the
 * descendant that does; undefined when neither does (the task then says why it refuses).
 */
export async function holderOf(client: Client, taskId: string, decision: { approvalId: string } | { blockId: string }, own: PendingMemo | undefined): Promise<string | undefined> {
  const holds = (pending: PendingMemo | undefined | null) => {
    if (!pending) return false;
    return 'approvalId' in decision ? pending.approvals.some((a) => a.id === decision.approvalId) : pending.block?.id === decision.blockId;
  };
  if (holds(own)) return taskId;
  const nested = await nestedPending(client, taskId).catch(() => []);
  return nested.find((n) => holds({ approvals: n.approvals, block: n.block }))?.taskId;
}

/**
 * Where a task sits under tasks started by hand: the top task and the agents from its child down to
 * this one, from Temporal's parent links (never a task's own claim); undefined for a task without a parent.
 */
export async function nestingOf(client: Client, task: { taskId: string; agent?: string | undefined; parentTask?: string | undefined }): Promise<{ top: string; path: string[] } | undefined> {
  if (!task.parentTask) return undefined;
  const path = [task.agent ?? '?'];
  let top = task.parentTask;
  for (let depth = 1; depth < MAX_DELEGATION_DEPTH; depth++) {
    const described = await client.workflow.getHandle(top).describe();
    const parent = described.parentExecution?.workflowId;
    if (!parent) break;
    path.unshift(described.typedSearchAttributes.get(AgentNameKey) ?? '?');
    top = parent;
  }
  return { top, path };
}
