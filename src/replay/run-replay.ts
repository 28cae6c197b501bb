/**
 * Runs a recording again: the same prompt from turn 0 against another model or system prompt, with
 * every tool answered from the recording. The replay is an ordinary `agentTask` (the workflow is
 * unchanged, so its history rules hold) on a task queue made for this one replay and polled only
 * by the worker this function starts. That worker's one agent is built from the recording
 * (replay-agent.ts): it has no tool code to run, no approver keys, no webhook, and its blob store
 * is a temporary folder. Answering from a recording is therefore a property of the worker, never
 * of a task's input: a task started by hand on a real worker runs the real tools, and whatever is
 * started on a replay's queue gets recorded answers and nothing else.
 *
 * A replay reads nothing outside the recording: the recorded scripted model plays the script the
 * recording carries (written to a temporary folder of this replay), and its blob store starts
 * empty. A recording that names a script it does not carry (version 1) replays when that file is
 * here; when it is not, the replay cannot run (ReplayCannotRunError) and starts nothing.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { NativeConnection, WorkerOptions } from '@temporalio/worker';
import { LocalBlobStore } from '../blobs/local-blob-store';
import type { TaskClient } from '../client/task-client';
import { DurableAgentError } from '../errors/durable-agent-error';
import type { ModelEnvironment } from '../models/create-model';
import { defaultScriptRoots } from '../models/script-roots';
import { resolveScript } from '../models/scripted-model';
import { canonicalJson } from '../protocol/canonical-json';
import type { ModelChoice } from '../protocol/agent-settings';
import type { ApprovalRequest, TaskInput, TaskStatus } from '../protocol/task';
import { createAgentWorker } from '../worker/create-worker';
import { jsonSchemaValidator } from '../tools/json-schema';
import type { AgentDefinition } from '../agents/define-agent';
import { callsOf, isScriptName, type Recording } from './recording';
import { recordTask } from './record-task';
import { replayAgent } from './replay-agent';
import { diffTrajectories, type TrajectoryDiff } from './trajectory-diff';

/** The model a replay was pointed at could not answer (unreachable, refused the key, unknown model). */
export class ReplayModelError extends DurableAgentError {
  readonly code = 'replay_model_unreachable';
}

/**
 * The replay needs something neither the recording nor this machine has (a model script a version 1
 * recording names by a path that is not here). Nothing was started; it is no verdict on the agent.
 */
export class ReplayCannotRunError extends DurableAgentError {
  readonly code = 'replay_cannot_run';
}

export interface ReplayOptions {
  /** Connected to the server the replay runs on (its data converter reads the replay's history). */
  client: TaskClient;
  /** The worker's connection to the same server. */
  connection: NativeConnection;
  namespace?: string;
  /** Default: the model the recorded task was started with, else the one its agent resolved. */
  model?: ModelChoice;
  /** Default: the recorded system prompt. */
  system?: string;
  /** The agent as defined now (an agents module's): its prompt, tools' declarations, policy and model replace the recorded ones; answers still come from the recording. */
  current?: AgentDefinition;
  /** Default: the cached bundle (cachedWorkflowBundle). */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** Keys, base URL and script folders for the replay's model. Default: the process environment. */
  modelEnv?: ModelEnvironment;
  /** Default `replay-<random>`. */
  replayId?: string;
  /** How often the driver looks at the replay's status, ms. Default 100. */
  pollMs?: number;
}

export interface ReplayResult {
  replayId: string;
  /** The replay's own recording, read from its history like any task's. */
  replayed: Recording;
  diff: TrajectoryDiff;
}

/** Attempts of one model call after which the replay gives up on an unreachable model. */
const MODEL_ATTEMPTS = 3;

/** The person's side of a replay: the recorded decision for the same call; a call the recording never had is approved (the tool then answers not_recorded). */
function decisionFor(recording: Recording, pending: ApprovalRequest): { approve: true } | { approve: false; reason: string } {
  // A pending approval holds the validated arguments (defaults applied); the recording, the model's.
  const schema = recording.manifest.tools.find((t) => t.name === pending.tool)?.inputSchema;
  const validated = (input: unknown): unknown => {
    const parsed = schema ? jsonSchemaValidator(schema).parseInput(input) : undefined;
    return parsed?.success ? parsed.data : input;
  };
  const wanted = canonicalJson(pending.input, { strict: false });
  const same = callsOf(recording).find(
    (c) => c.tool === pending.tool && c.approval && (canonicalJson(c.input, { strict: false }) === wanted || canonicalJson(validated(c.input), { strict: false }) === wanted),
  );
  if (!same?.approval || same.approval.decision === 'approved' || same.approval.decision === 'undecided') return { approve: true };
  return { approve: false, reason: `as recorded: ${same.approval.reason ?? same.approval.decision}` };
}

const sameModel = (a: ModelChoice, b: ModelChoice) => canonicalJson(a, { strict: false }) === canonicalJson(b, { strict: false });

/**
 * The model the replay runs and the script folders its worker reads. The recording's own scripted
 * model plays the script the recording carries, written to `scriptDir`; any other scripted model is
 * checked before anything starts, so a script that is not here is ReplayCannotRunError, never a
 * replay that blocks on an unreadable script.
 */
