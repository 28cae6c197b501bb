/**
 * Who may branch a task (fork, rewind, replay, export), asked by a front end before it does
 * anything: the task's agent policy and trusted keys as its latest run recorded them (the
 * describeAgent answer in its history), and whether this client's signer is a key the task
 * trusts. The same rule (branchProblem) is checked again by a fork's first run on its worker.
 */
import type { Client } from '@temporalio/client';
import type { DecisionSigner } from '../approvers/signer';
import { DurableAgentError } from '../errors/durable-agent-error';
import { TaskHistory } from '../history/task-history';
import type { AgentManifest } from '../protocol/agent-manifest';
import { branchProblem, type ApproverIdentity, type BranchAction } from '../protocol/approver-policy';

/** Pages of the latest run read looking for its describeAgent answer (it comes in the run's first events). */
const MAX_PAGES = 5;

export class BranchRefusedError extends DurableAgentError {
  readonly code = 'branch_refused';
  constructor(
    readonly taskId: string,
    readonly action: BranchAction,
    message: string,
  ) {
    super(message);
  }
}

/** The manifest the task's latest run took from its worker, or undefined when that run has not recorded one yet. Throws WorkflowNotFoundError. */
export async function recordedManifest(client: Client, taskId: string): Promise<AgentManifest | undefined> {
  const { runId } = await client.workflow.getHandle(taskId).describe();
  return new TaskHistory(client).manifest(taskId, runId, MAX_PAGES);
}

/** Whether `signer` is one of the keys `manifest` trusts (same id, same public key). */
export function signerTrusted(manifest: AgentManifest, signer: DecisionSigner | undefined): boolean {
  return !!signer && (manifest.approverKeys ?? []).some((k) => k.id === signer.keyId && k.publicKey.toLowerCase() === signer.publicKey.toLowerCase());
}

/**
 * Throws BranchRefusedError when `who` may not take `action` on `taskId` (its agent's
 * `approvers.branch`, or a verified signer where the agent requires signed starts). A task whose
 * run has not recorded its manifest yet is left to the fork's worker to judge (replay and export
 * then find nothing to read anyway).
 */
export async function assertMayBranch(client: Client, taskId: string, action: BranchAction, who: ApproverIdentity, signer: DecisionSigner | undefined): Promise<void> {
  const manifest = await recordedManifest(client, taskId);
  if (!manifest) return;
  const verifying = (manifest.approverKeys ?? []).length > 0;
  const problem = branchProblem(manifest.policy, action, { ...who, verified: verifying && signerTrusted(manifest, signer) }, verifying);
  if (problem) throw new BranchRefusedError(taskId, action, `${taskId}: ${problem}`);
}
