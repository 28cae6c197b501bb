/**
 * A task's recording, read from what exists for every task: its Temporal history (every run of its
 * continue-as-new chain) and the blob store its workers wrote claim-checked content to. The model's
 * turns come from the callModel activities' results; each call's result is the tool_result the model
 * read in its next call, so answers from the ledger, a fallback, an approval or a refusal are
 * recorded as the model saw them, whatever path produced them (local activities keep no input in
 * history, so the conversation is the one record that holds every call with its arguments).
 * A scripted model's script is read here, from the worker's script folders, and carried as content.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { BlobStore } from '../blobs/blob-store';
import { resolveMessages } from '../blobs/claim-check';
import type { TaskClient } from '../client/task-client';
import type { AgentManifest } from '../protocol/agent-manifest';
import { classificationsIn, manifestIn, TaskHistory, type PayloadList } from '../history/task-history';
import type { AssistantBlock, Message, ToolResultBlock, Usage } from '../protocol/messages';
import type { TaskInput, TaskResult } from '../protocol/task';
import { isToolError, type ToolError } from '../protocol/tool-error';
import { gateToolCall } from '../rules/tool-gate';
import type { ModelChoice } from '../protocol/agent-settings';
import { resolveScript, scriptFile } from '../models/scripted-model';
import { defaultScriptRoots } from '../models/script-roots';
import { RECORDING_FORMAT, RECORDING_VERSION, sealRecording, type RecordedOutcome, type RecordedScript, type RecordedToolCall, type RecordedTurn, type Recording } from './recording';

/** The blob store behind a recording: every read is listed (id and size), so the file says what it includes. */
class ListingStore {
  readonly read = new Map<string, number>();
  constructor(private readonly store: BlobStore) {}
  asStore(): BlobStore {
    return {
      description: this.store.description,
      get: async (scope, id) => {
        const text = await this.store.get(scope, id);
        this.read.set(id, text.length);
        return text;
      },
      put: () => Promise.reject(new Error('a recording never writes to the blob store')),
      purge: () => Promise.reject(new Error('a recording never deletes')),
      purgeScope: () => Promise.reject(new Error('a recording never deletes')),
      scopes: () => this.store.scopes(),
      ids: (scope) => this.store.ids(scope),
      createRecord: () => Promise.reject(new Error('a recording never writes to the blob store')),
      records: (scope) => this.store.records(scope),
      close: async () => undefined,
    };
  }
}

const text = (content: AssistantBlock[]) =>
  content
    .filter((b) => b.type === 'text')
    .map((b) => (b as { text: string }).text)
    .join('\n');

/** Who decided a call, read from the tool_result the workflow wrote for it. */
function approvalOf(result: RecordedToolCall['result']): RecordedToolCall['approval'] {
  if (!result) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(result.content);
  } catch {
    return undefined;
  }
  if (parsed && typeof parsed === 'object' && 'approval' in parsed && 'result' in parsed) {
    const by = (parsed.approval as { approved_by?: unknown } | null)?.approved_by;
    return { decision: 'approved', ...(typeof by === 'string' ? { by } : {}) };
  }
  const error = (parsed as { error?: unknown } | null)?.error;
  if (!isToolError(error)) return undefined;
  if (error.code === 'denied_by_person') return { decision: 'denied', reason: error.detail };
  if (error.code === 'approval_expired') return { decision: 'expired', reason: error.detail };
  return undefined;
}

export interface RecordTaskOptions {
  /** The store the task's workers wrote claim-checked content to. */
  blobStore: BlobStore;
  /** Default: now. */
  now?: Date;
  /** The folders a scripted model's script may be read from, as on the task's worker. Default: defaultScriptRoots(). */
  scriptRoots?: string[];
}

/**
 * The script a scripted model choice names, as content; undefined when it cannot be read here
 * (gone, outside the script folders, not a script). Read under the same rules as a worker reads
 * it: the path comes from a task's input, so nothing outside the script folders is ever included.
 */
async function recordedScript(choice: ModelChoice, roots: readonly string[]): Promise<RecordedScript | undefined> {
  if (choice.provider !== 'scripted') return undefined;
  try {
    const real = resolveScript(choice.script, roots);
    const parsed = scriptFile.safeParse(JSON.parse(await readFile(real, 'utf8')));
    return parsed.success ? { name: path.basename(real), script: parsed.data } : undefined;
  } catch {
    return undefined;
  }
}

