/**
 * Approvals as rules, apart from the waiting: when an approval expires and what its expiry does,
 * how long the wait lasts, which approve or deny may be taken (and why not, as a code), what the
 * model reads when a person did not approve (denied, or nobody answered in time), and what a tool's
 * question gets back. Pure and sandbox-safe: workflows/people/approvals.ts applies them to the task's
 * state and does the durable wait; unit tests read them without Temporal.
 */
import type { ToolQuestionAnswer } from '../protocol/activity-contracts';
import type { ProofProblemCode } from '../protocol/decision-proof';
import { DEFAULT_APPROVAL_TIMEOUT_MS, type ApprovalRecord, type ApprovalRequest, type ApproveInput, type DenyInput, type Escalation, type PermissionPolicy } from '../protocol/task';
import { toolError, type ToolError } from '../protocol/tool-error';
// Through the shared checks: in a workflow, wire-shapes' exported schemas are frozen (wire-checks.ts).
import { approveProblem, denyProblem } from '../protocol/wire-checks';

// ---------------------------------------------------------------------------------------------
// Refusals: why a person's decision cannot be taken, as a code callers branch on and a sentence
// people read. Nothing branches on the sentence.

/** An approve or deny refused: malformed, already decided, not pending, or a question approved without its answer. */
export type ApprovalRefusalCode = 'bad_request' | 'already_decided' | 'not_pending' | 'answer_required';
/** An unblock refused (blocks.ts): malformed, the task is not blocked, another block is current, or a raise it cannot take. */
export type UnblockRefusalCode = 'bad_request' | 'not_blocked' | 'stale_block' | 'bad_raise';
/**
 * Every refusal of approve, deny and unblock: the above, the proof check's (decision-proof.ts:
 * `proof_expired`, `bad_signature`, ...), the agent's approver policy's (`not_allowed`), and a
 * decision that arrives before the task knows who may decide (`still_starting`).
 */
export type DecisionRefusalCode = ApprovalRefusalCode | UnblockRefusalCode | ProofProblemCode | 'not_allowed' | 'still_starting';

export interface DecisionRefusal<C extends DecisionRefusalCode = DecisionRefusalCode> {
  code: C;
  problem: string;
}

/** The approvals a task holds: those waiting for a person, and those decided (newest kept in state). */
export interface ApprovalBook {
  pending: readonly ApprovalRequest[];
  decided: readonly ApprovalRecord[];
}

/**
 * Why this approve or deny cannot be taken, or undefined: its shape, whether the approval is still
 * pending (single use: a decided one is refused, naming who decided it), and, for a tool's question,
 * whether an approve carries the answer the question requires.
 */
export function approvalRefusal(book: ApprovalBook, request: ApproveInput | DenyInput, kind: 'approve' | 'deny'): DecisionRefusal<ApprovalRefusalCode> | undefined {
  const shape = (kind === 'approve' ? approveProblem : denyProblem)(request);
  if (shape) return { code: 'bad_request', problem: shape };
  if (book.pending.some((a) => a.id === request.approvalId)) {
    const problem = kind === 'approve' ? questionAnswerProblem(book.pending, request as ApproveInput) : undefined;
    return problem === undefined ? undefined : { code: 'answer_required', problem };
  }
  const decided = book.decided.find((a) => a.id === request.approvalId);
  if (decided) return { code: 'already_decided', problem: `approval ${request.approvalId} was already ${decided.decision} by ${decided.by} at ${decided.decidedAt}` };
  const waiting = book.pending.map((a) => a.id).join(', ');
  return { code: 'not_pending', problem: `no pending approval ${request.approvalId} on this task${waiting ? ` (pending: ${waiting})` : ' (none pending)'}` };
}

/** A question with required fields cannot be approved without an answer (the approve validator reads it). */
export function questionAnswerProblem(pending: readonly ApprovalRequest[], request: ApproveInput): string | undefined {
  const approval = pending.find((a) => a.id === request?.approvalId);
  if (!approval?.question || request.editedInput !== undefined) return undefined;
  const required = approval.question.requestedSchema.required;
  if (!Array.isArray(required) || required.length === 0) return undefined;
  return `approval ${approval.id} is a question from ${approval.question.server} ("${approval.question.message.slice(0, 200)}"): approve it with the answer as editedInput (fields ${required.map(String).join(', ')}), or deny to decline`;
}

/**
 * Whether a decision answers what was already resolved (a decided approval, a resolved block): a
 * signal refused for that reason is recorded as `superseded`, not `refused`. Reads anything: a
 * signal's request may be any value.
 */
