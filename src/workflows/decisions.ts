/**
 * A person's decisions (approve, deny, unblock), by one set of rules whichever way they arrive: as
 * an update (validated before anything reaches history, answered at once) or as a signal
 * (recorded by the server even when no worker runs, judged here when the task runs). A signal
 * that breaks a rule is kept in the audit trail as refused, one that answers something already
 * resolved as superseded; neither changes anything else, and neither can fail the workflow task.
 */
import { ApplicationFailure, isCancellation, log } from '@temporalio/workflow';
import type { AgentActivities } from '../protocol/activity-contracts';
import type { ApproveInput, DenyInput, UnblockInput } from '../protocol/task';
import type { ApproverGate } from './approver-gate';
import type { TaskState } from './task-state';
import { questionAnswerProblem } from './tool-questions';
import { approvalProblem, decideApproval } from './approvals';
import { unblockProblem, unblockTask } from './blocks';

export type DecisionKind = 'approve' | 'deny' | 'unblock';
export type DecisionRequest<K extends DecisionKind> = K extends 'unblock' ? UnblockInput : K extends 'approve' ? ApproveInput : DenyInput;

export interface DecisionContext {
  state: TaskState;
  agent: string;
  /** The task's blob scope (rules v2). */
  scope: string | undefined;
  /** Tasks that check who decides (verified approvers); the gate is known once the manifest is. */
  verifiesApprovers: boolean;
  gate(): ApproverGate | undefined;
  prepareToolCall: AgentActivities['prepareToolCall'];
  decisionReceivedAt: AgentActivities['decisionReceivedAt'];
}

export class Decisions {
  constructor(private readonly ctx: DecisionContext) {}

  /** Why this decision cannot be taken now (judging its proof at `atMs`), or undefined. The update validators' rules. */
  problem<K extends DecisionKind>(kind: K, request: DecisionRequest<K>, atMs: number): string | undefined {
    const { state } = this.ctx;
    if (kind === 'unblock') {
      const unblock = request as UnblockInput;
      return unblockProblem(state, unblock) ?? this.gateProblem((gate) => gate.problem('unblock', unblock, state.blocked?.id ?? '', { kind: 'unblock' }, atMs));
    }
    const decision = request as ApproveInput | DenyInput;
    const problem = approvalProblem(state, decision, kind as 'approve' | 'deny') ?? (kind === 'approve' ? questionAnswerProblem(state.pendingApprovals, decision as ApproveInput) : undefined);
    if (problem) return problem;
    return this.gateProblem((gate) => {
      const approval = state.pendingApprovals.find((a) => a.id === decision.approvalId);
      if (!approval) return `no pending approval ${decision.approvalId}`;
      return gate.problem(kind as 'approve' | 'deny', decision, approval.id, { kind: kind as 'approve' | 'deny', tool: approval.tool, effect: approval.effect }, atMs);
    });
  }

  /** Takes an approve the validator accepted; an edit is checked against the tool's schema first. */
  async approve(request: ApproveInput): Promise<{ approvalId: string; decision: 'approved' }> {
    const { state, agent, scope } = this.ctx;
    let editedInput: unknown;
    if (request.editedInput !== undefined) {
      const approval = state.pendingApprovals.find((a) => a.id === request.approvalId)!;
      // A tool's question is answered with its answer, checked against what the question asked for.
      const prepared = await this.ctx.prepareToolCall({
        agent,
        tool: approval.tool,
        input: request.editedInput,
        ...(scope ? { scope } : {}),
        ...(approval.question ? { answerSchema: approval.question.requestedSchema } : {}),
      });
      if (!prepared.ok) {
        throw ApplicationFailure.create({ message: `the edited arguments are invalid: ${prepared.error.detail}`, type: 'invalid_edit', nonRetryable: true });
      }
      // The check above awaited an activity: someone else may have decided meanwhile.
      if (!state.isPending(request.approvalId)) {
        throw ApplicationFailure.create({ message: `approval ${request.approvalId} was decided while the edit was checked`, type: 'stale_approval', nonRetryable: true });
      }
      editedInput = prepared.input;
    }
    const gate = this.ctx.gate();
    decideApproval(state, request.approvalId, 'approved', request.by, {
      ...(request.comment ? { comment: request.comment } : {}),
      ...(editedInput !== undefined ? { editedInput } : {}),
      ...(gate ? { identity: gate.identityOf(request) } : {}),
    });
    return { approvalId: request.approvalId, decision: 'approved' };
  }

  deny(request: DenyInput): { approvalId: string; decision: 'denied' } {
    const gate = this.ctx.gate();
    decideApproval(this.ctx.state, request.approvalId, 'denied', request.by, { denyReason: request.reason, ...(gate ? { identity: gate.identityOf(request) } : {}) });
    return { approvalId: request.approvalId, decision: 'denied' };
  }

  unblock(request: UnblockInput): { resumed: true; escalationId: string } {
    const escalation = unblockTask(this.ctx.state, request, this.ctx.gate()?.identityOf(request));
    return { resumed: true, escalationId: escalation.id };
  }

  /**
   * A decision that arrived as a signal: judged by the same rules, its proof at the time the server
   * recorded it (the signal may have waited for a worker far longer than a proof lives).
   */
  async fromSignal<K extends DecisionKind>(kind: K, request: DecisionRequest<K>): Promise<void> {
    const by = (request as { by?: unknown } | null)?.by;
    try {
      let problem = this.problem(kind, request, Date.now());
      const signature = (request as { proof?: { signature?: unknown } }).proof?.signature;
      if (problem && typeof signature === 'string' && /proof expired/.test(problem)) {
        const receivedAt = await this.ctx.decisionReceivedAt({ signal: kind, signature });
        if (receivedAt !== null && receivedAt < Date.now()) problem = this.problem(kind, request, receivedAt);
      }
      if (problem) return this.ctx.state.recordUntakenDecision(kind, by, this.superseded(kind, request) ? 'superseded' : 'refused', problem);
      if (kind === 'approve') await this.approve(request as ApproveInput);
      else if (kind === 'deny') this.deny(request as DenyInput);
      else this.unblock(request as UnblockInput);
    } catch (err) {
      if (isCancellation(err)) throw err;
      // A signal cannot be refused to its sender, and a throw here would fail the workflow task.
      const problem = err instanceof Error ? err.message : String(err);
      log.warn('A decision sent as a signal could not be taken', { kind, problem });
      this.ctx.state.recordUntakenDecision(kind, by, this.superseded(kind, request) ? 'superseded' : 'refused', problem);
    }
  }

  /** Whether the approval or block this decision names was already resolved. */
  private superseded(kind: DecisionKind, request: unknown): boolean {
    const { state } = this.ctx;
    if (request === null || typeof request !== 'object') return false;
    if (kind === 'unblock') {
      const blockId = (request as UnblockInput).blockId;
      return typeof blockId === 'string' && state.escalations.some((e) => e.id === blockId && e.resolved !== undefined);
    }
    const approvalId = (request as ApproveInput).approvalId;
    return typeof approvalId === 'string' && state.approvals.some((a) => a.id === approvalId);
  }

  private gateProblem(check: (gate: ApproverGate) => string | undefined): string | undefined {
    if (!this.ctx.verifiesApprovers) return undefined;
    const gate = this.ctx.gate();
    return gate ? check(gate) : 'the task is still starting';
  }
}
