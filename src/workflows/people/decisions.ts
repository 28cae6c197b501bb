/**
 * A person's decisions (approve, deny, unblock), by one set of rules whichever way they arrive: as
 * an update (validated before anything reaches history, answered at once) or as a signal
 * (recorded by the server even when no worker runs, judged here when the task runs). A signal
 * that breaks a rule is kept in the audit trail as refused, one that answers something already
 * resolved as superseded; neither changes anything else, and neither can fail the workflow task.
 */
import { ApplicationFailure, isCancellation, log } from '@temporalio/workflow';
import type { AgentActivities } from '../../protocol/activity-contracts';
import type { AgentManifest } from '../../protocol/agent-manifest';
import type { ApproveInput, DenyInput, UnblockInput } from '../../protocol/task';
import type { ApproverGate } from '../run/approver-gate';
import type { TaskState } from '../state/task-state';
import { type DecisionRefusal, supersedes } from '../../rules/approvals';
import { approvalRefusalIn, decideApproval } from './approvals';
import { rebindBlock, unblockRefusal, unblockTask } from './blocks';

export type DecisionKind = 'approve' | 'deny' | 'unblock';
export type DecisionRequest<K extends DecisionKind> = K extends 'unblock' ? UnblockInput : K extends 'approve' ? ApproveInput : DenyInput;

export interface DecisionContext {
  state: TaskState;
  agent: string;
  /** The task's blob scope. */
  scope: string;
  /** Who may decide; known once the manifest is (a decision before that is refused: still starting). */
  gate(): ApproverGate | undefined;
  prepareToolCall: AgentActivities['prepareToolCall'];
  decisionReceivedAt: AgentActivities['decisionReceivedAt'];
  /** The agent as the worker taking the decision has it now (an unblock resumes on that worker's tools). */
  describeAgentNow(): Promise<AgentManifest>;
  /** The pending memo and status, told again after a block was raised again in the unblock's place. */
  published(): void;
}

export class Decisions {
  private queue: Promise<void> = Promise.resolve();

  constructor(private readonly ctx: DecisionContext) {}

  /**
   * Why this decision cannot be taken now (judging its proof at `atMs`), with its code, or undefined.
   * The update validators' rules: the decision's own (approvals.ts, blocks.ts), then who may take it
   * (the approver gate: proof and policy).
   */
  refusal<K extends DecisionKind>(kind: K, request: DecisionRequest<K>, atMs: number): DecisionRefusal | undefined {
    const { state } = this.ctx;
    if (kind === 'unblock') {
      const unblock = request as UnblockInput;
      return unblockRefusal(state, unblock) ?? this.gateRefusal((gate) => gate.refusal('unblock', unblock, state.blocked?.id ?? '', { kind: 'unblock' }, atMs));
    }
    const decision = request as ApproveInput | DenyInput;
    const refused = approvalRefusalIn(state, decision, kind as 'approve' | 'deny');
    if (refused) return refused;
    return this.gateRefusal((gate) => {
      const approval = state.pendingApprovals.find((a) => a.id === decision.approvalId);
      if (!approval) return { code: 'not_pending', problem: `no pending approval ${decision.approvalId}` };
      return gate.refusal(kind as 'approve' | 'deny', decision, approval.id, { kind: kind as 'approve' | 'deny', tool: approval.tool, effect: approval.effect }, atMs);
    });
  }