export function supersedes(kind: 'approve' | 'deny' | 'unblock', request: unknown, book: { decided: readonly ApprovalRecord[]; escalations: readonly Escalation[] }): boolean {
  if (request === null || typeof request !== 'object') return false;
  if (kind === 'unblock') {
    const blockId = (request as { blockId?: unknown }).blockId;
    return typeof blockId === 'string' && book.escalations.some((e) => e.id === blockId && e.resolved !== undefined);
  }
  const approvalId = (request as { approvalId?: unknown }).approvalId;
  return typeof approvalId === 'string' && book.decided.some((a) => a.id === approvalId);
}

// ---------------------------------------------------------------------------------------------
// Expiry: each approval names its expiry and what it does, from the agent's policy.

/** What is asked: a call to run (the gate's confirm), a tool's question, or a write the effect journal says already ran. */
export type ApprovalPurpose = 'call' | 'question' | 'repeat';

/** Who decides an approval nobody answered. */
export const EXPIRY_DECIDER = 'expiry';

/**
 * When an approval asked at `nowMs` expires, and what its expiry does: the policy's timeout (default
 * DEFAULT_APPROVAL_TIMEOUT_MS) and `onExpiry` (default deny). A repeat is never run by a clock and
 * never blocks the task: it is denied.
 */
export function expiryTerms(policy: PermissionPolicy | undefined, nowMs: number, purpose: ApprovalPurpose): Pick<ApprovalRequest, 'expiresAt' | 'onExpiry'> {
  return {
    expiresAt: new Date(nowMs + (policy?.approvalTimeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS)).toISOString(),
    onExpiry: purpose === 'repeat' ? 'deny' : (policy?.onExpiry ?? 'deny'),
  };
}

/** How long to wait at `nowMs` for a decision before the approval expires: at least 1 ms (a timer of 0 would never fire). */
export function waitMs(approval: Pick<ApprovalRequest, 'expiresAt'>, nowMs: number): number {
  return Math.max(1, Date.parse(approval.expiresAt) - nowMs);
}

/** The block an approval with `onExpiry: 'block'` raises when nobody answered it in time. */
export function expiryBlockReason(approval: Pick<ApprovalRequest, 'id' | 'tool' | 'expiresAt'>): string {
  return `Nobody answered approval ${approval.id} (${approval.tool}) before ${approval.expiresAt}.`;
}

/** The unblock that ends an expiry's block when a late decision arrives (an unblock by a person ends it too). */
export function lateDecisionMessage(approval: Pick<ApprovalRequest, 'id'>): string {
  return `approval ${approval.id} was decided`;
}

/** Why an expired approval counts as denied. */
export function expiryDenyReason(approval: Pick<ApprovalRequest, 'expiresAt'>): string {
  return `no decision before ${approval.expiresAt}`;
}

// ---------------------------------------------------------------------------------------------
// What people read while an approval waits.

/** The memo's `waitingFor` line for an approval. */
export function waitingForText(approval: Pick<ApprovalRequest, 'id' | 'tool' | 'input'>): string {
  return `approval ${approval.id}: ${approval.tool} ${JSON.stringify(approval.input).slice(0, 200)}`;
}

/** The notice a person is sent when an approval is asked. */
export function askText(approval: Pick<ApprovalRequest, 'tool' | 'input' | 'reason'>): string {
  return `${approval.tool} ${JSON.stringify(approval.input).slice(0, 200)}: ${approval.reason}`;
}

// ---------------------------------------------------------------------------------------------
// The answer: what the waiting call is told.

/** What the model is told not to do after a call it asked for was not approved. */
export const NOT_APPROVED_HINT = 'Do not retry it. Read-only tools are still allowed; otherwise tell the user what you wanted to do.';

/**
 * A call that was not approved, as the model reads it: `denied_by_person` (a person said no) or
 * `approval_expired` (nobody answered in time). `said`: what happened, in the caller's words for each.
 */
export function notApprovedError(decision: Pick<ApprovalRecord, 'decision'>, said: { expired: string; denied: string }, hint: string = NOT_APPROVED_HINT): ToolError {
  const expired = decision.decision === 'expired';
  return toolError('policy', expired ? 'approval_expired' : 'denied_by_person', expired ? said.expired : said.denied, hint);
}

/** A tool's question, answered: approved with the answer (accept), denied (decline), expired (MCP's cancel: nobody answered). */
export function questionAnswer(decision: Pick<ApprovalRecord, 'decision' | 'editedInput'>, message: string): ToolQuestionAnswer {
  if (decision.decision === 'approved') return { message, action: 'accept', content: (decision.editedInput ?? {}) as Record<string, unknown> };
  return { message, action: decision.decision === 'denied' ? 'decline' : 'cancel' };
}
