/**
 * Rolling out new agent code (docs/deploy.md): what a Worker Deployment holds, and promote/rollback
 * of the deployment's current build (the replay check is build-check.ts).
 * Everything goes through Temporal's WorkflowService (DescribeWorkerDeployment,
 * SetWorkerDeploymentCurrentVersion, SetWorkerDeploymentRampingVersion) and its visibility store
 * (TemporalWorkerDeployment / TemporalWorkerDeploymentVersion search attributes), so it works on
 * the dev server and on any cluster of server 1.29 or later.
 */
import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { DurableAgentError } from '../errors/durable-agent-error';
import { WORKFLOW_TYPE } from '../protocol/definitions';
import { DEFAULT_DEPLOYMENT_NAME } from '../worker/versioning';
import { describeDivergence, readCheck, type CheckMode, type CheckResult } from './check-record';

/** A deployment operation was refused (no passing check, no such build, nothing to roll back to). */
export class DeployRefused extends DurableAgentError {
  readonly code = 'deploy_refused';
}

export type BuildState = 'current' | 'ramping' | 'draining' | 'drained' | 'inactive';

export interface BuildView {
  buildId: string;
  state: BuildState;
  /** Percentage of new tasks a ramping build takes. */
  rampPercentage?: number;
  createdAt?: string;
  currentSince?: string;
  /** When the build stopped being current or ramping (the newest is what `rollback` goes back to). */
  deactivatedAt?: string;
  /** Open `agentTask` runs on this build, and per agent. */
  openTasks: number;
  agents: Record<string, number>;
  /** The last `deploy check` of this build run on this machine. */
  check?: { passed: boolean; checkedAt: string; histories: number; mode: CheckMode };
}

export interface DeploymentView {
  deploymentName: string;
  current?: string;
  ramping?: { buildId: string; percentage: number };
  builds: BuildView[];
  /** Open tasks on no build (started before the workers were versioned, or on unversioned workers). */
  unversionedOpenTasks: number;
}

const time = (t: { seconds?: unknown; nanos?: number | null } | null | undefined): string | undefined => {
  if (!t?.seconds) return undefined;
  const ms = Number(String(t.seconds)) * 1000 + Math.floor((t.nanos ?? 0) / 1e6);
  return ms > 0 ? new Date(ms).toISOString() : undefined;
};

/**
 * Pauses between the NOT_FOUND answers taken before a deployment counts as missing. The server
 * answers NOT_FOUND for a deployment that exists while its deployment workflow is busy (seen here
 * once in a fresh-clone run: a promote refused right after a status had shown the build; Temporal's
 * worker controller retries it for the same reason), so one NOT_FOUND is not proof.
 */
const NOT_FOUND_RETRY_MS = [250, 500, 1_000];

export async function describeDeployment(client: Client, deploymentName: string): Promise<temporal.api.workflowservice.v1.DescribeWorkerDeploymentResponse> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await client.workflowService.describeWorkerDeployment({ namespace: client.options.namespace, deploymentName });
    } catch (err) {
      if ((err as { code?: number }).code !== 5) throw err;
      const pause = NOT_FOUND_RETRY_MS[attempt];
      if (pause === undefined) {
        throw new DeployRefused(`No Worker Deployment named "${deploymentName}" on this server: start workers with \`durable-agent worker --versioned\` first`);
      }
      await new Promise((r) => setTimeout(r, pause));
    }
  }
}

const STATE_OF: Record<number, BuildState> = { 1: 'inactive', 2: 'current', 3: 'ramping', 4: 'draining', 5: 'drained' };