async function modelOf(recording: Recording, options: ReplayOptions, scriptDir: string): Promise<{ model: ModelChoice; scriptRoots: string[] }> {
  const roots = options.modelEnv?.scriptRoots ?? defaultScriptRoots();
  const own = recording.modelChoice ?? recording.manifest.model;
  const chosen = options.model ?? options.current?.model;
  const model = chosen ?? own;
  if (model.provider !== 'scripted') return { model, scriptRoots: roots };
  const carried = recording.modelScript;
  if (carried && sameModel(model, own)) {
    // checkRecording let only a plain file name through; basename keeps it so for a recording built in code.
    const name = isScriptName(carried.name) ? path.basename(carried.name) : 'recorded-script.json';
    const file = path.join(scriptDir, name);
    await writeFile(file, JSON.stringify(carried.script), { flag: 'wx' });
    return { model: { ...model, script: file }, scriptRoots: [scriptDir, ...roots] };
  }
  try {
    resolveScript(model.script, roots);
  } catch (err) {
    const why = (err as Error).message.replace(/\.$/, '');
    throw new ReplayCannotRunError(
      sameModel(model, own)
        ? `the recording names model script ${model.script} without carrying it (${recording.version < 2 ? 'exported before recordings carried their script' : 'it could not be read at export'}), and here: ${why}; export the task again, or pass --script FILE or --model ID`
        : why,
    );
  }
  return { model, scriptRoots: roots };
}

export async function replayRecording(recording: Recording, options: ReplayOptions): Promise<ReplayResult> {
  const { client } = options;
  const replayId = options.replayId ?? `replay-${randomUUID().slice(0, 8)}`;
  const taskQueue = `durable-agent-replay.${randomUUID()}`;
  const scriptDir = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-replay-script-'));
  let blobDir: string | undefined;
  let blobStore: LocalBlobStore | undefined;
  try {
    const { model, scriptRoots } = await modelOf(recording, options, scriptDir);
    blobDir = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-replay-'));
    blobStore = new LocalBlobStore(blobDir);
    const worker = await createAgentWorker({
      agents: [replayAgent(recording, { ...(options.system !== undefined ? { system: options.system } : {}), ...(options.current ? { current: options.current } : {}) })],
      connection: options.connection,
      ...(options.namespace ? { namespace: options.namespace } : {}),
      taskQueue,
      legacyTaskQueue: false,
      // A queue of its own that no deployment routes: the replay's agent (a recording's) is no build
      // of the fleet's, and joining the fleet's deployment as one would wait for a promote.
      versioning: false,
      blobStore,
      approverKeys: [],
      // Nobody is told about a replay's escalations.
      webhookUrl: '',
      telemetry: false,
      ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : {}),
      modelEnv: { ...options.modelEnv, scriptRoots },
    });
    const input: TaskInput = {
      agent: recording.agent,
      prompt: recording.prompt,
      model,
      ...(recording.maxTurns !== undefined ? { maxTurns: recording.maxTurns } : {}),
      ...(recording.budgets ? { budgets: recording.budgets as TaskInput['budgets'] } : {}),
      startedBy: 'replay',
    };
    const blocked = await worker.runUntil(async () => {
      await client.start(input, { taskId: replayId, taskQueue });
      return drive(client, recording, replayId, options.pollMs ?? 100);
    });
    const replayed = await recordTask(client, replayId, { blobStore, scriptRoots });
    const shown: Recording = blocked ? { ...replayed, outcome: { status: 'blocked', text: blocked } } : replayed;
    return { replayId, replayed: shown, diff: diffTrajectories(recording, shown) };
  } finally {
    await blobStore?.close();
    if (blobDir) await rm(blobDir, { recursive: true, force: true });
    await rm(scriptDir, { recursive: true, force: true });
  }
}

/**
 * Answers the replay's approvals from the recording until it closes. A replay that blocks is
 * ended (nobody will unblock it) and its block returned; one whose model cannot answer is ended and
 * thrown as a ReplayModelError.
 */
async function drive(client: TaskClient, recording: Recording, replayId: string, pollMs: number): Promise<string | undefined> {
  const handle = client.handle(replayId);
  const decided = new Set<string>();
  for (;;) {
    const described = await handle.describe();
    if (described.status.name !== 'RUNNING') return undefined;
    const calling = (described.raw.pendingActivities ?? []).find((a) => a.activityType?.name === 'callModel' && (a.attempt ?? 0) >= MODEL_ATTEMPTS);
    if (calling) {
      await handle.terminate('replay: the model cannot be reached');
      throw new ReplayModelError(`the replay's model cannot be reached: ${(calling.lastFailure?.message ?? 'no answer').split('\n')[0]}`);
    }
    const status: TaskStatus | undefined = await client.status(replayId).catch(() => undefined);
    if (status?.blocked) {
      await handle.terminate(`replay blocked: ${status.blocked.code}`);
      // A model call that failed for good blocks as model_<code> (model-call.ts): nobody can fix that in a replay.
      if (status.blocked.code.startsWith('model_')) throw new ReplayModelError(`the replay's model cannot answer: ${status.blocked.reason.split('\n')[0]}`);
      return `${status.blocked.code}: ${status.blocked.reason.split('\n')[0]}`;
    }
    for (const pending of status?.pendingApprovals ?? []) {
      if (decided.has(pending.id)) continue;
      decided.add(pending.id);
      const decision = decisionFor(recording, pending);
      const by = 'replay';
      await (decision.approve ? client.approve(replayId, { approvalId: pending.id, by }) : client.deny(replayId, { approvalId: pending.id, by, reason: decision.reason })).catch(() => undefined);
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}
