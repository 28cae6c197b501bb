/**
 * Which build a fork runs on (`fork --agent-version`, docs/fork.md). A fork is a new task, so by
 * default the server sends it to its deployment's current build, whose workers define the agent as
 * it is now. `origin` pins it instead to the build the origin ran on, so the branch replays the
 * origin's code and agent definition with a different turn; a build id pins it to that build. A
 * pinned fork needs a live worker of its build on the fork's queue: without one it would wait
 * unseen, so it is refused before anything is created.
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { DurableAgentError } from '../errors/durable-agent-error';
import { isPollerLive } from './live-pollers';

export type ForkBuildChoice = 'current' | 'origin' | { buildId: string };

/** What a fork runs with, as `fork` prints it. */
export interface ForkBuild {
  /** Pinned to `buildId` (a versioning override), or routed like any new task. */
  pinned: boolean;
  deploymentName?: string;
  /** Undefined when the queue has no versioned build (an unversioned fleet). */
  buildId?: string;
  /** The origin's agent version, when the fork runs on the origin's build. */
  agentVersion?: string;
}

/** A fork asked to run on a build it cannot run on; nothing was created. */
export class ForkBuildRefusedError extends DurableAgentError {
  readonly code = 'fork_build_unavailable';
}

/** `--agent-version` as typed: `current`, `origin`, or a build id. */
export function parseForkBuildChoice(value: string | undefined): ForkBuildChoice {
  if (value === undefined || value === 'current') return 'current';
  if (value === 'origin') return 'origin';
  if (!value.trim() || /\s/.test(value)) throw new TypeError(`--agent-version is current, origin or a build id, got "${value}"`);
  return { buildId: value };
}

interface Origin {
  taskId: string;
  /** The build the origin's latest run is on, from its versioning info. */
  build?: { deploymentName: string; buildId: string };
  agentVersion?: string;
}

/** The build the fork of `origin` runs on, checked against the server; refuses one no live worker serves. */
export async function resolveForkBuild(client: Client, origin: Origin, taskQueue: string, choice: ForkBuildChoice): Promise<ForkBuild> {
  if (!origin.build) {
    // An origin of an unversioned fleet names no deployment: the fork goes where its queue sends new tasks.
    if (choice === 'current') return { pinned: false };
    throw new ForkBuildRefusedError(`${origin.taskId} ran on no build (its workers were unversioned): fork it on the current build`);
  }
  const { deploymentName } = origin.build;
  if (choice === 'current') {
    const current = await currentBuild(client, deploymentName);
    return { pinned: false, deploymentName, ...(current ? { buildId: current } : {}) };
  }
  const buildId = choice === 'origin' ? origin.build.buildId : choice.buildId;
  if (!(await liveWorkerOf(client, taskQueue, deploymentName, buildId))) {
    throw new ForkBuildRefusedError(
      `No live worker of build ${buildId} (deployment ${deploymentName}) polls task queue ${taskQueue}: start one (durable-agent worker --build-id ${buildId}, from that build's code), or fork on the current build`,
    );
  }
  return { pinned: true, deploymentName, buildId, ...(origin.build.buildId === buildId && origin.agentVersion ? { agentVersion: origin.agentVersion } : {}) };
}

async function currentBuild(client: Client, deploymentName: string): Promise<string | undefined> {
  try {
    const described = await client.workflowService.describeWorkerDeployment({ namespace: client.options.namespace, deploymentName });
    return described.workerDeploymentInfo?.routingConfig?.currentDeploymentVersion?.buildId || undefined;
  } catch (err) {
    if ((err as { code?: number }).code === 5) return undefined; // no such deployment: an unversioned fleet
    throw err;
  }
}

async function liveWorkerOf(client: Client, taskQueue: string, deploymentName: string, buildId: string): Promise<boolean> {
  const described = await client.workflowService.describeTaskQueue({
    namespace: client.options.namespace,
    taskQueue: { name: taskQueue, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
    taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
  });
  return (described.pollers ?? []).some((p) => p.deploymentOptions?.deploymentName === deploymentName && p.deploymentOptions.buildId === buildId && isPollerLive(p));
}
