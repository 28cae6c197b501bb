/**
 * A person's decision that counts even when no worker runs. What is pending comes from the task's
 * memo (a describe: no worker needed); the decision goes as an update when a worker answers within
 * a second (the caller learns at once whether it was taken), else as a signal, which the server
 * records in history at once and the task judges by the same rules when a worker runs it.
 */
import { WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { DecisionSigner } from '../approvers/signer';
import { approveSignal, approveUpdate, denySignal, denyUpdate, statusQuery, unblockSignal, unblockUpdate } from '../protocol/definitions';
import type { ApprovalAnswer, ApproveInput, DenyInput, PendingMemo, TaskStatus, UnblockInput } from '../protocol/task';

/**
 * How long a worker may take to answer a query before the task counts as having no live worker. A
 * query is the probe because an unanswered one is simply dropped, while an update the server holds
 * would be applied whenever a worker returns (after the person was told something else).
 */
export const WORKER_PROBE_MS = 1_500;
/** How long a worker that answered the probe may take to take the decision before it is sent as a signal too. */
export const DECISION_UPDATE_WAIT_MS = 10_000;
/**
 * A worker that runs polls its queue again at least this often (the server holds a poll for a
 * minute), so a queue whose last poll is older has no live worker: the decision goes straight to
 * a signal, without waiting for an update nobody will take.
 */
export const LIVE_POLL_WINDOW_MS = 70_000;

export type DecisionToSend = { kind: 'approve'; input: ApproveInput } | { kind: 'deny'; input: DenyInput } | { kind: 'unblock'; input: UnblockInput };

export type DecisionOutcome = (
  | { applied: true; answer: ApprovalAnswer | { resumed: true; escalationId: string } }
  /** Recorded in the task's history; the task takes (or refuses) it when a worker runs it. */
  | { applied: false; recorded: true; taskQueue: string; note: string }
) & {
  /** Set when the decision named a sub-agent child's approval or block: the child task it went to (TaskClient.decide). */
  decidedOn?: string;
};

/** What the sender needs of the task, without a worker. */
export interface TaskAtRest {
  executionStatus: string;
  taskQueue: string;
  /** Absent for tasks started before pending-in-memo. */
  pending?: PendingMemo;
  /** The memo's one-line summary of what the task waits for (its first approval's arguments, shortened). */
  waitingFor?: string;
}

export interface DecisionSender {
  client: Client;
  signer?: DecisionSigner | undefined;
  /** The live status, for tasks whose memo does not say what is pending (a worker must answer). */
  status(taskId: string): Promise<TaskStatus>;
  rejected(taskId: string, reason: string): Error;
}

export async function describeAtRest(client: Client, taskId: string): Promise<TaskAtRest> {
  const described = await client.workflow.getHandle(taskId).describe();
  const memo = described.memo as { pending?: PendingMemo; waitingFor?: unknown } | undefined;
  const pending = memo?.pending;
  const waitingFor = typeof memo?.waitingFor === 'string' ? memo.waitingFor : undefined;
  return { executionStatus: described.status.name, taskQueue: described.taskQueue, ...(pending ? { pending } : {}), ...(waitingFor ? { waitingFor } : {}) };
}

export async function sendDecision(sender: DecisionSender, taskId: string, decision: DecisionToSend): Promise<DecisionOutcome> {
  const task = await describeAtRest(sender.client, taskId);
  if (task.executionStatus !== 'RUNNING') throw sender.rejected(taskId, `the task is ${task.executionStatus.toLowerCase()}; it takes no more requests`);
  const pollers = await workflowPollers(sender.client, task.taskQueue);
  const handle = sender.client.workflow.getHandle(taskId);
  const polled = pollers.some((p) => Date.now() - pollMs(p) < LIVE_POLL_WINDOW_MS);
  const live =
    polled &&
    (await sender.client.connection
      .withDeadline(Date.now() + WORKER_PROBE_MS, () => handle.query(statusQuery))
      .then(
        () => true,
        () => false,
      ));
  const input = await bound(sender, taskId, task, decision, live);
  if (live) {
    try {
      const answer = await sender.client.connection.withDeadline<ApprovalAnswer | { resumed: true; escalationId: string }>(Date.now() + DECISION_UPDATE_WAIT_MS, () =>
        decision.kind === 'approve'
          ? handle.executeUpdate(approveUpdate, { args: [input as ApproveInput] })
          : decision.kind === 'deny'
            ? handle.executeUpdate(denyUpdate, { args: [input as DenyInput] })
            : handle.executeUpdate(unblockUpdate, { args: [input as UnblockInput] }),
      );
      return { applied: true, answer };
    } catch (err) {
      // The validator (or handler) said no: the caller hears why, and nothing is recorded.
      if (err instanceof WorkflowUpdateFailedError) throw sender.rejected(taskId, err.cause?.message ?? err.message);
      // No worker took it in time: the signal below records it. Should the update still be
      // delivered later, the one that comes second is recorded as superseded (single use).
    }
  }
  const offered = live;
  const signalled =
    decision.kind === 'approve'
      ? handle.signal(approveSignal, input as ApproveInput)
      : decision.kind === 'deny'
        ? handle.signal(denySignal, input as DenyInput)
        : handle.signal(unblockSignal, input as UnblockInput);
  await signalled.catch((err: Error & { cause?: Error }) => {
    // e.g. a flood of signals reached the server's per-run limit: say what the server said.
    if (/limit for signal events/.test(err.cause?.message ?? '')) {
      const offeredNote = offered ? '; it was offered as an update first, which a worker may still take (see status)' : '';
      throw sender.rejected(taskId, `the server refused the decision: ${err.cause!.message}${offeredNote}`);
    }
    throw err;
  });
  return { applied: false, recorded: true, taskQueue: task.taskQueue, note: recordedNote(task.taskQueue, pollers, polled, live) };
}

/**
 * The decision as it is sent: bound to what the person decided on (an unblock names its block)
 * and signed over that. With no worker to ask, what the memo shows as not pending is refused here
 * already (a worker's validator gives the more precise reason, e.g. who decided it first).
 */
async function bound(sender: DecisionSender, taskId: string, task: TaskAtRest, decision: DecisionToSend, workerPolls: boolean): Promise<ApproveInput | DenyInput | UnblockInput> {
  const sign = <T extends { by: string; roles?: string[] }>(kind: DecisionToSend['kind'], subject: string, request: T): T =>
    sender.signer && !(request as { proof?: unknown }).proof
      ? { ...request, proof: sender.signer.sign({ kind, taskId, subject, by: request.by, roles: request.roles ?? [], request: request as unknown as Record<string, unknown> }) }
      : request;
  if (decision.kind === 'unblock') {
    const blockId = decision.input.blockId ?? (task.pending ? task.pending.block?.id : (await sender.status(taskId)).blocked?.id);
    if (!blockId) throw sender.rejected(taskId, `the task is not blocked`);
    // With no worker to ask, a block the memo no longer shows is refused here: a stale form writes nothing.
    if (!workerPolls && task.pending && task.pending.block?.id !== blockId) {
      const now = task.pending.block;
      throw sender.rejected(
        taskId,
        `block ${blockId} is not the current one: ${now ? `the task is blocked on ${now.id} (${now.code}) now` : 'the task is not blocked now'}; look at it before you unblock`,
      );
    }
    return sign('unblock', blockId, { ...decision.input, blockId });
  }
  const { approvalId } = decision.input;
  if (!workerPolls && task.pending && !task.pending.approvals.some((a) => a.id === approvalId)) {
    const waiting = task.pending.approvals.map((a) => `${a.id} (${a.tool})`).join(', ');
    throw sender.rejected(taskId, `no pending approval ${approvalId} on this task${waiting ? ` (pending: ${waiting})` : ' (none pending)'}`);
  }
  return sign(decision.kind, approvalId, decision.input);
}

interface Poller {
  lastAccessTime?: { seconds?: unknown } | null;
}

async function workflowPollers(client: Client, taskQueue: string): Promise<Poller[]> {
  try {
    const { pollers } = await client.workflowService.describeTaskQueue({
      namespace: client.options.namespace,
      taskQueue: { name: taskQueue },
      taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
    });
    return pollers ?? [];
  } catch {
    return [{}]; // Unknown: let the update try.
  }
}

/** When the server last saw this poller (ms); an unknown time counts as now (let the update try). */
function pollMs(poller: Poller): number {
  const seconds = poller.lastAccessTime?.seconds;
  return seconds === undefined || seconds === null ? Date.now() : Number(seconds) * 1000;
}

function recordedNote(taskQueue: string, pollers: Poller[], polled: boolean, live: boolean): string {
  const applies = 'recorded; it applies when a worker runs the task';
  if (!pollers.length) return `${applies} (no worker polls queue ${taskQueue})`;
  const since = Math.round((Date.now() - Math.max(...pollers.map(pollMs))) / 1000);
  if (!polled) return `${applies} (no worker has polled queue ${taskQueue} for ${since} s)`;
  if (!live) return `${applies} (no worker answered within ${WORKER_PROBE_MS / 1000} s; queue ${taskQueue} was last polled ${since} s ago)`;
  return `${applies} (no worker took it within ${DECISION_UPDATE_WAIT_MS / 1000} s)`;
}