/** `deploy status`: the deployment's builds, which is current or ramping, and the open tasks each holds. */
export async function deploymentStatus(client: Client, deploymentName = DEFAULT_DEPLOYMENT_NAME): Promise<DeploymentView> {
  const described = await describeDeployment(client, deploymentName);
  const info = described.workerDeploymentInfo;
  const routing = info?.routingConfig;
  const current = routing?.currentDeploymentVersion?.buildId || undefined;
  const rampingId = routing?.rampingDeploymentVersion?.buildId || undefined;
  const open = await openTasksByBuild(client, deploymentName);
  const builds: BuildView[] = (info?.versionSummaries ?? []).map((s) => {
    const buildId = s.deploymentVersion?.buildId ?? String(s.version ?? '').slice(deploymentName.length + 1);
    const state: BuildState = buildId === current ? 'current' : buildId === rampingId ? 'ramping' : (STATE_OF[Number(s.status ?? 0)] ?? 'inactive');
    const tasks = open.byBuild.get(buildId) ?? { count: 0, agents: {} };
    const check = readCheck(deploymentName, buildId);
    return {
      buildId,
      state,
      ...(state === 'ramping' ? { rampPercentage: routing?.rampingVersionPercentage ?? 0 } : {}),
      ...(time(s.createTime) ? { createdAt: time(s.createTime)! } : {}),
      ...(time(s.currentSinceTime) ? { currentSince: time(s.currentSinceTime)! } : {}),
      ...(time(s.lastDeactivationTime) ? { deactivatedAt: time(s.lastDeactivationTime)! } : {}),
      openTasks: tasks.count,
      agents: tasks.agents,
      ...(check ? { check: { passed: check.passed, checkedAt: check.checkedAt, histories: check.histories, mode: check.mode } } : {}),
    };
  });
  builds.sort((a, b) => (b.createdAt ?? '').localeCompare(a.createdAt ?? ''));
  return {
    deploymentName,
    ...(current ? { current } : {}),
    ...(rampingId ? { ramping: { buildId: rampingId, percentage: routing?.rampingVersionPercentage ?? 0 } } : {}),
    builds,
    unversionedOpenTasks: open.unversioned,
  };
}

export function keywordOf(value: unknown): string | undefined {
  if (Array.isArray(value)) return typeof value[0] === 'string' ? value[0] : undefined;
  return typeof value === 'string' ? value : undefined;
}

async function openTasksByBuild(client: Client, deploymentName: string): Promise<{ byBuild: Map<string, { count: number; agents: Record<string, number> }>; unversioned: number }> {
  const byBuild = new Map<string, { count: number; agents: Record<string, number> }>();
  let unversioned = 0;
  for await (const wf of client.workflow.list({ query: `WorkflowType = '${WORKFLOW_TYPE}' AND ExecutionStatus = 'Running'` })) {
    const attrs = wf.searchAttributes as Record<string, unknown>;
    const version = keywordOf(attrs.TemporalWorkerDeploymentVersion);
    const agent = keywordOf(attrs.AgentName) ?? '?';
    if (!version) {
      unversioned++;
      continue;
    }
    const [deployment, ...rest] = version.split(':');
    if (deployment !== deploymentName) continue;
    const buildId = rest.join(':');
    const entry = byBuild.get(buildId) ?? { count: 0, agents: {} };
    entry.count++;
    entry.agents[agent] = (entry.agents[agent] ?? 0) + 1;
    byBuild.set(buildId, entry);
  }
  return { byBuild, unversioned };
}

// ---------------------------------------------------------------------------------------------
// promote, rollback

export interface RoutingChange {
  deploymentName: string;
  before: { current?: string; ramping?: { buildId: string; percentage: number } };
  after: { current?: string; ramping?: { buildId: string; percentage: number } };
  /** Whether the promote went ahead without a passing check (--force). */
  forced?: boolean;
  /** `--move-waiting`: tasks waiting on a person moved to the promoted build, and those kept where they are, with why. */
  moved?: { taskId: string; from: string; to: string }[];
  kept?: { taskId: string; build: string; why: string }[];
}

const routingOf = (view: DeploymentView) => ({ ...(view.current ? { current: view.current } : {}), ...(view.ramping ? { ramping: view.ramping } : {}) });

