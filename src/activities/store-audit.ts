/** storeAudit: audit entries that left the task's state, stored; the marker text that refers to them goes back. */
import { markerText } from '../protocol/blob-marker';
import type { AgentActivities } from '../protocol/activity-contracts';
import type { WorkerResources } from './worker-resources';

export function createStoreAudit(worker: Pick<WorkerResources, 'store'>): AgentActivities['storeAudit'] {
  return async ({ scope, entries }) => {
    const text = JSON.stringify(entries);
    return markerText(await worker.store().put(scope, text), text.length);
  };
}
