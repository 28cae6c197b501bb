/**
 * What waits on a person, in the task's memo: front ends read it with a describe, which needs no
 * worker, so a decision can be signed and sent while every worker is down (docs/approvers.md).
 */
import type { PendingMemo } from '../../protocol/task';
import { waitingForText } from '../../rules/approvals';
import type { TaskState } from '../state/task-state';

const REASON_CHARS = 300;

export function pendingMemo(state: TaskState): { waitingFor: string | null; pending: PendingMemo } {
  const approvals = state.pendingApprovals.map((a) => ({ id: a.id, tool: a.tool, effect: a.effect, reason: a.reason.slice(0, REASON_CHARS), expiresAt: a.expiresAt }));
  const blocked = state.blocked;
  const block = blocked ? { id: blocked.id, code: blocked.code, reason: blocked.reason.slice(0, REASON_CHARS) } : null;
  const first = state.pendingApprovals[0];
  const waitingFor = first ? waitingForText(first) : block ? `block ${block.id}: ${block.code}` : null;
  return { waitingFor, pending: { approvals, block } };
}
