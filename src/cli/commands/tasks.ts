/** The verbs that start and read tasks: start, status, watch, list, result. */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { failureOf, type TaskClient } from '../../client/task-client';
import { TaskHistory } from '../../history/task-history';
import type { ModelProgress } from '../../protocol/messages';
import type { LiveOutputLog } from '../../live-output/live-output-log';
import { LiveTail } from '../../live-output/live-tail';
import { openLiveOutputLog } from '../../live-output/open-live-output-log';
import { defaultScriptRoots, scriptsDir } from '../../models/script-roots';
import { scriptFile } from '../../models/scripted-model';
import { AGENT_NAME_PATTERN } from '../../protocol/definitions';
import { AGENT_STATUSES, type AgentStatus, type ModelChoice, type TaskInput, type TaskStatus } from '../../protocol/task';
import { openBlobStore } from '../../blobs/open-blob-store';
import { ApprovalArguments, replaceStoredArguments } from '../../client/approval-arguments';
import { MARKER_PREFIX } from '../../protocol/blob-marker';
import { intOption, parse } from '../args';
import { VERB_ARGS } from '../verb-args';
import { decisionOutcome } from '../../client/request-outcome';
import { CliError, EXIT, usageError } from '../cli-error';
import { printJson, resultOutputJson, startedJson, watchLine } from '../json-output';
import { connectClient } from '../connect';
import { renderApproval, renderBlocked, renderError, renderEvent, renderNested, renderResult, renderSummaries, renderView, safeJson, safeLine } from '../render';
import { fallbacksProblem } from '../../protocol/model-fallback';

export const tasksHelp = `durable-agent start [PROMPT] --agent NAME [--prompt TEXT] [--script FILE | --model NAME] [--fallback-model ID]...
                   [--max-turns N] [--max-tool-calls N] [--max-cost-usd X] [--id TASK_ID] [--watch] [--json]
  --fallback-model (repeatable, in order) replaces the agent's fallback models: a Claude model the task
  moves to when its model is overloaded, rate-limited past its retries or no longer served, never on a
  refused request (docs/model-fallback.md)
  --max-turns, --max-tool-calls and --max-cost-usd override the agent's budgets for this task
  (defaults: the agent's budgets, else 20 turns, 50 tool calls, no cost limit; see docs/package.md);
  a task that spends one blocks for a person: durable-agent unblock TASK_ID --as NAME --tool-calls N
durable-agent status TASK_ID [--all] [--full] [--blob-store SPEC] [--json]
  --all also prints the audit entries a long task archived to its blob store (default: DURABLE_AGENT_BLOB_STORE)
  --full prints a pending approval's arguments whole (long ones are shortened, every key shown);
  arguments stored in the blob store are read from it and checked against their hash
  With no live worker on the task's queue (none polls, or the one listed was killed: the server
  lists a worker for minutes after its last poll) status asks nothing and answers at once from the
  task's search attributes and memo, with a note saying so
durable-agent watch TASK_ID [--full] [--blob-store SPEC] [--json]
durable-agent list [--status ${AGENT_STATUSES.join('|')}] [--agent NAME] [--forks-of TASK_ID] [--limit N] [--blob-store SPEC] [--json]
  (columns: task, agent, status, Temporal's status, the build the run is on (- when unversioned), start time)
durable-agent result TASK_ID [--json]
  waits for the task to finish; while it waits on a person (an approval, a block) it says so once on
  stderr and keeps waiting
  See docs/long-tasks.md for start; docs/json-output.md for status, watch, list and result.`;

