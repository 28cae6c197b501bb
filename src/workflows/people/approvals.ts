/**
 * Approvals: a risky call waits for a person; each approval is single use, bound to its id, and
 * leaves the pending list as it is decided (approved, denied or expired), with its record kept.
 * The one workflow home of approvals: asking (with its expiry), judging an approve or deny, deciding,
 * and the durable wait with its expiry. The rules it applies (expiry, refusals, answers) are
 * rules/approvals.ts; everything here but `awaitApproval` is plain state, testable without Temporal.
 */
import { condition } from '@temporalio/workflow';
import type { ApprovalRecord, ApprovalRequest, ApproveInput, DenyInput, PermissionPolicy } from '../../protocol/task';
import {
  type ApprovalPurpose,
  type ApprovalRefusalCode,
  approvalRefusal,
  askText,
  type DecisionRefusal,
  EXPIRY_DECIDER,
  expiryBlockReason,
  expiryDenyReason,
  expiryTerms,
  lateDecisionMessage,
  waitMs,
} from '../../rules/approvals';
import { blockTask, unblockTask } from './blocks';
import { oneLine } from '../base/one-line';
import type { TaskState } from '../state/task-state';

export type ApprovalExtra = Partial<Pick<ApprovalRecord, 'comment' | 'denyReason' | 'editedInput' | 'identity'>>;

/** What an approval asks, before the task gives it an id, a turn, a time and an expiry. */
export type ApprovalAsk = Omit<ApprovalRequest, 'requestedAt' | 'turn' | 'id' | 'expiresAt' | 'onExpiry'>;

export function requestApproval(state: TaskState, request: Omit<ApprovalRequest, 'requestedAt' | 'turn' | 'id'>): ApprovalRequest {
  const approval: ApprovalRequest = {
    ...request,
    id: state.newId(),
    turn: state.turn,
    requestedAt: state.now(),
    // Whose credentials the call would run with: only a verified starter's, never a claimed one's.
    ...(state.starter?.verified ? { onBehalfOf: state.starter.id } : {}),
  };
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

/**
 * Asks for an approval with the policy's expiry (rules/approvals.ts expiryTerms): every approval a
 * turn asks (a confirm, a tool's question, a repeated write) comes through here.
 */
export function askApproval(state: TaskState, ask: ApprovalAsk, policy: PermissionPolicy | undefined, nowMs: number, purpose: ApprovalPurpose): ApprovalRequest {
  const { question, ...rest } = ask;
  // The request's fields in the order they were always recorded (the question, when there is one, last).
  return requestApproval(state, { ...rest, ...expiryTerms(policy, nowMs, purpose), ...(question ? { question } : {}) });
}

/** Why an approve/deny cannot be taken, with its code, or undefined. Read by the updates' validators. */
export function approvalRefusalIn(state: TaskState, input: ApproveInput | DenyInput, kind: 'approve' | 'deny'): DecisionRefusal<ApprovalRefusalCode> | undefined {
  return approvalRefusal({ pending: state.pendingApprovals, decided: state.approvals }, input, kind);
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

/** Nobody answered in time: the approval is decided as expired (which the waiting call reads as "not approved"). */
export function expireApproval(state: TaskState, approval: ApprovalRequest): ApprovalRecord {
  return decideApproval(state, approval.id, 'expired', EXPIRY_DECIDER, { denyReason: expiryDenyReason(approval) });
}

/** An approval with `onExpiry: 'block'` nobody answered blocks the task; returns the block's reason. */
export function blockOnExpiry(state: TaskState, approval: ApprovalRequest): string {
  const reason = expiryBlockReason(approval);
  blockTask(state, 'approval_expired', reason);
  return reason;
}

/** The expiry's block ends: by a late decision (the task unblocks itself) or by a person's unblock ("do not run it"). */
export function endExpiryBlock(state: TaskState, approval: ApprovalRequest): void {
  if (state.phase === 'blocked') unblockTask(state, { by: 'system', message: lateDecisionMessage(approval) });
}

/** The decision recorded for `approvalId`. */
export function decisionOn(state: TaskState, approvalId: string): ApprovalRecord {
  return state.approvals.find((a) => a.id === approvalId)!;
}

/**
 * What people are shown while an approval waits (People implements it). The wait calls these in a
 * fixed order: each publishes a search attribute or memo, or schedules a notice, so the order is
 * the order of the workflow's commands.
 */
export interface ApprovalBoard {
  publishStatus(): void;
  publishPending(): void;
  ask(level: 'confirm' | 'block', code: string, message: string, approvalId?: string): void;
}

/**
 * Waits, durably, for a decision on `approval`, or its expiry (which denies, or blocks first): a
 * condition with the expiry as its timeout. Returns the decision's record.
 */
export async function awaitApproval(state: TaskState, approval: ApprovalRequest, board: ApprovalBoard): Promise<ApprovalRecord> {
  board.publishStatus();
  board.publishPending();
  board.ask('confirm', 'approval_requested', askText(approval), approval.id);
  const answered = await condition(() => !state.isPending(approval.id), waitMs(approval, Date.now()));
  if (!answered) {
    if (approval.onExpiry === 'block') {
      const reason = blockOnExpiry(state, approval);
      board.publishStatus();
      board.publishPending();
      board.ask('block', 'approval_expired', reason, approval.id);
      // Either a late decision or an unblock ends the wait; an unblock counts as "do not run it".
      await condition(() => !state.isPending(approval.id) || state.phase !== 'blocked');
      endExpiryBlock(state, approval);
    }
    if (state.isPending(approval.id)) expireApproval(state, approval);
  }
  board.publishPending();
  board.publishStatus();
  return decisionOn(state, approval.id);
}
