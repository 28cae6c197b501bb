/**
 * Who branches a task from this terminal (fork, rewind, replay, export): `--as NAME` (default
 * $USER) and `--role ROLE`, vouched for by this terminal's signing key when it holds one, as for
 * approve and deny. The task's agent policy (`approvers.branch`) judges it; a refusal is exit 1.
 */
import { findDecisionSigner } from '../approvers/keys';
import { TaskClient } from '../client/task-client';
import type { ApproverIdentity } from '../protocol/approver-policy';
import { usageError } from './cli-error';
import { connectClient } from './connect';

export { branchIdentityOptions } from './verb-args';

export function branchIdentity(values: { as?: string | undefined; role?: string[] | undefined }): ApproverIdentity {
  const id = (values.as ?? process.env.USER ?? 'cli').trim();
  if (!id) throw usageError('--as must name someone');
  const roles = (values.role ?? []).map((r) => r.trim());
  if (roles.some((r) => !r)) throw usageError('--role must not be blank');
  return { id, roles };
}

/** A client that signs with this terminal's key when it holds one (forks then start verified). */
export async function branchingClient(values: Parameters<typeof connectClient>[0]): Promise<TaskClient> {
  let signer;
  try {
    signer = findDecisionSigner();
  } catch (err) {
    throw usageError((err as Error).message);
  }
  const plain = await connectClient(values);
  return signer ? new TaskClient(plain.client, plain.taskQueue, signer) : plain;
}