/** A scripted choice names its script's file only: the path was the recording machine's. */
const withoutPath = (choice: ModelChoice, name?: string): ModelChoice => (choice.provider === 'scripted' ? { ...choice, script: name ?? path.basename(choice.script) } : choice);

/**
 * Reads a task's recording. Throws TaskNotFoundError for an unknown task, BlobMissingError when
 * content it needs was purged, BlobTamperedError when stored content is not what its id names.
 */
export async function recordTask(client: TaskClient, taskId: string, options: RecordTaskOptions): Promise<Recording> {
  const history = new TaskHistory(client.client);
  const decode = <T>(payloads: PayloadList): Promise<T> => history.decode<T>(payloads);
  const listing = new ListingStore(options.blobStore);
  const store = listing.asStore();
  const last = await client.describe(taskId); // TaskNotFoundError for an unknown task
  const runs = await history.chain(taskId, last.runId);

  let input: TaskInput | undefined;
  let manifest: AgentManifest | undefined;
  const turns: RecordedTurn[] = [];
  // Moves to a fallback model already noted on a turn (each run's checkpoints carry all of them).
  let movesSeen = 0;
  const results = new Map<string, ToolResultBlock>();
  const classifications = new Map<string, NonNullable<RecordedToolCall['classification']>>();
  let outcome: RecordedOutcome = { status: 'running' };
  for (const [index, run] of runs.entries()) {
    if (index === 0) input = await history.decode<TaskInput>(run.events[0]?.workflowExecutionStartedEventAttributes?.input);
    if (!manifest) {
      const described = await manifestIn(run.events, history.converter);
      if (described) {
        const { approverKeys: _keys, ...rest } = described;
        manifest = rest;
      }
    }
    // One model call after another (each waits for the one before it): a call's results, then its turn.
    for await (const { call, reply } of history.modelCalls(run.events)) {
      // A call made after a move to the next model carries it in its checkpoint (the task's progress).
      const switches = call.checkpoint?.fallback?.switches ?? [];
      const moved = switches.length > movesSeen ? switches.at(-1) : undefined;
      // The model's next request holds the results of the last turn's calls, as the model read them.
      const lastMessage = call.messages.at(-1);
      if (lastMessage?.role === 'user' && Array.isArray(lastMessage.content) && lastMessage.content.some((b) => b.type === 'tool_result')) {
        const [resolved] = call.scope ? await resolveMessages(store, call.scope, [lastMessage]) : [lastMessage];
        for (const block of (resolved as Message & { role: 'user' }).content as ToolResultBlock[]) {
          if (block.type === 'tool_result' && !results.has(block.tool_use_id)) results.set(block.tool_use_id, block);
        }
      }
      const turn = await reply();
      if (!turn) continue;
      const [resolved] = call.scope ? await resolveMessages(store, call.scope, [{ role: 'assistant', content: turn.content }]) : [{ role: 'assistant' as const, content: turn.content }];
      const content = resolved!.content as AssistantBlock[];
      turns.push({
        turn: turns.length + 1,
        model: turn.model,
        stopReason: turn.stopReason,
        text: text(content),
        toolCalls: content.filter((b) => b.type === 'tool_use').map((b) => ({ id: b.id, tool: b.name, input: b.input })),
        usage: turn.usage,
        ...(turn.costUsd !== undefined ? { costUsd: turn.costUsd } : {}),
        ...(moved ? { fallback: { from: moved.from, reason: moved.reason, code: moved.code } } : {}),
      });
      movesSeen = Math.max(movesSeen, switches.length);
    }
    for (const [useId, verdict] of await classificationsIn(run.events, history.converter)) classifications.set(useId, { verdict: verdict.verdict, reason: verdict.reason, by: verdict.by });
    for (const event of run.events) {
      const done = event.workflowExecutionCompletedEventAttributes;
      if (done) {
        const result = await decode<TaskResult>(done.result);
        outcome = { status: 'completed', outcome: result.outcome, text: result.text, ...(result.grades?.length ? { grades: result.grades } : {}) };
      }
      const failed = event.workflowExecutionFailedEventAttributes;
      if (failed) {
        const details = failed.failure?.applicationFailureInfo?.details;
        const error = details?.payloads?.length ? await decode<unknown>(details) : undefined;
        outcome = { status: 'failed', ...(isToolError(error) ? { error: error as ToolError } : { text: failed.failure?.message ?? 'failed' }) };
      }
      if (event.workflowExecutionTerminatedEventAttributes) outcome = { status: 'terminated', text: event.workflowExecutionTerminatedEventAttributes.reason ?? '' };
      if (event.workflowExecutionCanceledEventAttributes) outcome = { status: 'cancelled' };
      if (event.workflowExecutionTimedOutEventAttributes) outcome = { status: 'timed_out' };
    }
  }
  if (!input || !manifest) throw new Error(`task ${taskId} has not described its agent yet; nothing to record`);
  // The model a replay plays by default, carried as content; its path, and the manifest's, cut to a file name.
  const recordedModel = input.model ?? manifest.model;
  const modelScript = await recordedScript(recordedModel, options.scriptRoots ?? defaultScriptRoots());
  if (modelScript) {
    if (input.model) input = { ...input, model: withoutPath(input.model, modelScript.name) };
    manifest = { ...manifest, model: withoutPath(manifest.model, input.model ? undefined : modelScript.name) };
  }

  const tools = new Map(manifest.tools.map((t) => [t.name, t]));
  for (const turn of turns) {
    turn.toolCalls = turn.toolCalls.map((call) => {
      const block = results.get(call.id);
      const result = block ? { content: block.content, isError: block.is_error === true } : undefined;
      const decided = approvalOf(result);
      const asked = gateToolCall(call.tool, tools, manifest.policy ?? {}).action === 'confirm';
      // A call sent to a person that then ran and failed shows only its error: it was approved,
      // unless a policy refused it before anyone was asked (a spent budget).
      const ranAfterAsking = asked && result && !(result.isError && /"error_class":"policy"/.test(result.content));
      const approval = decided ?? (ranAfterAsking ? { decision: 'approved' as const } : asked && !result ? { decision: 'undecided' as const } : undefined);
      const classification = classifications.get(call.id);
      return { ...call, ...(result ? { result } : {}), ...(approval ? { approval } : {}), ...(classification ? { classification } : {}) };
    });
  }
  const usage: Usage = { inputTokens: 0, outputTokens: 0 };
  let costUsd = 0;
  for (const t of turns) {
    usage.inputTokens += t.usage.inputTokens;
    usage.outputTokens += t.usage.outputTokens;
    if (t.usage.cacheReadTokens) usage.cacheReadTokens = (usage.cacheReadTokens ?? 0) + t.usage.cacheReadTokens;
    if (t.usage.cacheWriteTokens) usage.cacheWriteTokens = (usage.cacheWriteTokens ?? 0) + t.usage.cacheWriteTokens;
    costUsd += t.costUsd ?? 0;
  }
  // A graded outcome's grader calls are the task's spend too (docs/outcomes.md).
  for (const g of outcome.grades ?? []) {
    usage.inputTokens += g.usage.inputTokens;
    usage.outputTokens += g.usage.outputTokens;
    costUsd += g.costUsd ?? 0;
  }
  return sealRecording({
    format: RECORDING_FORMAT,
    version: RECORDING_VERSION,
    taskId,
    exportedAt: (options.now ?? new Date()).toISOString(),
    runIds: runs.map((r) => r.runId),
    agent: input.agent,
    prompt: input.prompt,
    ...(input.model ? { modelChoice: input.model } : {}),
    ...(modelScript ? { modelScript } : {}),
    ...(input.maxTurns !== undefined ? { maxTurns: input.maxTurns } : {}),
    ...(input.budgets ? { budgets: input.budgets as Record<string, unknown> } : {}),
    manifest,
    turns,
    outcome,
    usage,
    costUsd: Math.round(costUsd * 1e6) / 1e6,
    claimChecked: [...listing.read].map(([id, bytes]) => ({ id, bytes })).sort((a, b) => a.id.localeCompare(b.id)),
  });
}
