/**
 * Why a started task gets no worker, asked of the server rather than guessed (issue 51): under
 * Worker Deployment Versioning a live poller on the task's queue is not enough. The server sends a
 * queue's new tasks to the current build of the deployment that last made a build current for that
 * queue (or to unversioned workers when none did), and a Pinned task to its own build only. So a
 * worker can poll the queue and still never be given the task: its build is not current, or the
 * current build has no worker on this queue.
 *
 * describeQueueRouting gathers what the server says (describeTaskQueue, describeWorkerDeployment,
 * describeWorkerDeploymentVersion, describeWorkflowExecution); routingNote, a pure function, turns it
 * into one or two lines naming the cause and the fix, or undefined when a live worker should get it.
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { isPollerLive } from './live-pollers';

/** A build of a deployment, as the server names a Worker Deployment Version. */
export interface BuildRef {
  deploymentName: string;
  buildId: string;
}

/** What the server says about where a queue's (or a task's) next workflow task goes. */
export interface QueueRouting {
  taskQueue: string;
  /** The build the queue's new tasks go to; undefined: to unversioned workers. */
  current?: BuildRef;
  /** The build the task is pinned to (it goes there whatever is current). */
  pinned?: BuildRef;
  /** The live pollers of the queue's workflow tasks: a build, or `unversioned`. */
  pollers: (BuildRef | 'unversioned')[];
  /**
   * The deployments the pollers belong to: each one's current build and the queues it serves, and
   * the queues the polling build serves (when it is not the current one).
   */
  deployments: DeploymentRouting[];
}

export interface DeploymentRouting {
  deploymentName: string;
  current?: string;
  currentQueues: string[];
  /**
   * The queues the current build serves that the (first) polling build of this deployment does not,
   * and that still route to this deployment: making the polling build current would take them away
   * (the server refuses it while they are in use).
   */
  takenQueues?: string[];
}

const same = (a: BuildRef, b: BuildRef | 'unversioned') => b !== 'unversioned' && a.deploymentName === b.deploymentName && a.buildId === b.buildId;
const named = (b: BuildRef) => `build ${b.buildId} of deployment ${b.deploymentName}`;
const uniq = <T>(xs: T[]) => [...new Set(xs)];

/** The pollers, once each: `build X of deployment D`, `unversioned workers`. */
function pollersOf(r: QueueRouting): string {
  const versioned = r.pollers.filter((p): p is BuildRef => p !== 'unversioned');
  const names = uniq(versioned.map(named));
  if (r.pollers.includes('unversioned')) names.push('unversioned workers');
  return names.join(', ');
}

/**
 * The note for a task of `agent` that no worker may take, naming the cause and the fix; undefined
 * when a live worker of the build the task goes to polls its queue (then it is busy, or stopping).
 * With no live poller at all: undefined too (noWorkerNote says that case).
 */
export function routingNote(agent: string | undefined, r: QueueRouting): string | undefined {
  if (r.pollers.length === 0) return undefined;
  const q = JSON.stringify(r.taskQueue);
  const a = JSON.stringify(agent ?? '?');
  if (r.pinned) {
    if (r.pollers.some((p) => same(r.pinned!, p))) return undefined;
    return (
      `the task is pinned to ${named(r.pinned)}, and no worker of that build polls queue ${q} (it has ${pollersOf(r)}): ` +
      `run that build's worker again (durable-agent worker --deployment ${r.pinned.deploymentName} --build-id ${r.pinned.buildId}, same code), or move the task (docs/deploy.md)`
    );
  }
  if (r.current) {
    if (r.pollers.some((p) => same(r.current!, p))) return undefined;
    const versioned = r.pollers.filter((p): p is BuildRef => p !== 'unversioned');
    const fix = versioned.length
      ? `make theirs current: durable-agent deploy promote ${versioned[0]!.buildId} --deployment ${versioned[0]!.deploymentName} (docs/deploy.md)`
      : 'run that build\'s worker, or drop --unversioned from the workers on it (docs/deploy.md, "One queue, one way")';
    return `queue ${q} goes to ${named(r.current)} (its current build), and no worker of that build polls it (it has ${pollersOf(r)}); ${fix}`;
  }
  if (r.pollers.includes('unversioned')) return undefined;
  // Versioned workers only, and no current build routes this queue: none of them is given new tasks.
  const worker = r.pollers.find((p): p is BuildRef => p !== 'unversioned')!;
  const deployment = r.deployments.find((d) => d.deploymentName === worker.deploymentName);
  const promote = `durable-agent deploy promote ${worker.buildId} --deployment ${worker.deploymentName}`;
  if (!deployment?.current) {
    return `no current build serves queue ${q} for agent ${a} yet: its worker is ${named(worker)}, and that deployment has no current build (a first worker makes its build current within a minute; else ${promote})`;
  }
  const serves = deployment.currentQueues.length ? `, serving ${deployment.currentQueues.join(', ')}` : '';
  // A build that lacks queues the current one serves would take them away (the server refuses it):
  // two workers serving different agents need a deployment each, or one build serving both.
  const taken = deployment.takenQueues ?? [];
  const fix = taken.length
    ? `run this worker in a deployment of its own (durable-agent worker --deployment NAME), or serve its agents and those of ${taken.join(', ')} from one build`
    : `make it current: ${promote}`;
  return `no current build serves queue ${q} for agent ${a}: its worker is ${named(worker)}, not current (deployment ${worker.deploymentName}'s current build is ${deployment.current}${serves}); ${fix} (docs/own-agents.md)`;
}

