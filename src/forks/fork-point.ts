/**
 * Where a fork starts: the origin's progress after turn N, read from the origin's history on the
 * server (a trusted source: what the origin's own workflow recorded), never from the fork's input.
 * Every model call carries the progress after the previous turn (CallModelInput.checkpoint; calls
 * of tasks older builds ran before forkable turns carry none) beside the conversation it sends; the state after turn N is the
 * checkpoint and messages of turn N+1's model call. Used by the loadForkPoint activity (the trusted
 * path) and by TaskClient.fork (to refuse bad input before anything is created).
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { BlobStore } from '../blobs/blob-store';
import { DurableAgentError } from '../errors/durable-agent-error';
import { TaskHistory, type HistoryEvent, type ModelCall, type RecordedModelCall } from '../history/task-history';
import type { AssistantBlock, Message, ModelTurn, UserBlock } from '../protocol/messages';
import { isToolError, type ToolError } from '../protocol/tool-error';
import { WORKFLOW_TYPE } from '../protocol/definitions';
import type { BranchPoint } from '../protocol/fork';
import type { ModelChoice, TaskInput, TaskSnapshot } from '../protocol/task';

export type ForkPointCode = 'fork_origin_not_found' | 'fork_turn_not_found' | 'fork_agent_mismatch' | 'fork_origin_purged';

/** Why a fork cannot start where it was asked to; `code` tells which (the CLI maps an unknown origin to exit 3). */
export class ForkPointError extends DurableAgentError {
  override readonly name = 'ForkPointError';
  constructor(
    readonly code: ForkPointCode,
    message: string,
  ) {
    super(message);
  }
}

export interface ForkPoint {
  /** Progress only (runs 0), with the fork's lineage: the origin and turn first, then the origin's own. */
  snapshot: TaskSnapshot;
  agent: string;
  /** The origin's model choice from its input, if it named one (a fork keeps it unless told otherwise). */
  model?: ModelChoice;
  /** The origin's fallback models from its input, if it named them (kept with its model: docs/model-fallback.md). */
  fallbackModels?: string[];
  /** The origin's blob scope, which the state's references point into. */
  originScope: string;
}

export async function readForkPoint(client: Client, origin: BranchPoint): Promise<ForkPoint> {
  const { taskId, turn } = origin;
  const history = new TaskHistory(client);
  let runId: string;
  try {
    const described = await client.workflow.getHandle(taskId).describe();
    if (described.type !== WORKFLOW_TYPE) throw new ForkPointError('fork_origin_not_found', `${taskId} is a ${described.type} workflow, not a task`);
    runId = described.runId;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw new ForkPointError('fork_origin_not_found', `No task with id "${taskId}"`);
    throw err;
  }
  const latestRunId = runId;
  // Runs newest first: each started with the progress after some turn (its `resume`), so the run
  // that holds turn N's record is the newest one that started at or before it.
  for (;;) {
    const started = (await firstEvent(history, taskId, runId)).workflowExecutionStartedEventAttributes!;
    const input = await history.decode<TaskInput>(started.input);
    if ((input.resume?.turn ?? 0) <= turn) {
      const found = await checkpoints(history, taskId, runId, (t) => t === turn);
      if (found.call) return pointFrom(taskId, turn, input, started.firstExecutionRunId ?? runId, found.call);
      break;
    }
    if (!started.continuedExecutionRunId) break;
    runId = started.continuedExecutionRunId;
  }
  // Past the newest checkpoint: the turn that answered (the task's last) is forkable too; else an error naming the turns there are.
  const final = await lastModelCall(history, taskId, latestRunId);
  const answered = final?.reply && !final.reply.content.some((b) => b.type === 'tool_use') ? final.reply : undefined;
  if (final && answered && turn === final.call.checkpoint!.turn + 1) {
    const started = (await firstEvent(history, taskId, latestRunId)).workflowExecutionStartedEventAttributes!;
    const input = await history.decode<TaskInput>(started.input);
    return pointAfterAnswer(pointFrom(taskId, turn, input, started.firstExecutionRunId ?? latestRunId, final.call), answered);
  }
  const lastTurn = final ? final.call.checkpoint!.turn + (answered ? 1 : 0) : undefined;
  throw new ForkPointError(
    'fork_turn_not_found',
    lastTurn === undefined
      ? `task ${taskId} records no turn a fork can start from (it has not finished a turn, or it started before forks existed)`
      : `task ${taskId} has no completed turn ${turn} to fork from: turns 0-${lastTurn} can be forked (a turn counts once the model call after it has started)`,
  );
}

/** The run's last model call: each call builds on the ones before it. */
async function lastCallOf(history: TaskHistory, events: HistoryEvent[]): Promise<RecordedModelCall | undefined> {
  let last: RecordedModelCall | undefined;
  for await (const call of history.modelCalls(events)) last = call;
  return last;
}

/** The run's last model call, when it carried a checkpoint, with its reply when it came back. */
async function lastModelCall(history: TaskHistory, taskId: string, runId: string): Promise<{ call: ModelCall; reply?: ModelTurn } | undefined> {
  const last = await lastCallOf(history, await history.events(taskId, runId));
  if (!last?.call.checkpoint) return undefined;
  const reply = await last.reply();
  return reply ? { call: last.call, reply } : { call: last.call };
}

