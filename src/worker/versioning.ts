/**
 * Worker Deployment Versioning (docs/deploy.md): a worker names its deployment and its build; the
 * server sends each new `agentTask` to the deployment's current build, and a task stays on the
 * build it started on (Pinned) until its next continue-as-new.
 *
 * The build id is derived from what decides how a task runs: the package version, the hash of the
 * workflow sources (workflowCodeHash, the same hash that names the cached bundle), and the hash of
 * the agents the worker serves (agents-fingerprint.ts), so a new prompt or tool is a new build and
 * the tasks pinned to the old one are not taken by new agents. An in-process worker and a
 * `durable-agent worker` process running the same code and agents share a build, so they take over
 * each other's tasks; `worker --build-id` overrides it (build-agents.ts then keeps one build to one
 * set of agents per queue).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { temporal } from '@temporalio/proto';
import type { WorkerDeploymentOptions } from '@temporalio/worker';
import { workflowCodeHash } from './workflow-bundle';

/** The deployment every worker joins unless told otherwise. */
export const DEFAULT_DEPLOYMENT_NAME = 'durable-agent';

/** The server's name for "no build": tasks go to unversioned workers. */
export const UNVERSIONED = '__unversioned__';

export interface VersioningOptions {
  /** Default DEFAULT_DEPLOYMENT_NAME (or DURABLE_AGENT_DEPLOYMENT). */
  deploymentName?: string;
  /** Default defaultBuildId() of the agents served (or DURABLE_AGENT_BUILD_ID). */
  buildId?: string;
  /**
   * Let a given build id serve agents other than the ones its earlier workers served on a queue
   * (default false: such a worker is refused at start, build-agents.ts). For a build whose agents
   * change on purpose under one id, such as a test suite's; its pinned tasks then run on whatever
   * agents its newest worker has.
   */
  allowAgentChanges?: boolean;
  /**
   * When the deployment has no current build yet, make this one current as soon as the server sees
   * it (a first deployment needs no `deploy promote`). Default true. Later builds are made current
   * only by `durable-agent deploy promote`, except with `'always'`: this build becomes current
   * whatever is current now (the one worker of `durable-agent dev`, where the developer's last
   * edit is the release; tasks started on an earlier build stay pinned to it).
   */
  bootstrap?: boolean | 'always';
}

/**
 * Versioning where createAgentWorker is not told: on, unless DURABLE_AGENT_VERSIONING is `0`
 * (a fleet that stays unversioned). Any other value is refused rather than guessed.
 */
export function versioningFromEnvironment(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env.DURABLE_AGENT_VERSIONING;
  if (value === undefined || value === '' || value === '1') return true;
  if (value === '0') return false;
  throw new TypeError(`DURABLE_AGENT_VERSIONING must be 1 (versioned, the default) or 0 (unversioned), got "${value}"`);
}

/**
 * `bootstrap` where a worker is not told: `DURABLE_AGENT_BOOTSTRAP=always` makes the worker's build
 * current at start whatever is current (a developer's loop, a test suite: each worker started is the
 * release); unset, the first build of a deployment makes itself current. Any other value is refused.
 */
export function bootstrapFromEnvironment(env: NodeJS.ProcessEnv = process.env): true | 'always' {
  const value = env.DURABLE_AGENT_BOOTSTRAP;
  if (value === undefined || value === '') return true;
  if (value === 'always') return 'always';
  throw new TypeError(`DURABLE_AGENT_BOOTSTRAP must be "always" or unset, got "${value}"`);
}

/** The package's version, read from its package.json (the same file in a checkout and in dist/). */
export function packageVersion(): string {
  const file = path.resolve(__dirname, '../../package.json');
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}

/**
 * `<package version>-<workflow code hash>[-a<agents fingerprint>]`: equal for every worker running the
 * same workflow code and serving the same agents.
 */
export function defaultBuildId(dirs?: string[], agents?: string): string {
  return composeBuildId(packageVersion(), workflowCodeHash(dirs), agents);
}

/** The one spelling of a derived build id: `<package version>-<code hash>[-a<agents fingerprint>]`. */
export function composeBuildId(version: string, codeHash: string, agents?: string): string {
  return agents ? `${version}-${codeHash}-a${agents}` : `${version}-${codeHash}`;
}

/**
 * The build id of a worker running `codePath`: a bundle cachedWorkflowBundle or workflowBundleOf
 * built is named by the hash of the sources it was built from (`workflows-<hash>….js`), which is the
 * default build id of those sources even when the files changed since (a checkout being edited
 * while workers run). Any other bundle: the hash of its bytes.
 */
export function buildIdOfBundle(codePath: string, agents?: string): string {
  const named = /workflows-([0-9a-f]{16})(?:-[^/\\]*)?\.js$/.exec(codePath);
  if (named) return composeBuildId(packageVersion(), named[1]!, agents);
  return composeBuildId(packageVersion(), `b${createHash('sha256').update(readFileSync(codePath)).digest('hex').slice(0, 16)}`, agents);
}

/** A build id the server accepts (it refuses some characters and long ids); names the problem. */
export function buildIdProblem(buildId: string): string | undefined {
  if (buildId.length === 0) return 'a build id cannot be empty';
  if (buildId.length > 255) return `a build id is at most 255 characters, got ${buildId.length}`;
  if (buildId === UNVERSIONED || buildId.startsWith('__')) return `a build id cannot start with "__" ("${buildId}")`;
  if (/\s/.test(buildId)) return `a build id cannot contain white space ("${buildId}")`;
  return undefined;
}

