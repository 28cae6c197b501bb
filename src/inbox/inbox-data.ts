/**
 * What the inbox shows, read through TaskClient: every task waiting on a person in the namespace
 * (a visibility query on AgentStatus), each one's live status (the `status` query), its transcript.
 * Each read has a deadline, so one task without a worker never stalls the page; when no worker
 * answers, what is pending comes from the task's memo (pendingAtRest), which needs none.
 */
import type { TaskClient, TaskSummary } from '../client/task-client';
import type { Message } from '../protocol/messages';
import type { TaskResult, TaskStatus } from '../protocol/task';
import type { ToolError } from '../protocol/tool-error';
import { failureOf } from '../client/task-client';
import type { ApprovalArguments } from '../client/approval-arguments';
import { pendingAtRest, type PendingAtRest } from '../client/pending-at-rest';
import { nestingOf } from '../client/child-tasks';

const READ_DEADLINE_MS = 5_000;

export interface WaitingTask {
  summary: TaskSummary;
  status?: TaskStatus;
  /** What is pending, from the memo, when no worker answered. */
  atRest?: PendingAtRest;
  /** Why there is no status (no worker answered). */
  note?: string;
  /** A sub-agent's child task: the task it works for and the agents down to it (shown as `TASK › researcher: tool`). */
  nested?: { top: string; path: string[] };
}

/** Said wherever the inbox shows what is pending from the memo. */
export const NO_WORKER_NOTE = 'No worker answered for this task: what it waits for is read from its record. A decision made now is recorded and applies when a worker runs the task.';

export interface TaskPageData {
  taskId: string;
  summary: TaskSummary;
  status?: TaskStatus;
  recent: Message[];
  result?: TaskResult;
  failure?: ToolError;
  /** What is pending, from the memo, when no worker answered. */
  atRest?: PendingAtRest;
  note?: string;
}

/** How many of the latest transcript messages a task page shows. */
export const RECENT_MESSAGES = 12;

function withDeadline<T>(client: TaskClient, fn: () => Promise<T>): Promise<T> {
  return client.client.connection.withDeadline(Date.now() + READ_DEADLINE_MS, fn);
}

export async function liveStatus(client: TaskClient, taskId: string): Promise<TaskStatus | undefined> {
  return withDeadline(client, () => client.status(taskId)).catch(() => undefined);
}

/** The live status with its approvals' stored arguments resolved (what people read and decide on). */
export async function shownStatus(client: TaskClient, args: ApprovalArguments, taskId: string): Promise<TaskStatus | undefined> {
  const status = await liveStatus(client, taskId);
  return status && args.resolveStatus(taskId, status);
}

/** What the memo says is pending, or undefined (no memo, or the describe failed). */
export async function memoPending(client: TaskClient, args: ApprovalArguments, taskId: string): Promise<PendingAtRest | undefined> {
  return withDeadline(client, () => pendingAtRest(client.client, args, taskId)).catch(() => undefined);
}

/** The live status when a worker answers, else what the memo says is pending. */
export async function pendingNow(client: TaskClient, args: ApprovalArguments, taskId: string): Promise<{ status?: TaskStatus; atRest?: PendingAtRest }> {
  const status = await shownStatus(client, args, taskId);
  if (status) return { status };
  const atRest = await memoPending(client, args, taskId);
  return atRest ? { atRest } : {};
}

/** Every task awaiting approval or blocked, oldest first, with its live status (else what its memo says is pending). */
export async function waitingTasks(client: TaskClient, args: ApprovalArguments, limit = 200): Promise<WaitingTask[]> {
  const [awaiting, blocked] = await Promise.all([client.list({ status: 'awaiting_approval', limit }), client.list({ status: 'blocked', limit })]);
  const summaries = [...awaiting, ...blocked].sort((a, b) => a.startTime.getTime() - b.startTime.getTime());
  return Promise.all(
    summaries.map(async (summary): Promise<WaitingTask> => {
      const [{ status, atRest }, nesting] = await Promise.all([pendingNow(client, args, summary.taskId), nestingOf(client.client, summary).catch(() => undefined)]);
      const nested = nesting ? { nested: nesting } : {};
      if (status) return { summary, status, ...nested };
      if (atRest) return { summary, atRest, note: NO_WORKER_NOTE, ...nested };
      return { summary, note: 'No worker answered the status query; details appear when a worker runs.', ...nested };
    }),
  );
}

export async function taskPageData(client: TaskClient, args: ApprovalArguments, taskId: string): Promise<TaskPageData> {
  const summary = await client.describe(taskId);
  const [status, transcript] = await Promise.all([shownStatus(client, args, taskId), withDeadline(client, () => client.transcript(taskId)).catch(() => undefined)]);
  const data: TaskPageData = { taskId, summary, recent: await args.resolveMessages(taskId, transcript?.messages.slice(-RECENT_MESSAGES) ?? []) };
  if (status) data.status = status;
  else {
    const atRest = summary.executionStatus === 'RUNNING' ? await memoPending(client, args, taskId) : undefined;
    if (atRest) data.atRest = atRest;
    data.note = atRest ? NO_WORKER_NOTE : 'No worker answered the status query: is a worker running for this task?';
  }
  if (summary.executionStatus !== 'RUNNING' && !status?.result) {
    await withDeadline(client, () => client.result(taskId)).then(
      (result) => (data.result = result),
      (err: unknown) => (data.failure = failureOf(err)),
    );
  }
  return data;
}

/** What the task page's live view shows, sent as a server-sent event when it changes. */
export interface LiveView {
  executionStatus: string;
  agentStatus?: string;
  phase?: string;
  turn?: number;
  pendingApprovals: string[];
  blocked?: string;
  events: string[];
  result?: { outcome: string; text: string };
  failure?: string;
  closed: boolean;
}

export async function liveView(client: TaskClient, args: ApprovalArguments, taskId: string): Promise<LiveView> {
  const [summary, status] = await Promise.all([withDeadline(client, () => client.describe(taskId)), shownStatus(client, args, taskId)]);
  const closed = summary.executionStatus !== 'RUNNING';
  // Without a worker the memo still says what waits, so the page notices when that changes.
  const atRest = !status && !closed ? await memoPending(client, args, taskId) : undefined;
  const view: LiveView = {
    executionStatus: summary.executionStatus,
    pendingApprovals: status?.pendingApprovals.map((a) => a.id) ?? atRest?.approvals.map((a) => a.id) ?? [],
    events: (status?.events ?? []).slice(-10).map((e) => `${e.at} turn ${e.turn} ${e.kind}${e.tool ? ` ${e.tool}` : ''}: ${e.detail}`),
    closed,
  };
  const agentStatus = status?.agentStatus ?? summary.agentStatus;
  if (agentStatus) view.agentStatus = agentStatus;
  if (status) {
    view.phase = status.phase;
    view.turn = status.turn;
    if (status.blocked) view.blocked = `${status.blocked.code}: ${status.blocked.reason}`;
  } else if (atRest?.block) view.blocked = `${atRest.block.code}: ${atRest.block.reason}`;
  const result = status?.result;
  if (result) view.result = { outcome: result.outcome, text: result.text };
  else if (closed) {
    await withDeadline(client, () => client.result(taskId)).then(
      (r) => (view.result = { outcome: r.outcome, text: r.text }),
      (err: unknown) => (view.failure = failureOf(err).detail),
    );
  }
  return view;
}
