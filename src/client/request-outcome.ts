/**
 * What became of a request a person sent to a task (approve, deny, unblock, message, interrupt,
 * cancel), in the words every front end uses: `applied` (the task took it), `queued` (the task holds
 * it for its next model call, or is stopping), `recorded` (no live worker: it is in the task's
 * history and is judged when a worker runs the task), `superseded` (what it answered was already
 * answered) or `refused` (it broke a rule; nothing changed). Messages and interrupts are signals,
 * which cannot answer: with a live worker, what the task did with one is read back from its status.
 */
import { temporal } from '@temporalio/proto';
import { undecidedSignals } from '../history/task-history';
import { approveSignal, denySignal, statusQuery, unblockSignal } from '../protocol/definitions';
import type { Decision, MessageInput, TaskEvent, TaskStatus } from '../protocol/task';
import { WORKER_PROBE_MS } from './send-decision';
import type { TaskClient } from './task-client';

export const REQUEST_OUTCOMES = ['applied', 'queued', 'recorded', 'superseded', 'refused'] as const;
export type RequestOutcome = (typeof REQUEST_OUTCOMES)[number];

/**
 * What became of a decision in a task's status, in the same words: the task marks only the ones
 * that changed nothing (refused, superseded); a message kept from the model is refused; the rest
 * were applied.
 */
export function decisionOutcome(decision: Decision): Extract<RequestOutcome, 'applied' | 'refused' | 'superseded'> {
  if (decision.outcome) return decision.outcome;
  return decision.action === 'message' && decision.detail.startsWith('not given to the model') ? 'refused' : 'applied';
}

/** How long a message's fate is looked for in the task's status once it is sent. */
const SETTLE_MS = 5_000;

export interface SteeringOutcome {
  outcome: Extract<RequestOutcome, 'applied' | 'queued' | 'recorded' | 'refused'>;
  /** Whether it cancelled a model call in flight (the model is called again with it at once); false: it waits for the next call. */
  cancelledModelCall?: boolean;
  /** Why it was refused, as the task recorded it. */
  reason?: string;
  /** One line for a person. */
  note: string;
}

/** The task's status from its worker, or undefined when none answers within WORKER_PROBE_MS. */
export function statusWithinProbe(client: TaskClient, taskId: string): Promise<TaskStatus | undefined> {
  return client.client.connection.withDeadline(Date.now() + WORKER_PROBE_MS, () => client.handle(taskId).query(statusQuery)).catch(() => undefined);
}

/** The live status, or undefined when no worker answers within WORKER_PROBE_MS (or none polls). */
async function liveStatus(client: TaskClient, taskId: string, taskQueue: string): Promise<TaskStatus | undefined> {
  if ((await client.isServed(taskQueue)) === false) return undefined;
  return statusWithinProbe(client, taskId);
}

/** The decisions in `after` that were not in `before` (the list may have dropped old entries at its front). */
function newDecisions(before: readonly Decision[], after: readonly Decision[]): Decision[] {
  if (before.length === 0) return [...after];
  const last = JSON.stringify(before[before.length - 1]);
  for (let i = after.length - 1; i >= 0; i--) if (JSON.stringify(after[i]) === last) return after.slice(i + 1);
  return [...after];
}

const lastSeq = (events: readonly TaskEvent[]) => events.reduce((max, e) => Math.max(max, e.seq), 0);

/**
 * Sends a message (or an interrupt) and says what the task did with it. With a live worker the
 * task's status is read until it shows the message's decision: refused (a `reject` agent that was
 * busy, an unverified sender), applied (it cancelled the model call in flight) or queued (the model
 * reads it before its next call). Without one the signal is recorded in history (`recorded`).
 */
