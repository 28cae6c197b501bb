/** loadText: a text with its stored content markers resolved (a long final answer). */
import { resolveText } from '../blobs/claim-check';
import type { AgentActivities } from '../protocol/activity-contracts';
import type { WorkerResources } from './worker-resources';

export function createLoadText(worker: Pick<WorkerResources, 'store' | 'withBlobs'>): AgentActivities['loadText'] {
  return ({ scope, text }) => worker.withBlobs(() => resolveText(worker.store(), scope, text));
}