export async function startCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, VERB_ARGS.start.options, VERB_ARGS.start.positionals);
  const prompt = values.prompt ?? positionals[0];
  if (!values.agent) throw usageError('--agent is required (the built-in agent is "demo")');
  if (!prompt?.trim()) throw usageError('a prompt is required: durable-agent start "what to do" --agent NAME');
  if (values.prompt && positionals[0]) throw usageError('give the prompt once: as an argument or with --prompt');
  if (values.script && values.model) throw usageError('--script and --model are exclusive');
  const fallbackModels = values['fallback-model'];
  if (fallbackModels && values.script) throw usageError('--fallback-model needs a Claude model: a scripted model (--script) has no fallbacks');
  const fallbackProblem = fallbackModels ? fallbacksProblem(fallbackModels, '--fallback-model', values.model) : undefined;
  if (fallbackProblem) throw usageError(fallbackProblem);
  if (!values['task-queue'] && !AGENT_NAME_PATTERN.test(values.agent)) throw usageError(`--agent "${values.agent}": an agent name is 1-64 letters, digits, ".", "_" or "-"`);
  const maxTurns = intOption(values['max-turns'], 'max-turns');
  const toolCalls = intOption(values['max-tool-calls'], 'max-tool-calls');
  if (toolCalls !== undefined && toolCalls > MAX_TOOL_CALLS) throw usageError(`--max-tool-calls must be at most ${MAX_TOOL_CALLS}, got "${values['max-tool-calls']}"`);
  const costUsd = usdOption(values['max-cost-usd'], 'max-cost-usd');
  const budgets = { ...(toolCalls !== undefined ? { toolCalls } : {}), ...(costUsd !== undefined ? { costUsd } : {}) };
  const input: TaskInput = {
    agent: values.agent,
    prompt,
    ...(values.script ? { model: scriptedChoice(values.script) } : {}),
    ...(values.model ? { model: { provider: 'anthropic', model: values.model } satisfies ModelChoice } : {}),
    ...(fallbackModels ? { fallbackModels } : {}),
    ...(maxTurns ? { maxTurns } : {}),
    ...(Object.keys(budgets).length > 0 ? { budgets } : {}),
    startedBy: process.env.USER ?? 'cli',
  };
  const client = await connectClient(values);
  const handle = await client.start(input, values.id ? { taskId: values.id } : {}).catch((err: Error) => {
    if (err.name === 'WorkflowExecutionAlreadyStartedError') throw new CliError(`A task with id "${values.id}" already exists`);
    throw err;
  });
  const taskQueue = client.queueFor(input.agent);
  if (values.json && !values.watch) printJson(startedJson, { taskId: handle.workflowId, runId: handle.firstExecutionRunId, taskQueue });
  else if (!values.json) console.log(`started ${handle.workflowId} on task queue ${taskQueue}\n  follow it:  durable-agent watch ${handle.workflowId}`);
  // Said at once, not discovered after a silent wait: the usual first-hour mistake is a worker for another agent.
  // (or workers whose build the server does not send this queue's tasks to: which build is current, and the fix).
  const waiting = await client.waitingNote(input.agent, taskQueue, handle.workflowId);
  if (waiting) console.error(`note: ${waiting}`);
  return values.watch ? watchTask(client, handle.workflowId, !!values.json) : EXIT.ok;
}

/** The task input's limits (wire-shapes.ts taskBudgetsSchema). */
const MAX_TOOL_CALLS = 1_000_000;
const MAX_COST_USD = 1_000_000;

/** A positive amount of dollars (`2`, `0.50`), or a usage error. */
function usdOption(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = /^\s*\d*\.?\d+\s*$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isFinite(n) || n <= 0 || n > MAX_COST_USD) throw usageError(`--${name} must be a positive number of US dollars up to ${MAX_COST_USD} (e.g. 2.50), got "${value}"`);
  return n;
}

/**
 * Workers read model scripts only under their script folders (a task input must not name any file
 * on a worker), so a script from elsewhere is copied into `<state dir>/scripts`, named by its
 * content, where a worker sharing this state folder (dev, demo) reads it.
 */