export async function sendSteering(client: TaskClient, taskId: string, taskQueue: string, input: MessageInput, interrupt: boolean): Promise<SteeringOutcome> {
  const before = await liveStatus(client, taskId, taskQueue);
  if (interrupt) await client.interrupt(taskId, input);
  else await client.message(taskId, input);
  if (!before) {
    return {
      outcome: 'recorded',
      note: `recorded without a worker: no live worker polls queue ${taskQueue}; the task reads it when a worker runs it (see status)`,
    };
  }
  const deadline = Date.now() + SETTLE_MS;
  for (;;) {
    const after = await statusWithinProbe(client, taskId);
    const mine = after ? newDecisions(before.decisions, after.decisions).find((d) => d.action === 'message' && d.by === input.by) : undefined;
    if (after && mine) {
      if (mine.outcome === 'refused' || mine.detail.startsWith('not given to the model')) {
        const reason = mine.detail.replace(/^refused \(sent as a signal\): /, '');
        return { outcome: 'refused', reason, note: `refused: ${reason}` };
      }
      const since = lastSeq(before.events);
      const cancelled = after.events.some((e) => e.seq > since && e.kind === 'guidance_added' && e.detail.startsWith(`${input.by} interrupted the model call in flight`));
      if (cancelled) return { outcome: 'applied', cancelledModelCall: true, note: 'applied: it cancelled the model call in flight; the model is called again with it now' };
      const why = interrupt ? 'no model call was in flight to cancel (a running tool is never cancelled), so ' : '';
      return { outcome: 'queued', ...(interrupt ? { cancelledModelCall: false } : {}), note: `queued: ${why}the model reads it before its next call` };
    }
    if (Date.now() > deadline) {
      return {
        outcome: 'queued',
        ...(interrupt ? { cancelledModelCall: false } : {}),
        note: `queued: sent to the task, which has not recorded it within ${SETTLE_MS / 1000} s (see status)`,
      };
    }
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
}

export interface CancelOutcome {
  outcome: Extract<RequestOutcome, 'applied' | 'queued' | 'recorded'>;
  note: string;
}

/** How long `cancel` waits for a live task to close. */
const CANCEL_SETTLE_MS = 10_000;

/** Asks the task to stop and says whether it did (applied), is stopping (queued) or will when a worker runs it (recorded). */
export async function sendCancel(client: TaskClient, taskId: string, taskQueue: string): Promise<CancelOutcome> {
  const live = (await liveStatus(client, taskId, taskQueue)) !== undefined;
  await client.cancel(taskId);
  if (!live) return { outcome: 'recorded', note: `recorded without a worker: no live worker polls queue ${taskQueue}; the task is cancelled when a worker runs it` };
  const deadline = Date.now() + CANCEL_SETTLE_MS;
  while (Date.now() < deadline) {
    const summary = await client.describe(taskId);
    if (summary.executionStatus !== 'RUNNING') return { outcome: 'applied', note: `applied: the task is ${summary.executionStatus.toLowerCase()}` };
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return { outcome: 'queued', note: `queued: cancellation requested; the task has not closed within ${CANCEL_SETTLE_MS / 1000} s (a running tool call is stopped through its heartbeat)` };
}

/** A decision recorded before this one and not yet judged by any worker, on the same approval or block. */
export interface DecisionAhead {
  action: 'approve' | 'deny' | 'unblock';
  by: string;
}

/**
 * The approve, deny or unblock signals recorded in the task's history after the last workflow task
 * a worker completed (so none has judged them yet) that answer the same approval (or, for an
 * unblock, any block): when a worker runs the task the first valid one is taken and the rest are
 * superseded. Empty when none, or when the history cannot be read.
 */
export async function decisionsAhead(client: TaskClient, taskId: string, action: 'approve' | 'deny' | 'unblock', subject: string | undefined): Promise<DecisionAhead[]> {
  try {
    await startedTaskSettled(client, taskId);
    const events = (await historyRetried(client, taskId)).events ?? [];
    const names = [approveSignal.name, denySignal.name, unblockSignal.name];
    const ahead: DecisionAhead[] = [];
    for (const signal of await undecidedSignals(events, names, client.client.options.loadedDataConverter)) {
      const kind = signal.name === approveSignal.name ? 'approve' : signal.name === denySignal.name ? 'deny' : 'unblock';
      if ((action === 'unblock') !== (kind === 'unblock')) continue;
      const input = signal.input as { approvalId?: unknown; blockId?: unknown; by?: unknown } | null;
      if (kind !== 'unblock' && input?.approvalId !== subject) continue;
      if (kind === 'unblock' && subject !== undefined && input?.blockId !== undefined && input.blockId !== subject) continue;
      ahead.push({ action: kind, by: typeof input?.by === 'string' ? input.by : 'unknown' });
    }
    return ahead;
  } catch {
    return [];
  }
}

/** A workflow task left started longer than this is given up on: it times out at 10 s by default. */
const STARTED_TASK_WAIT_MS = 12_000;

/**
 * Resolves once no workflow task of the task is started, or after STARTED_TASK_WAIT_MS. While one
 * is started the server holds the signals that arrive in a buffer that history does not show; with
 * no live worker that happens when a poll of a worker that just stopped was handed the task, which
 * then times out and the held signals reach history.
 */
async function startedTaskSettled(client: TaskClient, taskId: string): Promise<void> {
  const deadline = Date.now() + STARTED_TASK_WAIT_MS;
  const handle = client.client.workflow.getHandle(taskId);
  while (Date.now() < deadline) {
    const state = (await handle.describe()).raw.pendingWorkflowTask?.state;
    if (state !== temporal.api.enums.v1.PendingWorkflowTaskState.PENDING_WORKFLOW_TASK_STATE_STARTED) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** The task's history, asked again twice after a failed read: a server busy for a moment must not hide the decisions ahead. */
async function historyRetried(client: TaskClient, taskId: string): ReturnType<TaskClient['history']> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await client.history(taskId);
    } catch (err) {
      if (attempt >= 3) throw err;
      await new Promise((resolve) => setTimeout(resolve, 250 * attempt));
    }
  }
}