type WorkflowService = temporal.api.workflowservice.v1.WorkflowService;

const WORKFLOW_QUEUE = temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW;
const PINNED = temporal.api.enums.v1.VersioningBehavior.VERSIONING_BEHAVIOR_PINNED;

/** The version a task is pinned to (an override's, else its own Pinned run's); undefined when it follows the current build. */
async function pinnedBuild(service: WorkflowService, namespace: string, taskId: string): Promise<BuildRef | undefined> {
  const described = await service.describeWorkflowExecution({ namespace, execution: { workflowId: taskId } });
  const info = described.workflowExecutionInfo?.versioningInfo;
  const override = info?.versioningOverride?.pinned?.version;
  if (override?.deploymentName && override.buildId) return { deploymentName: override.deploymentName, buildId: override.buildId };
  const own = info?.deploymentVersion;
  if (info?.behavior === PINNED && own?.deploymentName && own.buildId) return { deploymentName: own.deploymentName, buildId: own.buildId };
  return undefined;
}

/** The queues a build of a deployment serves, as the server registered them. */
async function queuesOf(service: WorkflowService, namespace: string, deploymentName: string, buildId: string): Promise<string[]> {
  const version = await service.describeWorkerDeploymentVersion({ namespace, deploymentVersion: { deploymentName, buildId } });
  return uniq((version.workerDeploymentVersionInfo?.taskQueueInfos ?? []).map((t) => t.name ?? '').filter(Boolean)).sort();
}

/** A deployment's current build and the queues it serves (none when the deployment is unknown), and the polling build's queues. */
async function deploymentOf(service: WorkflowService, namespace: string, deploymentName: string, pollerBuild: string): Promise<DeploymentRouting> {
  let current: string | undefined;
  try {
    const described = await service.describeWorkerDeployment({ namespace, deploymentName });
    current = described.workerDeploymentInfo?.routingConfig?.currentDeploymentVersion?.buildId || undefined;
  } catch (err) {
    if ((err as { code?: number }).code === 5) return { deploymentName, currentQueues: [] };
    throw err;
  }
  if (!current) return { deploymentName, currentQueues: [] };
  const currentQueues = await queuesOf(service, namespace, deploymentName, current);
  const pollerQueues = current === pollerBuild ? currentQueues : await queuesOf(service, namespace, deploymentName, pollerBuild).catch(() => undefined);
  if (!pollerQueues) return { deploymentName, current, currentQueues };
  // A queue another deployment has made a build current for since (dev's demo queue, once in this
  // deployment) is not taken from anyone.
  const missing = currentQueues.filter((name) => !pollerQueues.includes(name));
  const routedHere = await Promise.all(
    missing.map(async (name) => {
      const d = await service.describeTaskQueue({ namespace, taskQueue: { name }, taskQueueType: WORKFLOW_QUEUE }).catch(() => undefined);
      return d?.versioningInfo?.currentDeploymentVersion?.deploymentName === deploymentName;
    }),
  );
  return { deploymentName, current, currentQueues, takenQueues: missing.filter((_, i) => routedHere[i]) };
}

/** What the server says about `taskQueue` (and `taskId`'s pin, if given). Throws what the server throws. */
export async function describeQueueRouting(client: Client, taskQueue: string, taskId?: string): Promise<QueueRouting> {
  const service = client.workflowService;
  const namespace = client.options.namespace;
  const described = await service.describeTaskQueue({ namespace, taskQueue: { name: taskQueue }, taskQueueType: WORKFLOW_QUEUE });
  const routed = described.versioningInfo?.currentDeploymentVersion;
  const current = routed?.deploymentName && routed.buildId ? { deploymentName: routed.deploymentName, buildId: routed.buildId } : undefined;
  const pollers = (described.pollers ?? [])
    .filter((p) => isPollerLive(p))
    .map((p): BuildRef | 'unversioned' => {
      const d = p.deploymentOptions;
      // A worker that names a build is versioned unless it says it is not.
      const versioned = d?.deploymentName && d.buildId && d.workerVersioningMode !== temporal.api.enums.v1.WorkerVersioningMode.WORKER_VERSIONING_MODE_UNVERSIONED;
      return versioned ? { deploymentName: d.deploymentName!, buildId: d.buildId! } : 'unversioned';
    });
  const pinned = taskId ? await pinnedBuild(service, namespace, taskId) : undefined;
  // One polling build per deployment, a few at most: only needed when no current build routes the
  // queue (what routingNote says then).
  const builds = new Map<string, string>();
  for (const p of pollers) if (p !== 'unversioned' && !builds.has(p.deploymentName)) builds.set(p.deploymentName, p.buildId);
  const deployments = !current && !pinned ? await Promise.all([...builds].slice(0, 3).map(([name, build]) => deploymentOf(service, namespace, name, build))) : [];
  return { taskQueue, ...(current ? { current } : {}), ...(pinned ? { pinned } : {}), pollers, deployments };
}