function scriptedChoice(file: string): ModelChoice {
  const script = path.resolve(file);
  if (!existsSync(script)) throw usageError(`--script ${file}: no such file`);
  if (path.extname(script).toLowerCase() !== '.json') throw usageError(`--script ${file}: a model script is a .json file`);
  const text = readFileSync(script, 'utf8');
  let parsed;
  try {
    parsed = scriptFile.safeParse(JSON.parse(text));
  } catch (err) {
    throw usageError(`--script ${file}: not JSON (${(err as Error).message})`);
  }
  if (!parsed.success) throw usageError(`--script ${file}: ${parsed.error.issues[0]?.message} at ${parsed.error.issues[0]?.path.join('.')}`);
  const real = realpathSync(script);
  const underRoot = defaultScriptRoots().some((root) => {
    const rel = path.relative(existsSync(root) ? realpathSync(root) : root, real);
    return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
  });
  if (underRoot) return { provider: 'scripted', script: real };
  const digest = createHash('sha256').update(text).digest('hex').slice(0, 12);
  const copy = path.join(scriptsDir(), `${path.basename(script, path.extname(script))}-${digest}.json`);
  mkdirSync(scriptsDir(), { recursive: true });
  if (!existsSync(copy)) writeFileSync(copy, text);
  return { provider: 'scripted', script: copy };
}

export async function statusCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, VERB_ARGS.status.options, VERB_ARGS.status.positionals);
  const client = await connectClient(values);
  const taskId = positionals[0]!;
  const view = await client.view(taskId);
  // Approvals show the arguments that will run, not the reference a long one travels as.
  const args = new ApprovalArguments(client.client, () => openBlobStore(values['blob-store']));
  try {
    if (view.status) view.status = await args.resolveStatus(taskId, view.status);
  } finally {
    await args.close();
  }
  // --all: the audit entries a long task archived to its blob store, before the recent ones.
  const archived = values.all && view.status?.archive ? await readArchive(client, view.status, values['blob-store']) : [];
  // Every decision says what became of it, in the words the verbs that send one print.
  const shown = view.status ? { ...view, status: { ...view.status, decisions: view.status.decisions.map((d) => ({ ...d, outcome: decisionOutcome(d) })) } } : view;
  if (values.json) console.log(safeJson(values.all ? { ...shown, archived } : shown, 2));
  else {
    for (const { kind, entry } of archived) console.log(safeLine(`[archived ${kind}] ${JSON.stringify(entry)}`));
    console.log(renderView(view, { full: !!values.full }));
  }
  return EXIT.ok;
}

async function readArchive(client: TaskClient, status: TaskStatus, spec: string | undefined) {
  const store = openBlobStore(spec);
  try {
    return await client.archivedEntries(status, store);
  } finally {
    await store.close();
  }
}

export async function resultCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, VERB_ARGS.result.options, VERB_ARGS.result.positionals);
  const client = await connectClient(values);
  const taskId = positionals[0]!;
  const stopTelling = tellWhenWaitingOnPerson(client, taskId);
  try {
    const result = await client.result(taskId);
    if (values.json) printJson(resultOutputJson, result, 2);
    else console.log(renderResult(result));
    return EXIT.ok;
  } catch (err) {
    if ((err as Error).name === 'TaskNotFoundError') throw err;
    const failure = failureOf(err);
    if (values.json) printJson(resultOutputJson, { failure }, 2);
    else console.error(`task failed: ${renderError(failure)}`);
    return EXIT.failed;
  } finally {
    stopTelling();
  }
}

/** How often `result` looks whether the task it waits for is waiting on a person. */
const WAITING_POLL_MS = 2_000;

/**
 * While `result` waits, says on stderr (once each time the task starts waiting on a person, never
 * on stdout, which keeps the result alone) that the task waits for an approval or an unblock, and
 * keeps waiting. Returns the function that stops looking.
 */
function tellWhenWaitingOnPerson(client: TaskClient, taskId: string): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let told: string | undefined;
  const look = async () => {
    const summary = await client.describe(taskId).catch(() => undefined);
    if (stopped || !summary) return;
    const waiting = summary.executionStatus === 'RUNNING' && (summary.agentStatus === 'awaiting_approval' || summary.agentStatus === 'blocked');
    if (!waiting) told = undefined;
    else {
      const what = `${summary.agentStatus}: ${summary.waitingFor ?? 'a person'}`;
      if (what !== told) {
        told = what;
        const how = summary.agentStatus === 'blocked' ? `durable-agent unblock ${taskId} --as NAME` : `durable-agent approve|deny ${taskId} --as NAME`;
        console.error(
          `waiting on a person (${safeLine(summary.agentStatus === 'blocked' ? 'blocked' : 'awaiting approval')}): ${safeLine(summary.waitingFor ?? 'see status')}; answer with ${safeLine(how)}, see durable-agent status ${safeLine(taskId)}; still waiting for the result`,
        );
      }
    }
  };
  const loop = () => {
    timer = setTimeout(() => void look().finally(() => !stopped && loop()), WAITING_POLL_MS);
    timer.unref();
  };
  void look().finally(() => !stopped && loop());
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
}

