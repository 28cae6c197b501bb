/**
 * What the inbox shows, read through TaskClient: every task waiting on a person in the namespace
 * (a visibility query on AgentStatus), each one's live status (the `status` query), its transcript.
 * Each read has a deadline, so one task without a worker never stalls the page.
 */
import type { TaskClient, TaskSummary } from '../client/task-client';
import type { Message } from '../protocol/messages';
import type { TaskResult, TaskStatus } from '../protocol/task';
import type { ToolError } from '../protocol/tool-error';
import { failureOf } from '../client/task-client';
import type { ApprovalArguments } from '../client/approval-arguments';

const READ_DEADLINE_MS = 5_000;

export interface WaitingTask {
  summary: TaskSummary;
  status?: TaskStatus;
  /** Why there is no status (no worker answered). */
  note?: string;
}

export interface TaskPageData {
  taskId: string;
  summary: TaskSummary;
  status?: TaskStatus;
  recent: Message[];
  result?: TaskResult;
  failure?: ToolError;
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

/** Every task awaiting approval or blocked, oldest first, with its live status. */
export async function waitingTasks(client: TaskClient, args: ApprovalArguments, limit = 200): Promise<WaitingTask[]> {
  const [awaiting, blocked] = await Promise.all([client.list({ status: 'awaiting_approval', limit }), client.list({ status: 'blocked', limit })]);
  const summaries = [...awaiting, ...blocked].sort((a, b) => a.startTime.getTime() - b.startTime.getTime());
  return Promise.all(
    summaries.map(async (summary) => {
      const status = await shownStatus(client, args, summary.taskId);
      return status ? { summary, status } : { summary, note: 'No worker answered the status query; details appear when a worker runs.' };
    }),
  );
}

export async function taskPageData(client: TaskClient, args: ApprovalArguments, taskId: string): Promise<TaskPageData> {
  const summary = await client.describe(taskId);
  const [status, transcript] = await Promise.all([
    shownStatus(client, args, taskId),
    withDeadline(client, () => client.transcript(taskId)).catch(() => undefined),
  ]);
  const data: TaskPageData = { taskId, summary, recent: await args.resolveMessages(taskId, transcript?.messages.slice(-RECENT_MESSAGES) ?? []) };
  if (status) data.status = status;
  else data.note = 'No worker answered the status query: is a worker running for this task?';
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
  const view: LiveView = {
    executionStatus: summary.executionStatus,
    pendingApprovals: status?.pendingApprovals.map((a) => a.id) ?? [],
    events: (status?.events ?? []).slice(-10).map((e) => `${e.at} turn ${e.turn} ${e.kind}${e.tool ? ` ${e.tool}` : ''}: ${e.detail}`),
    closed,
  };
  const agentStatus = status?.agentStatus ?? summary.agentStatus;
  if (agentStatus) view.agentStatus = agentStatus;
  if (status) {
    view.phase = status.phase;
    view.turn = status.turn;
    if (status.blocked) view.blocked = `${status.blocked.code}: ${status.blocked.reason}`;
  }
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