/** `deploy promote BUILD [--ramp P]`: refuses a build whose last check failed or never ran, unless `force`. */
export async function promoteBuild(
  client: Client,
  buildId: string,
  options: { deploymentName?: string; rampPercentage?: number; force?: boolean; moveWaiting?: boolean } = {},
): Promise<RoutingChange> {
  const deploymentName = options.deploymentName ?? DEFAULT_DEPLOYMENT_NAME;
  const check = readCheck(deploymentName, buildId);
  if (!options.force && !check) throw new DeployRefused(`Build ${buildId} has no deploy check on this machine: run \`durable-agent deploy check BUNDLE --build ${buildId}\` first (or --force)`);
  if (!options.force && check && !check.passed) {
    const first = check.divergences.find((d) => d.blocking)!;
    throw new DeployRefused(`Build ${buildId} failed its deploy check (${check.checkedAt}): ${describeDivergence(first)} (fix it, check again, or --force)`);
  }
  const before = await deploymentStatus(client, deploymentName);
  if (!before.builds.some((b) => b.buildId === buildId)) {
    throw new DeployRefused(`Deployment "${deploymentName}" has no build ${buildId}: start its workers (\`durable-agent worker --build-id ${buildId}\`) so the server knows it, then promote`);
  }
  await untilQueuesRegistered(buildId, async () => {
    const described = await describeDeployment(client, deploymentName);
    const common = { namespace: client.options.namespace, deploymentName, conflictToken: described.conflictToken, identity: 'durable-agent deploy promote' };
    if (options.rampPercentage !== undefined && options.rampPercentage < 100) {
      await client.workflowService.setWorkerDeploymentRampingVersion({ ...common, buildId, percentage: options.rampPercentage });
    } else {
      await client.workflowService.setWorkerDeploymentCurrentVersion({ ...common, buildId });
    }
  });
  const after = await waitForRouting(client, deploymentName, (v) => (options.rampPercentage !== undefined && options.rampPercentage < 100 ? v.ramping?.buildId === buildId : v.current === buildId));
  const moves = options.moveWaiting ? await moveWaiting(client, deploymentName, buildId, check) : {};
  return { deploymentName, before: routingOf(before), after: routingOf(after), ...(options.force && !check?.passed ? { forced: true } : {}), ...moves };
}

/** How long a promote waits for a new build's workers to have polled every task queue the current build serves. */
const QUEUES_REGISTERED_WAIT_MS = 30_000;

/**
 * Runs a routing change, again (with a fresh conflict token) while the server refuses it because
 * the build's workers have not yet polled every task queue of the current build: workers started a
 * moment ago register their queues one by one, and the server will not leave a queue unversioned.
 */