export async function listCommand(argv: string[]): Promise<number> {
  const { values } = parse(argv, VERB_ARGS.list.options, VERB_ARGS.list.positionals);
  if (values.status && !AGENT_STATUSES.includes(values.status as AgentStatus)) {
    throw usageError(`--status must be one of ${AGENT_STATUSES.join(', ')}`);
  }
  const limit = intOption(values.limit, 'limit');
  const client = await connectClient(values);
  const listed = await client.list({
    ...(values.status ? { status: values.status as AgentStatus } : {}),
    ...(values.agent ? { agent: values.agent } : {}),
    ...(values['forks-of'] ? { forksOf: values['forks-of'] } : {}),
    ...(limit ? { limit } : {}),
  });
  // A waiting task's memo names a long call by its stored reference: show the arguments instead.
  const args = new ApprovalArguments(client.client, () => openBlobStore(values['blob-store']));
  let tasks;
  try {
    tasks = await Promise.all(
      listed.map(async (t) => (t.waitingFor?.includes(MARKER_PREFIX) ? { ...t, waitingFor: await replaceStoredArguments(t.waitingFor, (m) => args.read(t.taskId, m), 200) } : t)),
    );
  } finally {
    await args.close();
  }
  console.log(values.json ? safeJson(tasks, 2) : renderSummaries(tasks));
  return EXIT.ok;
}

export async function watchCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, VERB_ARGS.watch.options, VERB_ARGS.watch.positionals);
  const client = await connectClient(values);
  const args = new ApprovalArguments(client.client, () => openBlobStore(values['blob-store']));
  try {
    return await watchTask(client, positionals[0]!, !!values.json, undefined, { full: !!values.full, args, liveOutput: openLiveOutputLog(values['blob-store']) });
  } finally {
    await args.close();
  }
}

/** Live progress: prints each new event once, then the outcome. Returns the exit code. */
export async function watchTask(
  client: TaskClient,
  taskId: string,
  asJson: boolean,
  out: (line: string) => void = (line) => console.log(line),
  options: { full?: boolean; args?: ApprovalArguments; liveOutput?: LiveOutputLog } = {},
): Promise<number> {
  const args = options.args ?? new ApprovalArguments(client.client, () => openBlobStore());
  const tail = new LiveTail(options.liveOutput ?? openLiveOutputLog(), () => client.liveStream(taskId));
  try {
    return await watchLoop(client, taskId, asJson, out, args, !!options.full, tail);
  } finally {
    if (!options.args) await args.close();
  }
}