/** The state after the turn that answered: the checkpoint before it, its answer and what it cost (as TaskState.recordModelTurn counts them). */
function pointAfterAnswer(point: ForkPoint, reply: ModelTurn): ForkPoint {
  const { snapshot } = point;
  const usage = {
    inputTokens: snapshot.usage.inputTokens + reply.usage.inputTokens,
    outputTokens: snapshot.usage.outputTokens + reply.usage.outputTokens,
    cacheWriteTokens: snapshot.usage.cacheWriteTokens + (reply.usage.cacheWriteTokens ?? 0),
    cacheReadTokens: snapshot.usage.cacheReadTokens + (reply.usage.cacheReadTokens ?? 0),
  };
  return {
    ...point,
    snapshot: {
      ...snapshot,
      model: reply.model,
      usage,
      costUsd: snapshot.costUsd + (reply.costUsd ?? 0),
      messages: [...snapshot.messages, { role: 'assistant', content: reply.content }],
    },
  };
}

/** The run's model calls with a checkpoint, in order, until `wanted` says stop: that call, and the last turn seen. */
async function checkpoints(history: TaskHistory, taskId: string, runId: string, wanted: (turn: number) => boolean): Promise<{ call?: ModelCall; lastTurn?: number }> {
  let lastTurn: number | undefined;
  for await (const { call } of history.modelCalls(await history.events(taskId, runId))) {
    if (!call.checkpoint) continue;
    lastTurn = Math.max(lastTurn ?? -1, call.checkpoint.turn);
    if (wanted(call.checkpoint.turn)) return { call, lastTurn };
  }
  return lastTurn === undefined ? {} : { lastTurn };
}

function pointFrom(taskId: string, turn: number, input: TaskInput, firstRunId: string, call: ModelCall): ForkPoint {
  const checkpoint = call.checkpoint!;
  const snapshot: TaskSnapshot = {
    ...checkpoint,
    turn,
    runs: 0,
    messages: call.messages,
    lineage: [{ taskId, turn, firstRunId }, ...(checkpoint.lineage ?? [])],
  };
  return {
    snapshot,
    agent: input.agent,
    ...(input.model ? { model: input.model } : {}),
    ...(input.fallbackModels ? { fallbackModels: input.fallbackModels } : {}),
    originScope: `${taskId}/${firstRunId}`,
  };
}

/** The ids of the stored content a state refers to (messages, archived audit entries). */
export function referencedBlobs(snapshot: TaskSnapshot): string[] {
  return [...new Set(JSON.stringify(snapshot).match(/sha256:[0-9a-f]{64}/g) ?? [])];
}

/**
 * Copies the content the origin's state refers to into the fork's scope (each task reads only its
 * own), or, without `to`, only checks it is all there. A purged origin is refused whole.
 */
export async function carryBlobs(store: BlobStore, point: ForkPoint, to?: string): Promise<number> {
  const ids = referencedBlobs(point.snapshot);
  for (const id of ids) {
    let text: string;
    try {
      text = await store.get(point.originScope, id);
    } catch (err) {
      if ((err as { code?: string }).code === 'blob_missing') {
        throw new ForkPointError('fork_origin_purged', `the stored content of ${point.originScope.split('/').slice(0, -1).join('/')} is gone from ${store.description} (purged?): ${id} is missing`);
      }
      throw err;
    }
    if (to) await store.put(to, text);
  }
  return ids.length;
}

async function firstEvent(history: TaskHistory, workflowId: string, runId: string): Promise<HistoryEvent> {
  const event = await history.firstEvent(workflowId, runId);
  if (!event?.workflowExecutionStartedEventAttributes) throw new ForkPointError('fork_origin_not_found', `the history of ${workflowId} (run ${runId}) has no start`);
  return event;
}

/** The conversation of the origin's newest model call: every turn it completed, for a recording of its reads. */
export async function latestConversation(client: Client, taskId: string): Promise<Message[]> {
  const history = new TaskHistory(client);
  return (await lastCallOf(history, await history.events(taskId)))?.call.messages ?? [];
}

/**
 * The reads the origin made after the branch point, as the model saw them: each read tool_use in
 * `after` that `before` (the conversation at the branch point) does not hold, with its successful
 * result parsed from JSON (a result a semantic check flagged keeps its note). Errors, results
 * answered from the ledger and results compacted away are left out: those reads run again.
 */
export function readsAfter(before: Message[], after: Message[], isRead: (tool: string) => boolean): { tool: string; input: unknown; output: unknown; note?: ToolError }[] {
  const blocksOf = (messages: Message[]): (AssistantBlock | UserBlock)[] => messages.flatMap((m): (AssistantBlock | UserBlock)[] => (typeof m.content === 'string' ? [] : m.content));
  const answered = new Set(blocksOf(before).flatMap((b) => (b.type === 'tool_use' ? [b.id] : [])));
  const uses = new Map<string, { tool: string; input: unknown }>();
  for (const block of blocksOf(after)) if (block.type === 'tool_use' && !answered.has(block.id) && isRead(block.name)) uses.set(block.id, { tool: block.name, input: block.input });
  const out: { tool: string; input: unknown; output: unknown; note?: ToolError }[] = [];
  for (const block of blocksOf(after)) {
    if (block.type !== 'tool_result' || block.is_error || typeof block.content !== 'string') continue;
    const use = uses.get(block.tool_use_id);
    if (!use) continue;
    let output: unknown;
    try {
      output = JSON.parse(block.content);
    } catch {
      continue;
    }
    const keys = output !== null && typeof output === 'object' && !Array.isArray(output) ? Object.keys(output).sort().join(',') : '';
    if (keys === 'ledger,result') continue;
    const flagged = output as { data: unknown; note: unknown };
    if (keys === 'data,note' && isToolError(flagged.note)) out.push({ ...use, output: flagged.data, note: flagged.note });
    else if (keys !== 'data,note') out.push({ ...use, output });
  }
  return out;
}
