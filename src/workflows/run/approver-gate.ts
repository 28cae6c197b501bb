/**
 * Verified approvers, inside the workflow: is this decision signed by a front end the worker
 * trusts, for this task, this approval (or block) and this content, and does the agent's policy let
 * this person take it? Plain and deterministic; the update validators call it, so a refused
 * decision writes nothing to history. See docs/approvers.md for the trust model.
 */
import { approverProblem, type ApproverPolicy, type PolicedDecision } from '../../protocol/approver-policy';
import { checkProof, CURRENT_PROOF_FORMAT, type DecisionKind, type DecisionProof, type ProofFormat, type ProofProblemCode, type TrustedKey } from '../../protocol/decision-proof';
import type { ApproverStatus, MessageInput, TaskInput, VerifiedIdentity } from '../../protocol/task';

/** Nonces of signed messages remembered per task (a proof lives at most an hour, so this is plenty). */
export const MESSAGE_NONCE_MEMORY = 500;

/** The decisions the gate judges for the validators (a message and a start are judged as identities). */
export type GatedDecisionKind = Exclude<DecisionKind, 'start' | 'message' | 'interrupt'>;

/** Why the gate refuses a decision: the proof check's code, or the policy's (`not_allowed`). */
export interface GateRefusal {
  code: ProofProblemCode | 'not_allowed';
  problem: string;
}

interface DecisionRequest {
  by: string;
  roles?: string[];
  proof?: DecisionProof;
}

export class ApproverGate {
  constructor(
    readonly taskId: string,
    readonly keys: readonly TrustedKey[],
    readonly policy: ApproverPolicy | undefined,
    /** The task's starter (forbidSelfApproval compares against it). */
    public starter: VerifiedIdentity | undefined,
    /**
     * The claim formats accepted: v2 only (every field but the proof signed), as the workflow takes
     * them; the retired v1 is accepted only by a gate given it (the tests of the format itself).
     */
    readonly formats: readonly ProofFormat[] = [CURRENT_PROOF_FORMAT],
  ) {}

  /** Verification is on whenever the worker trusts at least one key; without keys the task runs in dev mode. */
  get verifying(): boolean {
    return this.keys.length > 0;
  }

  /**
   * Why this approve/deny/unblock must be refused (its code and the sentence a person reads), or
   * undefined. For validators: never throws. A proof's refusal keeps the proof check's code
   * (`proof_expired`, `bad_signature`, ...); the agent's policy refuses with `not_allowed`.
   */
  refusal(kind: GatedDecisionKind, request: DecisionRequest, subject: string, decision: PolicedDecision, nowMs: number): GateRefusal | undefined {
    try {
      const roles = request.roles ?? [];
      if (this.verifying) {
        const check = checkProof({ kind, taskId: this.taskId, subject, by: request.by, roles, request: request as unknown as Record<string, unknown> }, request.proof, this.keys, nowMs, this.formats);
        if (!check.ok) return { code: check.code, problem: check.problem };
      }
      const problem = approverProblem(this.policy, decision, { id: request.by, roles }, this.starter?.id);
      return problem === undefined ? undefined : { code: 'not_allowed', problem };
    } catch (err) {
      return { code: 'unreadable', problem: `the decision could not be checked: ${err instanceof Error ? err.message : String(err)}` };
    }
  }

  /** The refusal's sentence alone, or undefined. */
  problem(kind: GatedDecisionKind, request: DecisionRequest, subject: string, decision: PolicedDecision, nowMs: number): string | undefined {
    return this.refusal(kind, request, subject, decision, nowMs)?.problem;
  }

  /** The identity to record with a decision its validator accepted. */
  identityOf(request: DecisionRequest): VerifiedIdentity {
    return {
      id: request.by,
      roles: [...(request.roles ?? [])],
      verified: this.verifying,
      ...(this.verifying && request.proof ? { keyId: request.proof.keyId } : {}),
    };
  }

  /**
   * A message is a signal: it cannot be refused, only judged. The identity comes back with a
   * `problem` when the message must not reach the model (unsigned, forged, expired, replayed, or
   * from someone the policy does not list).
   */
  messageIdentity(message: MessageInput, nowMs: number, seenNonces: readonly string[], interrupt = false): VerifiedIdentity {
    const roles = Array.isArray(message.roles) ? message.roles.filter((r) => typeof r === 'string') : [];
    const base = { id: message.by, roles, verified: false };
    try {
      if (this.verifying) {
        const kind = interrupt ? 'interrupt' : 'message';
        const check = checkProof(
          { kind, taskId: this.taskId, subject: '', by: message.by, roles, request: message as unknown as Record<string, unknown> },
          message.proof,
          this.keys,
          nowMs,
          this.formats,
        );
        if (!check.ok) return { ...base, problem: check.problem };
        if (seenNonces.includes(message.proof!.nonce!)) return { ...base, problem: `this signed message (nonce ${message.proof!.nonce}) was already taken` };
        const problem = approverProblem(this.policy, { kind: 'message' }, base, this.starter?.id);
        return { ...base, verified: true, keyId: check.keyId, ...(problem ? { problem } : {}) };
      }
      const problem = approverProblem(this.policy, { kind: 'message' }, base, this.starter?.id);
      return { ...base, ...(problem ? { problem } : {}) };
    } catch (err) {
      return { ...base, problem: `the message could not be checked: ${err instanceof Error ? err.message : String(err)}` };
    }
  }

  /**
   * Who started the task, checked against the start claim at the time the server accepted the start
   * and in the namespace the task runs in (a start claim names it: one signed for another namespace,
   * or signed without one, does not verify). `problem` is set when the task verifies approvers and
   * the claim is missing or invalid. Single use is checked after this (claimedStarter).
   */
  starterOf(input: TaskInput, startMs: number, namespace: string): VerifiedIdentity {
    const id = typeof input.startedBy === 'string' && input.startedBy ? input.startedBy : 'unknown';
    const roles = input.startedByRoles ?? [];
    if (!this.verifying) return { id, roles, verified: false };
    if (input.startedBy === undefined) return { id, roles, verified: false, problem: 'the task was started without `startedBy` and a signed start claim' };
    const check = checkProof(
      { kind: 'start', taskId: this.taskId, subject: '', by: id, roles, request: input as unknown as Record<string, unknown>, namespace },
      input.startProof,
      this.keys,
      startMs,
      this.formats,
    );
    return check.ok ? { id, roles, verified: true, keyId: check.keyId } : { id, roles, verified: false, problem: check.problem };
  }

  status(): ApproverStatus {
    return {
      verification: this.verifying ? 'signed' : 'unverified',
      keyIds: this.keys.map((k) => k.id),
      ...(this.policy?.approvers ? { rules: this.policy.approvers } : {}),
      ...(this.policy?.forbidSelfApproval ? { forbidSelfApproval: true } : {}),
    };
  }
}
