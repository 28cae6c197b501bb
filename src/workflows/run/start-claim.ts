/**
 * What a signed start proves: the proof covers the whole input, the namespace and a nonce
 * (claim v2, checked by the approver gate), it is used once (its first use is recorded in the
 * worker's shared store: the startClaimProblem activity, which a deleted execution does not undo), and a fork's starter is
 * someone the origin agent's policy lets branch it (`approvers.branch`, a verified signer where
 * the agent requires signed starts).
 */
import { ApplicationFailure, proxyActivities, type WorkflowInfo } from '@temporalio/workflow';
import type { AgentActivities } from '../../protocol/activity-contracts';
import type { AgentManifest } from '../../protocol/agent-manifest';
import { approverProblem, branchProblem } from '../../protocol/approver-policy';
import { MAX_PROOF_LIFETIME_MS } from '../../protocol/decision-proof';
import type { TaskInput, VerifiedIdentity } from '../../protocol/task';
import { toolError } from '../../protocol/tool-error';
import { shortActivityOptions } from '../base/activity-options';
import type { TaskState } from '../state/task-state';

// A few quick attempts (a store that hiccups; visibility lag for older inputs), then the claim counts as unchecked.
const { startClaimProblem } = proxyActivities<AgentActivities>({
  ...shortActivityOptions,
  retry: { initialInterval: '100ms', backoffCoefficient: 1.5, maximumInterval: '2s', maximumAttempts: 15 },
});

/** The starter, unverified (with the reason) when the start proof was already used (recorded by another task chain). */
export async function claimedStarter(starter: VerifiedIdentity, input: TaskInput, info: WorkflowInfo): Promise<VerifiedIdentity> {
  if (!starter.verified || !input.startProof) return starter;
  const unverified = (problem: string): VerifiedIdentity => ({ id: starter.id, roles: starter.roles, verified: false, problem });
  try {
    const proof = input.startProof;
    const problem = await startClaimProblem({
      taskId: info.workflowId,
      runId: info.runId,
      firstRunId: info.firstExecutionRunId,
      earliestSignedMs: Date.parse(proof.expiresAt) - MAX_PROOF_LIFETIME_MS,
      // The proof verified for this namespace with a nonce (approver-gate.ts): its single-use record is named by them.
      namespace: info.namespace,
      keyId: proof.keyId,
      ...(proof.nonce !== undefined ? { nonce: proof.nonce } : {}),
      expiresAt: proof.expiresAt,
    });
    return problem ? unverified(problem) : starter;
  } catch (err) {
    const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : String(err);
    return unverified(`the start proof's single use could not be recorded for task id ${info.workflowId} (${cause}); it does not count`);
  }
}

/** The failure that refuses a fork its origin agent's policy does not let this starter make, or undefined. */
export function forkRefusal(manifest: AgentManifest, input: TaskInput, starter: VerifiedIdentity, verifying: boolean): ApplicationFailure | undefined {
  if (!input.forkOf) return undefined;
  const problem = branchProblem(manifest.policy, 'fork', { id: starter.id, roles: starter.roles, verified: starter.verified }, verifying);
  if (!problem) return undefined;
  const detail = starter.problem && !starter.verified && verifying ? `${problem} (${starter.problem})` : problem;
  const error = toolError('policy', 'branch_refused', detail, 'Fork or rewind through a front end holding a key the task trusts, as someone approvers.branch names.');
  return ApplicationFailure.create({ message: error.detail, type: error.error_class, nonRetryable: true, details: [error] });
}

/**
 * A fork's message is its starter's guidance: it reaches the model only as a message from them
 * would. On a task that verifies approvers, an unverified starter's (or one `approvers.message`
 * does not list) is kept in the audit trail and never given to the model.
 */
export function forkMessage(state: TaskState, input: TaskInput, starter: VerifiedIdentity, verifying: boolean, manifest: AgentManifest): void {
  const text = input.forkOf?.message;
  if (!text) return;
  const message = { by: input.startedBy ?? 'fork', text };
  const problem =
    (verifying && !starter.verified ? (starter.problem ?? 'the fork was not started by a verified signer') : undefined) ?? approverProblem(manifest.policy, { kind: 'message' }, starter, undefined);
  if (problem) state.refuseGuidance(message, { ...starter, problem });
  else state.addGuidance(message, starter);
}
