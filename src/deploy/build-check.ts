/**
 * `deploy check`: a new build's bundle (or source folder) replayed against the server's histories,
 * every open task and the most recent closed ones per agent; the first divergences named by task,
 * event and command, and the result kept for `deploy promote` (check-record.ts).
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { createDataConverter } from '../codec';
import { TaskHistory } from '../history/task-history';
import { WORKFLOW_TYPE } from '../protocol/definitions';
import { workflowBundleOf } from '../worker/workflow-bundle';
import { composeBuildId, DEFAULT_DEPLOYMENT_NAME } from '../worker/versioning';
import { writeCheck, type CheckMode, type CheckResult, type Divergence } from './check-record';
import { DeployRefused, keywordOf } from './deployment';

export interface CheckOptions {
  deploymentName?: string;
  /** The build the bundle is (recorded for `promote`); default: derived from a source folder and `agents`, else unrecorded. */
  buildId?: string;
  /** The fingerprint of the agents the build's workers serve (agentsFingerprint): part of a derived build id. */
  agentsFingerprint?: string;
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
  // A source folder's build is the one its workers derive: its package version, its code hash and
  // the agents they serve (without them, no worker's build: left unrecorded).
  const buildId = options.buildId ?? (bundle.srcDir && bundle.codeHash && options.agentsFingerprint ? derivedBuildId(bundle.srcDir, bundle.codeHash, options.agentsFingerprint) : undefined);
  const code = readFileSync(bundle.codePath);
  const started = Date.now();
  const list = await candidates(client, options);
  const histories: { workflowId: string; history: temporal.api.history.v1.IHistory }[] = [];
  const diverged = new Set<string>();
  const byKey = new Map<string, Candidate>();
  const reader = new TaskHistory(client);
  for (const c of list) {
    // Replay results are matched by workflow id: one run per id (the newest) is replayed.
    if (byKey.has(c.workflowId)) continue;
    byKey.set(c.workflowId, c);
    histories.push({ workflowId: c.workflowId, history: await reader.run(c.workflowId, c.runId) });
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

function derivedBuildId(srcDir: string, codeHash: string, agents: string): string | undefined {
  const pkg = path.join(srcDir, '..', 'package.json');
  if (!existsSync(pkg)) return undefined;
  const version = (JSON.parse(readFileSync(pkg, 'utf8')) as { version?: string }).version;
  return version ? composeBuildId(version, codeHash, agents) : undefined;
}
