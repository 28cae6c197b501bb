/**
 * Approvals: a risky call waits for a person; each approval is single use, bound to its id, and
 * leaves the pending list as it is decided (approved, denied or expired), with its record kept.
 */
import type { ApprovalRecord, ApprovalRequest, ApproveInput, DenyInput } from '../protocol/task';
import { approveProblem, denyProblem } from './input-checks';
import { oneLine } from './one-line';
import type { TaskState } from './task-state';

export type ApprovalExtra = Partial<Pick<ApprovalRecord, 'comment' | 'denyReason' | 'editedInput' | 'identity'>>;

export function requestApproval(state: TaskState, request: Omit<ApprovalRequest, 'requestedAt' | 'turn' | 'id'>): ApprovalRequest {
  const approval: ApprovalRequest = { ...request, id: state.newId(), turn: state.turn, requestedAt: state.now() };
  state.pendingApprovals.push(approval);
  state.phase = 'awaiting_approval';
  state.escalations.push({ id: approval.id, level: 'confirm', code: 'approval_requested', reason: request.reason, turn: state.turn, at: approval.requestedAt });
  state.audit.bound('escalation', state.escalations, (e) => !e.resolved);
  state.audit.record('approval_requested', `${request.tool} ${oneLine(JSON.stringify(request.input) ?? '')} (approval ${approval.id})`, {
    tool: request.tool,
    toolUseId: request.toolUseId,
  });
  return approval;
}

/** Why an approve/deny cannot be taken, or undefined. Read by the updates' validators. */
export function approvalProblem(state: TaskState, input: ApproveInput | DenyInput, kind: 'approve' | 'deny'): string | undefined {
  const shape = kind === 'approve' ? approveProblem(input) : denyProblem(input);
  if (shape) return shape;
  if (state.pendingApprovals.some((a) => a.id === input.approvalId)) return undefined;
  const decided = state.approvals.find((a) => a.id === input.approvalId);
  if (decided) return `approval ${input.approvalId} was already ${decided.decision} by ${decided.by} at ${decided.decidedAt}`;
  const waiting = state.pendingApprovals.map((a) => a.id).join(', ');
  return `no pending approval ${input.approvalId} on this task${waiting ? ` (pending: ${waiting})` : ' (none pending)'}`;
}

/** Single use: the approval leaves the pending list as it is decided. */
export function decideApproval(state: TaskState, approvalId: string, decision: ApprovalRecord['decision'], by: string, extra: ApprovalExtra = {}): ApprovalRecord {
  const index = state.pendingApprovals.findIndex((a) => a.id === approvalId);
  const [approval] = state.pendingApprovals.splice(index, 1);
  const record: ApprovalRecord = { ...approval!, decision, by, decidedAt: state.now(), ...extra };
  state.approvals.push(record);
  const escalation = state.escalations.find((e) => e.id === approvalId);
  const how = `${decision}${extra.editedInput !== undefined ? ' with edited arguments' : ''}${extra.comment ? `: ${oneLine(extra.comment)}` : ''}${extra.denyReason ? `: ${oneLine(extra.denyReason)}` : ''}`;
  if (escalation) escalation.resolved = { by, at: record.decidedAt, how };
  if (decision !== 'expired') {
    state.decisions.push({
      at: record.decidedAt,
      by,
      action: decision === 'approved' ? 'approve' : 'deny',
      detail: `${approval!.tool} (${approvalId}) ${how}`,
      ...(extra.identity ? { identity: extra.identity } : {}),
    });
  }
  state.audit.bound('approval', state.approvals);
  state.audit.bound('decision', state.decisions);
  if (state.pendingApprovals.length === 0 && state.phase === 'awaiting_approval') state.phase = 'running_tools';
  state.audit.record('approval_decided', `${approval!.tool} ${how} by ${by}`, { tool: approval!.tool, toolUseId: approval!.toolUseId });
  return record;
}