async function untilQueuesRegistered(buildId: string, change: () => Promise<void>): Promise<void> {
  const deadline = Date.now() + QUEUES_REGISTERED_WAIT_MS;
  for (;;) {
    try {
      return await change();
    } catch (err) {
      if (!/missing active task queues/.test((err as Error).message ?? '')) throw err;
      if (Date.now() > deadline) {
        throw new DeployRefused(`Build ${buildId} does not serve every task queue of the current build (after ${QUEUES_REGISTERED_WAIT_MS / 1000} s): start its workers on every queue, then promote`);
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

/** AgentStatus values of a task that waits on a person (nothing of it runs until one answers). */
const WAITING = new Set(['awaiting_approval', 'blocked']);

/**
 * Moves tasks that wait on a person from older builds to `buildId`: only those whose history the
 * last check replayed on `buildId` without a divergence and that have not grown since (same run,
 * same length). Each gets a pinned override, so its next workflow task (the person's answer) runs
 * on the new build. The others stay pinned where they are, and the result says why.
 */
async function moveWaiting(client: Client, deploymentName: string, buildId: string, check: CheckResult | undefined): Promise<Pick<RoutingChange, 'moved' | 'kept'>> {
  const moved: NonNullable<RoutingChange['moved']> = [];
  const kept: NonNullable<RoutingChange['kept']> = [];
  const clean = new Map((check?.clean ?? []).map((c) => [c.taskId, c]));
  for await (const wf of client.workflow.list({ query: `WorkflowType = '${WORKFLOW_TYPE}' AND ExecutionStatus = 'Running' AND TemporalWorkerDeployment = '${deploymentName}'` })) {
    const attrs = wf.searchAttributes as Record<string, unknown>;
    const version = keywordOf(attrs.TemporalWorkerDeploymentVersion);
    const from = version ? version.slice(version.indexOf(':') + 1) : undefined;
    if (!from || from === buildId) continue;
    const status = keywordOf(attrs.AgentStatus);
    if (!status || !WAITING.has(status)) {
      kept.push({ taskId: wf.workflowId, build: from, why: `not waiting on a person (${status ?? 'unknown'}): it finishes its run on ${from}` });
      continue;
    }
    const checked = clean.get(wf.workflowId);
    if (!checked || checked.runId !== wf.runId) {
      kept.push({ taskId: wf.workflowId, build: from, why: check ? `its history did not replay cleanly on ${buildId} in the last check` : `no check of ${buildId}` });
      continue;
    }
    const described = await client.workflowService.describeWorkflowExecution({ namespace: client.options.namespace, execution: { workflowId: wf.workflowId, runId: wf.runId } });
    const length = Number(String(described.workflowExecutionInfo?.historyLength ?? 0));
    if (length !== checked.events) {
      kept.push({ taskId: wf.workflowId, build: from, why: `its history grew since the check (${checked.events} -> ${length} events): check again` });
      continue;
    }
    await client.workflowService.updateWorkflowExecutionOptions({
      namespace: client.options.namespace,
      workflowExecution: { workflowId: wf.workflowId, runId: wf.runId },
      workflowExecutionOptions: { versioningOverride: { pinned: { behavior: 1, version: { deploymentName, buildId } } } },
      updateMask: { paths: ['versioning_override'] },
      identity: 'durable-agent deploy promote --move-waiting',
    });
    moved.push({ taskId: wf.workflowId, from, to: buildId });
  }
  return { moved, kept };
}

/**
 * `deploy rollback`: a ramp in progress is withdrawn; otherwise the build that was current before
 * the current one (the most recently deactivated) becomes current again.
 */
/**
 * What a rollback makes current: the most recently deactivated build, when it is older than the
 * current one. A newer one is the build the last rollback backed out (or a promote went back from):
 * rolling back to it would re-promote it, so that is refused, as is a deployment with no previous build.
 */
export function rollbackTarget(view: DeploymentView): { build: BuildView } | { problem: string } {
  const previous = view.builds.filter((b) => b.buildId !== view.current && b.deactivatedAt).sort((a, b) => (b.deactivatedAt ?? '').localeCompare(a.deactivatedAt ?? ''))[0];
  const name = view.deploymentName;
  if (!previous) return { problem: `Deployment "${name}" has no previous build to roll back to (current: ${view.current ?? 'none'})` };
  const current = view.builds.find((b) => b.buildId === view.current);
  if (current?.createdAt && previous.createdAt && previous.createdAt > current.createdAt) {
    return {
      problem: `Deployment "${name}" has nothing older to roll back to: the previous build ${previous.buildId} is newer than the current ${current.buildId} (the one a rollback backed out); make a build current by name with durable-agent deploy promote BUILD`,
    };
  }
  return { build: previous };
}

export async function rollbackDeployment(client: Client, options: { deploymentName?: string } = {}): Promise<RoutingChange> {
  const deploymentName = options.deploymentName ?? DEFAULT_DEPLOYMENT_NAME;
  const before = await deploymentStatus(client, deploymentName);
  const described = await describeDeployment(client, deploymentName);
  const common = { namespace: client.options.namespace, deploymentName, conflictToken: described.conflictToken, identity: 'durable-agent deploy rollback' };
  if (before.ramping) {
    await client.workflowService.setWorkerDeploymentRampingVersion({ ...common, buildId: '', percentage: 0 });
    const after = await waitForRouting(client, deploymentName, (v) => !v.ramping);
    return { deploymentName, before: routingOf(before), after: routingOf(after) };
  }
  const target = rollbackTarget(before);
  if ('problem' in target) throw new DeployRefused(target.problem);
  const previous = target.build;
  await client.workflowService.setWorkerDeploymentCurrentVersion({ ...common, buildId: previous.buildId });
  const after = await waitForRouting(client, deploymentName, (v) => v.current === previous.buildId);
  return { deploymentName, before: routingOf(before), after: routingOf(after) };
}

async function waitForRouting(client: Client, deploymentName: string, done: (v: DeploymentView) => boolean, timeoutMs = 30_000): Promise<DeploymentView> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const view = await deploymentStatus(client, deploymentName);
    const described = await describeDeployment(client, deploymentName);
    const settling = Number(described.workerDeploymentInfo?.routingConfigUpdateState ?? 0) === 1;
    if (done(view) && !settling) return view;
    if (Date.now() > deadline) return view;
    await new Promise((r) => setTimeout(r, 200));
  }
}
