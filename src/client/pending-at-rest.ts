/**
 * What waits on a person, read without a worker: the task's memo (`pending`, `waitingFor`) through a
 * describe. Front ends fall back to it when no worker answers the status query, so a person can
 * still see and answer a pending approval or block while every worker is down. The memo holds no
 * arguments; the first approval's appear in `waitingFor` (shortened to 200 characters), and only
 * when they are there whole (or as a blob reference, read back hash-checked) are they shown.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../protocol/canonical-json';
import type { Client } from '@temporalio/client';
import { isMarker, type Marker } from '../protocol/blob-marker';
import type { PendingMemo } from '../protocol/task';
import type { ApprovalArguments } from './approval-arguments';
import { describeAtRest } from './send-decision';

export interface ApprovalAtRest {
  id: string;
  tool: string;
  effect: string;
  reason: string;
  expiresAt: string;
  /** The exact arguments, when the memo holds them whole (resolved from the blob store when stored there). */
  input?: unknown;
  /** Set when the arguments were stored in the blob store: the marker the task holds. */
  storedAs?: Marker;
  /** Why the arguments cannot be shown without a worker. */
  argumentsProblem?: string;
}

export interface PendingAtRest {
  executionStatus: string;
  taskQueue: string;
  approvals: ApprovalAtRest[];
  block: PendingMemo['block'];
}

/** Undefined for a task whose memo does not say what is pending (started before pending-in-memo). */
export async function pendingAtRest(client: Client, args: ApprovalArguments, taskId: string): Promise<PendingAtRest | undefined> {
  const task = await describeAtRest(client, taskId);
  if (!task.pending) return undefined;
  const approvals = await Promise.all(
    task.pending.approvals.map(async (a, index): Promise<ApprovalAtRest> => {
      const shown: ApprovalAtRest = { id: a.id, tool: a.tool, effect: a.effect, reason: a.reason, expiresAt: a.expiresAt };
      const input = index === 0 ? wholeArguments(task.waitingFor, a) : undefined;
      if (input === undefined) {
        return { ...shown, argumentsProblem: 'no worker is running this task, and its record holds these arguments only shortened; they are shown once a worker runs it' };
      }
      if (!isMarker(input)) return { ...shown, input };
      try {
        return { ...shown, input: await args.read(taskId, input), storedAs: input };
      } catch (err) {
        return { ...shown, argumentsProblem: `the arguments (${input.bytes.toLocaleString('en-US')} characters) are stored in the blob store and cannot be read here: ${(err as Error).message}` };
      }
    }),
  );
  return { executionStatus: task.executionStatus, taskQueue: task.taskQueue, approvals, block: task.pending.block };
}

/**
 * The first approval's arguments from `waitingFor` (`approval ID: TOOL JSON`, the JSON cut at 200
 * characters), or undefined when they were cut: a cut JSON object never parses whole.
 */
export function wholeArguments(waitingFor: string | undefined, approval: { id: string; tool: string }): unknown {
  const prefix = `approval ${approval.id}: ${approval.tool} `;
  if (!waitingFor?.startsWith(prefix)) return undefined;
  try {
    const value: unknown = JSON.parse(waitingFor.slice(prefix.length));
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** A hash of arguments as a person read them (key order ignored): the form that approves them carries it. */
export function argumentsHash(value: unknown): string {
  return createHash('sha256')
    .update(canonicalJson(value, { strict: false }))
    .digest('base64url');
}