  /** Why this decision cannot be taken now, or undefined: the refusal's sentence, what a rejected update says. */
  problem<K extends DecisionKind>(kind: K, request: DecisionRequest<K>, atMs: number): string | undefined {
    return this.refusal(kind, request, atMs)?.problem;
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
        scope,
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

  /**
   * Takes an unblock the validator accepted, unless the agent changed since the block was raised:
   * then the block is raised again with the difference, and the unblock is refused naming it.
   */
  unblock(request: UnblockInput): Promise<{ resumed: true; escalationId: string }> {
    return this.inOrder(async () => {
      // Another decision may have been taken while this one waited its turn.
      const refused = unblockRefusal(this.ctx.state, request) ?? (await this.agentChangeRefusal());
      if (refused) throw ApplicationFailure.create({ message: refused.problem, type: refused.code, nonRetryable: true });
      return this.resume(request);
    });
  }

  /**
   * Takes decisions that wait on the worker (an unblock's look at the agent, a signal's proof time)
   * one at a time, in the order they arrived: a later one never overtakes an earlier one.
   */
  private inOrder<T>(take: () => Promise<T>): Promise<T> {
    const taken = this.queue.then(take);
    this.queue = taken.then(
      () => undefined,
      () => undefined,
    );
    return taken;
  }

  private resume(request: UnblockInput): { resumed: true; escalationId: string } {
    const escalation = unblockTask(this.ctx.state, request, this.ctx.gate()?.identityOf(request));
    return { resumed: true, escalationId: escalation.id };
  }

  /** Why the current block cannot be resumed on the worker's agent as it is now (blocks.ts rebindBlock), or undefined. */
  private async agentChangeRefusal(): Promise<{ code: 'agent_changed' | 'stale_block'; problem: string } | undefined> {
    const { state } = this.ctx;
    const seen = state.blocked;
    if (!seen?.bound) return undefined;
    const current = await this.ctx.describeAgentNow();
    // The check awaited the worker: someone else may have unblocked meanwhile.
    if (state.blocked !== seen) return { code: 'stale_block', problem: `block ${seen.id} was resolved while the agent was checked` };
    const rebound = rebindBlock(state, current);
    if (!rebound) return undefined;
    this.ctx.published();
    return {
      code: 'agent_changed',
      problem: `the agent changed since block ${seen.id} was raised (${rebound.changes.join('; ')}); it was raised again as block ${rebound.block.id}: look at it and unblock that one to go on under the new agent`,
    };
  }

  /**
   * A decision that arrived as a signal: judged by the same rules, its proof at the time the server
   * recorded it (the signal may have waited for a worker far longer than a proof lives).
   */
  fromSignal<K extends DecisionKind>(kind: K, request: DecisionRequest<K>): Promise<void> {
    return this.inOrder(() => this.takeSignal(kind, request));
  }

  private async takeSignal<K extends DecisionKind>(kind: K, request: DecisionRequest<K>): Promise<void> {
    const by = (request as { by?: unknown } | null)?.by;
    try {
      let refused = this.refusal(kind, request, Date.now());
      const signature = (request as { proof?: { signature?: unknown } }).proof?.signature;
      // Only an expired proof is judged again, at the time the server recorded the signal.
      if (refused?.code === 'proof_expired' && typeof signature === 'string') {
        const receivedAt = await this.ctx.decisionReceivedAt({ signal: kind, signature });
        if (receivedAt !== null && receivedAt < Date.now()) refused = this.refusal(kind, request, receivedAt);
      }
      if (refused) return this.recordUntaken(kind, request, by, refused.problem);
      if (kind === 'approve') await this.approve(request as ApproveInput);
      else if (kind === 'deny') this.deny(request as DenyInput);
      else {
        const changed = await this.agentChangeRefusal();
        if (changed) return this.recordUntaken(kind, request, by, changed.problem);
        this.resume(request as UnblockInput);
      }
    } catch (err) {
      if (isCancellation(err)) throw err;
      // A signal cannot be refused to its sender, and a throw here would fail the workflow task.
      const problem = err instanceof Error ? err.message : String(err);
      log.warn('A decision sent as a signal could not be taken', { kind, problem });
      this.recordUntaken(kind, request, by, problem);
    }
  }

  /** A signalled decision not taken: `superseded` when what it names was already resolved, else `refused`. */
  private recordUntaken(kind: DecisionKind, request: unknown, by: unknown, problem: string): void {
    const { state } = this.ctx;
    const outcome = supersedes(kind, request, { decided: state.approvals, escalations: state.escalations }) ? 'superseded' : 'refused';
    state.recordUntakenDecision(kind, by, outcome, problem);
  }

  private gateRefusal(check: (gate: ApproverGate) => DecisionRefusal | undefined): DecisionRefusal | undefined {
    const gate = this.ctx.gate();
    return gate ? check(gate) : { code: 'still_starting', problem: 'the task is still starting' };
  }
}