async function watchLoop(client: TaskClient, taskId: string, asJson: boolean, out: (line: string) => void, args: ApprovalArguments, full: boolean, tail: LiveTail): Promise<number> {
  let lastSeq = 0;
  let lastNote = '';
  const shownApprovals = new Set<string>();
  let shownBlock: string | undefined;
  const shownNestedBlocks = new Set<string>();
  let lastProgress: string | undefined;
  let lastProgressAt = 0;
  for (;;) {
    const view = await client.view(taskId);
    for (const raw of view.status?.events ?? []) {
      if (raw.seq <= lastSeq) continue;
      lastSeq = raw.seq;
      // An event names a long call by its stored reference: print the arguments instead.
      const event = raw.detail.includes(MARKER_PREFIX) ? { ...raw, detail: await replaceStoredArguments(raw.detail, (m) => args.read(taskId, m), 600) } : raw;
      out(asJson ? watchLine({ event }) : renderEvent(event));
    }
    const fresh = (view.status?.pendingApprovals ?? []).filter((a) => !shownApprovals.has(a.id));
    // Resolved once each, when first shown: the stored arguments of an approval never change.
    const resolved = fresh.length && view.status ? (await args.resolveStatus(taskId, { ...view.status, pendingApprovals: fresh, approvals: [] })).pendingApprovals : [];
    for (const approval of resolved) {
      shownApprovals.add(approval.id);
      out(asJson ? watchLine({ approval }) : renderApproval(taskId, approval, { full }));
    }
    const blocked = view.status?.blocked;
    if (blocked && blocked.id !== shownBlock) {
      shownBlock = blocked.id;
      out(asJson ? watchLine({ blocked }) : renderBlocked(taskId, blocked));
    }
    // What sub-agents' child tasks wait for, once each, as `TASK › researcher: tool`.
    for (const n of view.nested ?? []) {
      const fresh = { ...n, approvals: n.approvals.filter((a) => !shownApprovals.has(a.id)), block: n.block && !shownNestedBlocks.has(n.block.id) ? n.block : null };
      if (!fresh.approvals.length && !fresh.block) continue;
      for (const a of fresh.approvals) shownApprovals.add(a.id);
      if (fresh.block) shownNestedBlocks.add(fresh.block.id);
      out(asJson ? watchLine({ nested: fresh }) : renderNested(taskId, fresh).join('\n'));
    }
    if (view.summary.executionStatus === 'RUNNING') {
      const counted = await modelProgressOf(client, taskId);
      // The heartbeat says how far the answer is; its text comes from the live output log.
      const progress = counted && { ...counted, tail: await tail.update() };
      const key = progress && `${progress.outputChars}/${progress.thinkingChars}`;
      if (progress && key !== lastProgress && Date.now() - lastProgressAt >= PROGRESS_EVERY_MS) {
        lastProgress = key;
        lastProgressAt = Date.now();
        out(asJson ? watchLine({ progress }) : renderProgress(progress));
      }
    }
    if (view.note && view.note !== lastNote && view.summary.executionStatus === 'RUNNING') {
      lastNote = view.note;
      if (!asJson) out(`(${view.note})`);
    }
    if (view.summary.executionStatus !== 'RUNNING') {
      const result = view.status?.result ?? view.result;
      const failure = view.failure ?? view.status?.lastError;
      if (result) {
        out(asJson ? watchLine({ result }) : `\n${renderResult(result)}`);
        return EXIT.ok;
      }
      out(asJson ? watchLine({ failure }) : `\ntask ${view.summary.executionStatus.toLowerCase()}${failure ? `: ${renderError(failure)}` : ''}`);
      return EXIT.failed;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

const PROGRESS_EVERY_MS = 2_000;

/**
 * How far the model answer streaming in right now is, from the pending callModel activity's last
 * heartbeat (its details are the ModelProgress the model reports, without text). Undefined when no
 * answer is streaming.
 */
async function modelProgressOf(client: TaskClient, taskId: string): Promise<ModelProgress | undefined> {
  try {
    const [details] = await new TaskHistory(client.client).pendingHeartbeats(taskId, 'callModel');
    return isModelProgress(details) ? details : undefined;
  } catch {
    // Progress is a nicety: a describe that fails (permissions, an old server) must not end watch.
    return undefined;
  }
}

function isModelProgress(value: unknown): value is ModelProgress {
  const v = value as Partial<ModelProgress> | null;
  return typeof v === 'object' && v !== null && typeof v.outputChars === 'number' && typeof v.thinkingChars === 'number' && typeof v.tail === 'string';
}

function renderProgress(p: ModelProgress): string {
  const thinking = p.thinkingChars ? `, thinking ${p.thinkingChars.toLocaleString('en-US')}` : '';
  const tail = printable(p.tail).slice(-80);
  return `  ... model answering: ${p.outputChars.toLocaleString('en-US')} chars${thinking}${tail ? ` | ${tail}` : ''}`;
}

/**
 * Model-controlled text without terminal escape sequences or control characters, on one line: a
 * model (or text it read) must not be able to move the cursor, retitle the terminal or hide output.
 */
export function printable(text: string): string {
  return text
    .replace(/\u001b\[[0-?]*[ -/]*[@-~]/g, '')
    .replace(/\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?/g, '')
    .replace(/\u001b[@-_]?/g, '')
    .replace(/[\r\n\t]+/g, ' ')
    .replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, '');
}
