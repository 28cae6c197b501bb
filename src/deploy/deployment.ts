/**
 * Rolling out new agent code (docs/deploy.md): what a Worker Deployment holds, a replay check of a
 * new build against the server's histories, and promote/rollback of the deployment's current build.
 * Everything goes through Temporal's WorkflowService (DescribeWorkerDeployment,
 * SetWorkerDeploymentCurrentVersion, SetWorkerDeploymentRampingVersion) and its visibility store
 * (TemporalWorkerDeployment / TemporalWorkerDeploymentVersion search attributes), so it works on
 * the dev server and on any cluster of server 1.29 or later.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { createDataConverter } from '../codec';
import { DurableAgentError } from '../errors/durable-agent-error';
import { WORKFLOW_TYPE } from '../protocol/definitions';
import { stateDir } from '../server/state-dir';
import { workflowBundleOf } from '../worker/workflow-bundle';
import { DEFAULT_DEPLOYMENT_NAME } from '../worker/versioning';

/** A deployment operation was refused (no passing check, no such build, nothing to roll back to). */
export class DeployRefused extends DurableAgentError {
  readonly code = 'deploy_refused';
  override readonly name = 'DeployRefused';
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

async function describe(client: Client, deploymentName: string): Promise<temporal.api.workflowservice.v1.DescribeWorkerDeploymentResponse> {
  try {
    return await client.workflowService.describeWorkerDeployment({ namespace: client.options.namespace, deploymentName });
  } catch (err) {
    if ((err as { code?: number }).code === 5) {
      throw new DeployRefused(`No Worker Deployment named "${deploymentName}" on this server: start workers with \`durable-agent worker --versioned\` first`);
    }
    throw err;
  }
}

const STATE_OF: Record<number, BuildState> = { 1: 'inactive', 2: 'current', 3: 'ramping', 4: 'draining', 5: 'drained' };

/** `deploy status`: the deployment's builds, which is current or ramping, and the open tasks each holds. */
export async function deploymentStatus(client: Client, deploymentName = DEFAULT_DEPLOYMENT_NAME): Promise<DeploymentView> {
  const described = await describe(client, deploymentName);
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

function keywordOf(value: unknown): string | undefined {
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
// deploy check

/**
 * `strict`: every history must replay on the new build (it is safe even for tasks not pinned).
 * `pinned`: trust pinning: only histories that would run on the new build count (open tasks that are
 * unversioned, auto-upgrade, or already on the new build); the rest are reported, not refused.
 */
export type CheckMode = 'strict' | 'pinned';

export interface Divergence {
  taskId: string;
  runId: string;
  agent: string;
  open: boolean;
  /** The build the run is pinned to, when it is. */
  pinnedTo?: string;
  /** The history event the new code disagreed with, when the SDK's message names it. */
  eventId?: number;
  eventType?: string;
  /** The command or marker the new code produced (or expected) instead, when named. */
  command?: string;
  message: string;
  /** Whether this divergence refuses the build in the check's mode. */
  blocking: boolean;
}

export interface CheckResult {
  deploymentName: string;
  buildId?: string;
  bundle: string;
  bundleSha256: string;
  mode: CheckMode;
  checkedAt: string;
  histories: number;
  open: number;
  closed: number;
  passed: boolean;
  divergences: Divergence[];
  /** Open histories that replayed without a divergence, with their length then: `promote --move-waiting` may move these. */
  clean: { taskId: string; runId: string; events: number }[];
  /** Milliseconds: fetching histories, and replaying them. */
  fetchMs: number;
  replayMs: number;
}

export interface CheckOptions {
  deploymentName?: string;
  /** The build the bundle is (recorded for `promote`); default: derived from a source folder, else unrecorded. */
  buildId?: string;
  mode?: CheckMode;
  /** Closed tasks per agent, most recent first. Default 20. */
  closedPerAgent?: number;
  /** Only these agents' tasks. */
  agents?: string[];
}

/** A bundle file, or a source tree (a checkout, its `src/`, or a built `dist/`): the bundle to replay with. */
export async function resolveBundle(target: string): Promise<{ codePath: string; codeHash?: string; srcDir?: string }> {
  const full = path.resolve(target);
  if (!existsSync(full)) throw new DeployRefused(`No bundle or source folder at ${full}`);
  if (statSync(full).isFile()) return { codePath: full };
  for (const candidate of [full, path.join(full, 'src'), path.join(full, 'dist')]) {
    if (existsSync(path.join(candidate, 'workflows')) && existsSync(path.join(candidate, 'protocol'))) {
      const bundle = await workflowBundleOf(candidate);
      return { ...bundle, srcDir: candidate };
    }
  }
  throw new DeployRefused(`${full} is neither a workflow bundle (.js) nor a folder holding workflows/ and protocol/ (a checkout, its src/ or dist/)`);
}

interface Candidate {
  workflowId: string;
  runId: string;
  agent: string;
  open: boolean;
  version?: string;
  behavior?: string;
}

async function candidates(client: Client, options: CheckOptions): Promise<Candidate[]> {
  const perAgent = options.closedPerAgent ?? 20;
  const wanted = options.agents ? new Set(options.agents) : undefined;
  const of = (wf: { workflowId: string; runId: string; searchAttributes: unknown }, open: boolean): Candidate | undefined => {
    const attrs = wf.searchAttributes as Record<string, unknown>;
    const agent = keywordOf(attrs.AgentName) ?? '?';
    if (wanted && !wanted.has(agent)) return undefined;
    const version = keywordOf(attrs.TemporalWorkerDeploymentVersion);
    const behavior = keywordOf(attrs.TemporalWorkflowVersioningBehavior);
    return { workflowId: wf.workflowId, runId: wf.runId, agent, open, ...(version ? { version } : {}), ...(behavior ? { behavior } : {}) };
  };
  const out: Candidate[] = [];
  for await (const wf of client.workflow.list({ query: `WorkflowType = '${WORKFLOW_TYPE}' AND ExecutionStatus = 'Running'` })) {
    const c = of(wf, true);
    if (c) out.push(c);
  }
  if (perAgent > 0) {
    const taken = new Map<string, number>();
    let seen = 0;
    for await (const wf of client.workflow.list({ query: `WorkflowType = '${WORKFLOW_TYPE}' AND ExecutionStatus != 'Running'` })) {
      // Newest first as the visibility store lists them (ORDER BY is refused by the SQL stores).
      // Bounded: a namespace of millions of closed tasks is read no further than needed.
      if (++seen > 5_000) break;
      const c = of(wf, false);
      if (!c) continue;
      const n = taken.get(c.agent) ?? 0;
      if (n >= perAgent) continue;
      taken.set(c.agent, n + 1);
      out.push(c);
    }
  }
  return out;
}

/** Reads the event id, event type and command out of the SDK's nondeterminism message. */
export function divergenceDetail(message: string): Pick<Divergence, 'eventId' | 'eventType' | 'command'> {
  const event = /HistoryEvent\(id:\s*(\d+),\s*(\w+)/.exec(message) ?? /event (?:id )?(\d+)(?:\s*\(?(\w+)\)?)?/i.exec(message);
  const command =
    /command[:\s]+(?:\w+::)?(\w*(?:Command|Marker|ScheduleActivity|StartTimer|ScheduleLocalActivity|StartChildWorkflowExecution|CompleteWorkflowExecution|ContinueAsNewWorkflowExecution|RecordMarker|UpsertWorkflowSearchAttributes|ModifyWorkflowProperties)\w*)/i.exec(
      message,
    );
  const marker = /patch(?:ed)? marker[^'"]*['"]([^'"]+)['"]/i.exec(message) ?? /marker[^'"]*['"]([^'"]+)['"]/i.exec(message);
  // The core names the state machine of the command the new code issued where the event was recorded.
  const machine = /(\w+) machine does not handle this event/i.exec(message);
  const none = /no command scheduled for event/i.test(message);
  const named = command?.[1]
    ? command[1]
    : marker?.[1]
      ? `marker ${marker[1]}`
      : machine?.[1]
        ? `${machine[1]} command (the new code's, where the history has the event)`
        : none
          ? 'no command (the new code issued none where the history has the event)'
          : undefined;
  return {
    ...(event?.[1] ? { eventId: Number(event[1]) } : {}),
    ...(event?.[2] ? { eventType: event[2] } : {}),
    ...(named ? { command: named } : {}),
  };
}

/**
 * `deploy check`: replays the open tasks and the most recent closed ones (per agent) against the
 * bundle, and says where the first ones diverge. Records the result for `promote` when the build is known.
 */
export async function checkBuild(client: Client, target: string, options: CheckOptions = {}): Promise<CheckResult> {
  const deploymentName = options.deploymentName ?? DEFAULT_DEPLOYMENT_NAME;
  const mode = options.mode ?? 'strict';
  const bundle = await resolveBundle(target);
  // A source folder's build is the one its workers derive: its package version + its code hash.
  const buildId = options.buildId ?? (bundle.srcDir && bundle.codeHash ? derivedBuildId(bundle.srcDir, bundle.codeHash) : undefined);
  const code = readFileSync(bundle.codePath);
  const started = Date.now();
  const list = await candidates(client, options);
  const histories: { workflowId: string; history: temporal.api.history.v1.IHistory }[] = [];
  const diverged = new Set<string>();
  const byKey = new Map<string, Candidate>();
  for (const c of list) {
    const history = await client.workflow.getHandle(c.workflowId, c.runId).fetchHistory();
    // Replay results are matched by workflow id: one run per id (the newest) is replayed.
    if (byKey.has(c.workflowId)) continue;
    byKey.set(c.workflowId, c);
    histories.push({ workflowId: c.workflowId, history });
  }
  const fetched = Date.now();
  const divergences: Divergence[] = [];
  for await (const result of Worker.runReplayHistories({ workflowBundle: { codePath: bundle.codePath }, dataConverter: createDataConverter(), replayName: 'deploy-check' }, histories)) {
    if (!result.error) continue;
    diverged.add(result.workflowId);
    const c = byKey.get(result.workflowId)!;
    const pinned = c.behavior === 'Pinned' && c.version ? c.version.slice(c.version.indexOf(':') + 1) : undefined;
    const runsOnNewBuild = c.open && (!pinned || pinned === buildId);
    const message = result.error.message.split('\n')[0]!.slice(0, 600);
    divergences.push({
      taskId: c.workflowId,
      runId: c.runId,
      agent: c.agent,
      open: c.open,
      ...(pinned ? { pinnedTo: pinned } : {}),
      ...divergenceDetail(result.error.message),
      message,
      blocking: mode === 'strict' || runsOnNewBuild,
    });
  }
  const done = Date.now();
  const check: CheckResult = {
    deploymentName,
    ...(buildId ? { buildId } : {}),
    bundle: bundle.codePath,
    bundleSha256: createHash('sha256').update(code).digest('hex'),
    mode,
    checkedAt: new Date().toISOString(),
    histories: histories.length,
    open: histories.filter((h) => byKey.get(h.workflowId)!.open).length,
    closed: histories.filter((h) => !byKey.get(h.workflowId)!.open).length,
    passed: !divergences.some((d) => d.blocking),
    divergences,
    clean: histories
      .filter((h) => byKey.get(h.workflowId)!.open && !diverged.has(h.workflowId))
      .map((h) => ({ taskId: h.workflowId, runId: byKey.get(h.workflowId)!.runId, events: h.history.events?.length ?? 0 })),
    fetchMs: fetched - started,
    replayMs: done - fetched,
  };
  if (buildId) writeCheck(check);
  return check;
}

function derivedBuildId(srcDir: string, codeHash: string): string | undefined {
  const pkg = path.join(srcDir, '..', 'package.json');
  if (!existsSync(pkg)) return undefined;
  const version = (JSON.parse(readFileSync(pkg, 'utf8')) as { version?: string }).version;
  return version ? `${version}-${codeHash}` : undefined;
}

function checkFile(deploymentName: string, buildId: string): string {
  const safe = (s: string) => s.replace(/[^A-Za-z0-9_.-]/g, (c) => `%${c.charCodeAt(0).toString(16)}`);
  return path.join(stateDir(), 'deploy-checks', safe(deploymentName), `${safe(buildId)}.json`);
}

function writeCheck(check: CheckResult): void {
  const file = checkFile(check.deploymentName, check.buildId!);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(check, null, 2)}\n`);
}

export function readCheck(deploymentName: string, buildId: string): CheckResult | undefined {
  const file = checkFile(deploymentName, buildId);
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as CheckResult;
  } catch {
    return undefined;
  }
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
  const described = await describe(client, deploymentName);
  const common = { namespace: client.options.namespace, deploymentName, conflictToken: described.conflictToken, identity: 'durable-agent deploy promote' };
  if (options.rampPercentage !== undefined && options.rampPercentage < 100) {
    await client.workflowService.setWorkerDeploymentRampingVersion({ ...common, buildId, percentage: options.rampPercentage });
  } else {
    await client.workflowService.setWorkerDeploymentCurrentVersion({ ...common, buildId });
  }
  const after = await waitForRouting(client, deploymentName, (v) => (options.rampPercentage !== undefined && options.rampPercentage < 100 ? v.ramping?.buildId === buildId : v.current === buildId));
  const moves = options.moveWaiting ? await moveWaiting(client, deploymentName, buildId, check) : {};
  return { deploymentName, before: routingOf(before), after: routingOf(after), ...(options.force && !check?.passed ? { forced: true } : {}), ...moves };
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
export async function rollbackDeployment(client: Client, options: { deploymentName?: string } = {}): Promise<RoutingChange> {
  const deploymentName = options.deploymentName ?? DEFAULT_DEPLOYMENT_NAME;
  const before = await deploymentStatus(client, deploymentName);
  const described = await describe(client, deploymentName);
  const common = { namespace: client.options.namespace, deploymentName, conflictToken: described.conflictToken, identity: 'durable-agent deploy rollback' };
  if (before.ramping) {
    await client.workflowService.setWorkerDeploymentRampingVersion({ ...common, buildId: '', percentage: 0 });
    const after = await waitForRouting(client, deploymentName, (v) => !v.ramping);
    return { deploymentName, before: routingOf(before), after: routingOf(after) };
  }
  const previous = before.builds.filter((b) => b.buildId !== before.current && b.deactivatedAt).sort((a, b) => (b.deactivatedAt ?? '').localeCompare(a.deactivatedAt ?? ''))[0];
  if (!previous) throw new DeployRefused(`Deployment "${deploymentName}" has no previous build to roll back to (current: ${before.current ?? 'none'})`);
  await client.workflowService.setWorkerDeploymentCurrentVersion({ ...common, buildId: previous.buildId });
  const after = await waitForRouting(client, deploymentName, (v) => v.current === previous.buildId);
  return { deploymentName, before: routingOf(before), after: routingOf(after) };
}

async function waitForRouting(client: Client, deploymentName: string, done: (v: DeploymentView) => boolean, timeoutMs = 30_000): Promise<DeploymentView> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const view = await deploymentStatus(client, deploymentName);
    const described = await describe(client, deploymentName);
    const settling = Number(described.workerDeploymentInfo?.routingConfigUpdateState ?? 0) === 1;
    if (done(view) && !settling) return view;
    if (Date.now() > deadline) return view;
    await new Promise((r) => setTimeout(r, 200));
  }
}

export function describeDivergence(d: Divergence): string {
  const where = d.eventId !== undefined ? `event ${d.eventId}${d.eventType ? ` (${d.eventType})` : ''}` : 'an event';
  const what = d.command ? `, ${d.command}` : '';
  return `task ${d.taskId} (${d.agent}, ${d.open ? 'open' : 'closed'}${d.pinnedTo ? `, pinned to ${d.pinnedTo}` : ''}) diverges at ${where}${what}: ${d.message}`;
}