export interface ResolvedVersioning {
  deploymentName: string;
  buildId: string;
  bootstrap: boolean | 'always';
  /** Whether the build id was given (option or DURABLE_AGENT_BUILD_ID) rather than derived from the code and agents. */
  given: boolean;
  allowAgentChanges: boolean;
}

/**
 * `bundlePath`: the bundle the worker runs, when it is given one (its build id is then the bundle's);
 * `agents`: the fingerprint of the agents served (agentsFingerprint), part of a derived build id.
 */
export function resolveVersioning(options: VersioningOptions | true, bundlePath?: string, agents?: string): ResolvedVersioning {
  const o = options === true ? {} : options;
  const givenId = o.buildId ?? process.env.DURABLE_AGENT_BUILD_ID;
  const buildId = givenId ?? (bundlePath ? buildIdOfBundle(bundlePath, agents) : defaultBuildId(undefined, agents));
  const problem = buildIdProblem(buildId);
  if (problem) throw new TypeError(problem);
  const deploymentName = o.deploymentName ?? process.env.DURABLE_AGENT_DEPLOYMENT ?? DEFAULT_DEPLOYMENT_NAME;
  // The server writes a version as `<deployment>.<build>`: a deployment name has no dot.
  if (!deploymentName || deploymentName.includes('.')) throw new TypeError(`a deployment name must be non-empty and without ".", got "${deploymentName}"`);
  return {
    deploymentName,
    buildId,
    bootstrap: o.bootstrap ?? bootstrapFromEnvironment(),
    given: givenId !== undefined,
    allowAgentChanges: o.allowAgentChanges ?? false,
  };
}

/** The Worker option: versioned, and `agentTask` Pinned (a run finishes on the build it started on). */
export function deploymentOptionsOf(v: ResolvedVersioning): WorkerDeploymentOptions {
  return {
    useWorkerVersioning: true,
    version: { deploymentName: v.deploymentName, buildId: v.buildId },
    defaultVersioningBehavior: 'PINNED',
  };
}

type WorkflowService = temporal.api.workflowservice.v1.WorkflowService;

/**
 * Makes `buildId` the deployment's current build if it has none (or whatever is current, with
 * `bootstrap: 'always'`), once the server has seen the build's pollers (a version exists only after
 * its first poll). Gives up quietly after `timeoutMs`: an operator can always `deploy promote`.
 * Returns whether it set the build current.
 */
export async function bootstrapCurrentVersion(
  service: WorkflowService,
  namespace: string,
  v: { deploymentName: string; buildId: string; bootstrap?: boolean | 'always' },
  options: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<boolean> {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  while (Date.now() < deadline && !options.signal?.aborted) {
    try {
      const described = await service.describeWorkerDeployment({ namespace, deploymentName: v.deploymentName });
      const info = described.workerDeploymentInfo;
      const current = info?.routingConfig?.currentDeploymentVersion?.buildId;
      if (current === v.buildId) return false;
      // Someone made another build current: promotes decide from now on (unless told 'always').
      if (current && v.bootstrap !== 'always') return false;
      const seen = (info?.versionSummaries ?? []).some((s) => s.deploymentVersion?.buildId === v.buildId);
      if (seen) {
        await service.setWorkerDeploymentCurrentVersion({
          namespace,
          deploymentName: v.deploymentName,
          buildId: v.buildId,
          conflictToken: described.conflictToken,
          // A dev worker may serve fewer queues than the build it replaces (`dev --task-queue Q`).
          ignoreMissingTaskQueues: v.bootstrap === 'always',
          identity: current ? 'durable-agent dev worker (the newest build)' : 'durable-agent worker (first build of the deployment)',
        });
        return true;
      }
    } catch (err) {
      // NOT_FOUND until the first poll registers the deployment; a conflict when another worker of
      // the same build set it first (the next describe sees a current build).
      const code = (err as { code?: number }).code;
      if (code !== 5 && code !== 9 && code !== 10 && code !== 6) throw err;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return false;
}

/**
 * The queues of `taskQueues` that the deployment's current build serves: the server sends their new
 * tasks to that build only, so an unversioned worker polling them gets none. Empty when the
 * deployment does not exist or has no current build.
 */
export async function queuesServedByCurrentBuild(
  service: WorkflowService,
  namespace: string,
  taskQueues: readonly string[],
  deploymentName = process.env.DURABLE_AGENT_DEPLOYMENT ?? DEFAULT_DEPLOYMENT_NAME,
): Promise<{ deploymentName: string; buildId: string; taskQueues: string[] } | undefined> {
  let buildId: string | undefined;
  try {
    const described = await service.describeWorkerDeployment({ namespace, deploymentName });
    buildId = described.workerDeploymentInfo?.routingConfig?.currentDeploymentVersion?.buildId || undefined;
  } catch (err) {
    if ((err as { code?: number }).code === 5) return undefined; // no such deployment
    throw err;
  }
  if (!buildId) return undefined;
  const version = await service.describeWorkerDeploymentVersion({ namespace, deploymentVersion: { deploymentName, buildId } });
  const served = new Set((version.workerDeploymentVersionInfo?.taskQueueInfos ?? []).map((q) => q.name ?? ''));
  const routed = taskQueues.filter((q) => served.has(q));
  return routed.length ? { deploymentName, buildId, taskQueues: routed } : undefined;
}
