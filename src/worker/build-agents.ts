/**
 * One build, one set of agents per queue. A derived build id carries the agents' fingerprint, so
 * it cannot serve two versions of them; a given one (`--build-id v7`) can, and a worker with a new
 * prompt joining a build whose tasks are pinned to it would run those tasks on new agents. The
 * first worker of a build records, on the server, in the build's own metadata (Worker Deployment
 * Version metadata, shown by `temporal worker deployment describe-version`), which agents it serves
 * on each queue; a later worker of that build with other agents on a queue is refused before it
 * polls. Two workers started in the same moment may both pass: the later record stands, and every
 * start after it is checked against it.
 */
import type { temporal } from '@temporalio/proto';
import { DurableAgentError } from '../errors/durable-agent-error';
import type { ResolvedVersioning } from './versioning';

type WorkflowService = temporal.api.workflowservice.v1.WorkflowService;
type Payload = temporal.api.common.v1.IPayload;

/** What one queue of a build serves: the fingerprint of its agents and their names (for the message). */
export interface QueueAgents {
  taskQueue: string;
  fingerprint: string;
  agents: string[];
}

const KEY_PREFIX = 'durable-agent.agents:';
const NOT_FOUND = 5;

export class BuildAgentsMismatch extends DurableAgentError {
  readonly code = 'build_agents_changed';
}

/** The version metadata key for one queue. */
export function metadataKeyOf(taskQueue: string): string {
  return `${KEY_PREFIX}${taskQueue}`;
}

/** Throws BuildAgentsMismatch when the build already serves other agents on one of `queues`. */
export async function checkBuildAgents(service: WorkflowService, namespace: string, v: ResolvedVersioning, queues: readonly QueueAgents[]): Promise<void> {
  if (v.allowAgentChanges) return;
  const recorded = await recordedAgents(service, namespace, v);
  for (const q of queues) {
    const earlier = recorded.get(q.taskQueue);
    if (!earlier || earlier.fingerprint === q.fingerprint) continue;
    throw new BuildAgentsMismatch(
      `build ${v.buildId} of deployment ${v.deploymentName} already serves other agents on queue ${q.taskQueue} ` +
        `(${describe(earlier)}; this worker: ${describe(q)}), and tasks pinned to the build would run on this worker's. ` +
        `Start it as a new build: drop --build-id (the default build id follows the agents) or give a new one, then deploy promote it (docs/deploy.md).`,
    );
  }
}

/**
 * Records the build's agents per queue once the server knows the build (a version exists after its
 * first poll): missing entries only, or all of them with allowAgentChanges. Gives up quietly after
 * `timeoutMs`: the record is a check for later workers, never a reason to stop this one.
 */
export async function recordBuildAgents(
  service: WorkflowService,
  namespace: string,
  v: ResolvedVersioning,
  queues: readonly QueueAgents[],
  options: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<boolean> {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  const deploymentVersion = { deploymentName: v.deploymentName, buildId: v.buildId };
  while (Date.now() < deadline && !options.signal?.aborted) {
    try {
      const recorded = await recordedAgents(service, namespace, v, { mustExist: true });
      const upsertEntries: Record<string, Payload> = {};
      for (const q of queues) {
        if (recorded.has(q.taskQueue) && !v.allowAgentChanges) continue;
        upsertEntries[metadataKeyOf(q.taskQueue)] = encode({ fingerprint: q.fingerprint, agents: q.agents });
      }
      if (Object.keys(upsertEntries).length === 0) return false;
      await service.updateWorkerDeploymentVersionMetadata({ namespace, deploymentVersion, upsertEntries, removeEntries: [], identity: 'durable-agent worker (the agents of its build)' });
      return true;
    } catch (err) {
      if ((err as { code?: number }).code !== NOT_FOUND) throw err;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return false;
}

async function recordedAgents(service: WorkflowService, namespace: string, v: ResolvedVersioning, options: { mustExist?: boolean } = {}): Promise<Map<string, QueueAgents>> {
  let entries: Record<string, Payload>;
  try {
    const described = await service.describeWorkerDeploymentVersion({ namespace, deploymentVersion: { deploymentName: v.deploymentName, buildId: v.buildId } });
    entries = (described.workerDeploymentVersionInfo?.metadata?.entries ?? {}) as Record<string, Payload>;
  } catch (err) {
    if ((err as { code?: number }).code === NOT_FOUND && !options.mustExist) return new Map();
    throw err;
  }
  const out = new Map<string, QueueAgents>();
  for (const [key, payload] of Object.entries(entries)) {
    if (!key.startsWith(KEY_PREFIX)) continue;
    const value = decode(payload);
    if (value) out.set(key.slice(KEY_PREFIX.length), { taskQueue: key.slice(KEY_PREFIX.length), ...value });
  }
  return out;
}

function encode(value: { fingerprint: string; agents: string[] }): Payload {
  return { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from(JSON.stringify(value)) };
}

/** A recorded entry, or undefined when it is not one of ours (someone else's metadata under our key). */
function decode(payload: Payload): { fingerprint: string; agents: string[] } | undefined {
  try {
    const value = JSON.parse(Buffer.from(payload.data ?? new Uint8Array()).toString('utf8')) as { fingerprint?: unknown; agents?: unknown };
    if (typeof value.fingerprint !== 'string' || !Array.isArray(value.agents)) return undefined;
    return { fingerprint: value.fingerprint, agents: value.agents.filter((a): a is string => typeof a === 'string') };
  } catch {
    return undefined;
  }
}

function describe(q: Pick<QueueAgents, 'fingerprint' | 'agents'>): string {
  return `${q.agents.join(', ') || 'no agents'} at ${q.fingerprint}`;
}
