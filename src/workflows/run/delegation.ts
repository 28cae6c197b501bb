/**
 * Delegation calls: each runs a sub-agent as a child `agentTask` with a budget slice carved out of
 * this task's, on the sub-agent's queue, with an id derived from this task and the call number (so
 * no child is started twice, whatever replays or crashes). The slice is held while the child runs
 * and replaced by what it spent when it closes. Calls of one turn run at once, up to the agent's
 * concurrency limit; a child that fails, is cancelled or times out comes back as a ToolError.
 */
import {
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  ChildWorkflowCancellationType,
  ChildWorkflowFailure,
  condition,
  isCancellation,
  ParentClosePolicy,
  proxyActivities,
  startChild,
  TerminatedFailure,
  TimeoutFailure,
  WorkflowIdReusePolicy,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { AgentActivities, EarlierChild } from '../../protocol/activity-contracts';
import type { ToolManifest } from '../../protocol/agent-manifest';
import { AgentNameKey, AgentStatusKey, ParentTaskKey, WORKFLOW_TYPE } from '../../protocol/definitions';
import { childTaskId, delegationInputSchema, emptySpend, type ChildTaskSummary, type DelegatedSpend, type DelegationManifest } from '../../protocol/delegation';
import type { BranchPoint } from '../../protocol/fork';
import type { TaskInput, TaskResult } from '../../protocol/task';
import { MAX_LINEAGE_POINTS } from '../../protocol/wire-shapes';
import { isToolError, toolError, type ToolError } from '../../protocol/tool-error';
import { carveSlice, readDelegationCall } from '../../rules/budget-slice';
import { addSpend, sliceAsSpend } from '../state/child-spend';
import { tokensOf } from '../state/spend';
import type { TaskState } from '../state/task-state';
import { shortActivityOptions } from '../base/activity-options';

/** The longest child answer put into this task's conversation; the whole answer stays in the child's result. */
export const MAX_CHILD_ANSWER_CHARS = 50_000;

export type DelegationOutcome = { output: Record<string, unknown> } | { error: ToolError };

type SubagentOf = DelegationManifest['subagents'][number];
type DelegationCall = Exclude<ReturnType<typeof readDelegationCall>, ToolError>;

export class Delegation {
  private running = 0;
  /** This run's delegations by sub-agent and task text: a repeat of the same work joins the first. */
  private readonly delegated = new Map<string, { taskId: string; outcome: Promise<DelegationOutcome> }>();
  /** Delegation calls of the current turn not yet given a slice: the default slice is an equal share. */
  private unsliced = 0;

  constructor(
    private readonly manifest: DelegationManifest,
    private readonly task: { workflowId: string; firstRunId: string; taskQueue: string; depth: number },
  ) {}

  /** The delegation tools this task offers: none at the depth limit (its children could not go deeper). */
  tools(): ToolManifest[] {
    if (this.task.depth >= this.manifest.maxDepth) return [];
    return this.manifest.subagents.map((sub) => ({
      name: sub.tool,
      description: sub.description,
      inputSchema: delegationInputSchema(sub.maxTurns),
      // Gated like a read: a delegation changes nothing itself; every call the child makes meets the child's own gate.
      effect: 'read',
      idempotent: true,
      timeoutMs: 0,
      maxAttempts: 1,
      fallbacks: [],
      cacheTtlMs: 0,
      delegatesTo: sub.name,
    }));
  }

  private takePlace(): boolean {
    if (this.running >= this.manifest.maxConcurrent) return false;
    this.running += 1;
    return true;
  }

  /** Counts the turn's delegation calls before any is sliced (runTurnTools). */
  beginTurn(calls: number): void {
    this.unsliced = calls;
  }

  /**
   * Runs one delegation call; the caller has counted it as a tool call. Synchronous up to the start
   * of the child (slices are carved in the order the model made the calls), then waits for it.
   */
  async delegate(state: TaskState, tool: ToolManifest, input: unknown, toolUseId: string): Promise<DelegationOutcome> {
    const share = Math.max(1, this.unsliced);
    this.unsliced = Math.max(0, this.unsliced - 1);
    const sub = this.manifest.subagents.find((s) => s.name === tool.delegatesTo);
    if (!sub) return { error: toolError('model', 'unknown_tool', `${tool.name} delegates to no sub-agent of this agent.`) };
    const call = readDelegationCall(tool.name, input);
    if ('error_class' in call) return { error: call };
    // The same work handed to the same sub-agent again in this run: the child already on it (or done
    // with it) answers, no second child, no second slice. A child that failed leaves room for a new one.
    const work = `${sub.name}\u0000${call.task}`;
    // This call's own child id, fixed now: other calls of the turn may count on while this one waits.
    const taskId = childTaskId(this.task.workflowId, sub.name, state.toolCalls.total);
    const earlier = this.delegated.get(work);
    if (earlier) {
      const outcome = await earlier.outcome;
      if ('output' in outcome)
        return { output: { ...outcome.output, note: `The same work was already delegated to ${earlier.taskId} in this run; its answer is used, no second sub-agent was started.` } };
    }
    const running = { taskId, outcome: this.runChild(state, sub, call, share, toolUseId, taskId) };
    this.delegated.set(work, running);
    return running.outcome;
  }

  private async runChild(state: TaskState, sub: SubagentOf, call: DelegationCall, share: number, toolUseId: string, taskId: string): Promise<DelegationOutcome> {
    const slice = carveSlice(sub.name, call.budget, remainingOf(state), sub.maxTurns, share);
    if ('error_class' in slice) return { error: slice };

    const child: ChildTaskSummary = { taskId, agent: sub.name, toolUseId, state: 'waiting', slice };
    state.children.hold(child);
    try {
      // The place is taken in the same step that finds it free: calls woken together cannot both take the last one.
      if (!this.takePlace()) await condition(() => this.takePlace());
      child.state = 'running';
      try {
        const childInput: TaskInput = {
          agent: sub.name,
          prompt: call.task,
          budgets: {
            turns: slice.turns,
            toolCalls: slice.toolCalls,
            ...(slice.tokens !== undefined ? { tokens: slice.tokens } : {}),
            ...(slice.costUsd !== undefined ? { costUsd: slice.costUsd } : {}),
          },
          delegation: { depth: this.task.depth + 1, lineage: childLineage(this.task.workflowId, state, this.task.firstRunId) },
        };
        const handle = await startChild<(input: TaskInput) => Promise<TaskResult>>(WORKFLOW_TYPE, {
          workflowId: taskId,
          // A parent on its agent's own queue sends children to theirs; one on a queue that serves
          // several agents (an explicit or the legacy one) keeps them there, where its worker serves them.
          taskQueue: this.task.taskQueue === this.manifest.ownQueue ? sub.taskQueue : this.task.taskQueue,
          args: [childInput],
          // Cancelling the parent cancels the child, and waits until it has stopped (its running tools included).
          parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
          cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
          typedSearchAttributes: [
            { key: AgentStatusKey, value: 'running' },
            { key: AgentNameKey, value: sub.name },
            { key: ParentTaskKey, value: this.task.workflowId },
          ],
        });
        const result = await handle.result();
        const spent = spendOf(result);
        state.children.settle(child, 'completed', spent);
        return { output: answerOf(sub.name, taskId, result, spent) };
      } finally {
        this.running -= 1;
      }
    } catch (err) {
      // The id is taken: a lead reset after its child finished meets that child again, never runs it twice.
      if (err instanceof WorkflowExecutionAlreadyStartedError) {
        const earlier = await earlierChildOf(taskId);
        if (earlier.kind === 'completed') {
          const spent = spendOf(earlier.result);
          state.children.settle(child, 'completed', spent);
          return { output: { ...answerOf(sub.name, taskId, earlier.result, spent), note: `${taskId} finished before this run of the task started; its answer is used, it was not run again.` } };
        }
        if (earlier.kind !== 'not_ours') {
          state.children.settle(child, 'failed', emptySpend());
          const how = earlier.kind === 'running' ? 'is still running' : `ended ${earlier.status} without an answer`;
          return {
            error: toolError('permanent', 'subagent_started_before', `${sub.name} (task ${taskId}) was started by an earlier run of this task and ${how}; it was not started again.`, CHILD_HINT),
          };
        }
      }
      const failed = childFailure(err, sub.name, taskId);
      state.children.settle(child, failed.state, failed.spent ?? sliceAsSpend(slice));
      // The parent itself was cancelled: the cancellation goes on up (the child has stopped by now).
      if (failed.state === 'cancelled' && isCancellation(err) && CancellationScope.current().consideredCancelled) throw err;
      return { error: failed.error };
    }
  }
}

/**
 * The ancestry a child is started with: this task at the turn it delegated, then this task's own,
 * so the child's writes are journaled in the family's journal (docs/guarantees.md). Bounded, and
 * the family's root (the last point) always kept.
 */
export function childLineage(parentTaskId: string, state: Pick<TaskState, 'turn' | 'lineage'>, parentFirstRunId?: string): BranchPoint[] {
  const parent: BranchPoint = { taskId: parentTaskId, turn: state.turn, via: 'delegation', ...(parentFirstRunId ? { firstRunId: parentFirstRunId } : {}) };
  const lineage: BranchPoint[] = [parent, ...state.lineage.map((p) => ({ ...p }))];
  return lineage.length <= MAX_LINEAGE_POINTS ? lineage : [...lineage.slice(0, MAX_LINEAGE_POINTS - 1), lineage[lineage.length - 1]!];
}

/**
 * The ancestry a new task's input claims as a child (delegation.lineage), when Temporal agrees it
 * is that parent's child; none otherwise (a task started by hand joins no family by saying so).
 */
export function delegatedLineage(input: TaskInput, info: { parent?: { workflowId: string } }): BranchPoint[] {
  const lineage = input.delegation?.lineage;
  if (!info.parent || !lineage?.length || lineage[0]!.taskId !== info.parent.workflowId || lineage[0]!.via !== 'delegation') return [];
  return lineage.map((p) => ({ ...p }));
}

/**
 * How deep this task is under tasks started by hand: what its input says only when Temporal says it
 * has a parent workflow (a task started by hand is a top task whatever its input claims).
 */
export function delegationDepth(input: TaskInput, info: { parent?: unknown }): number {
  if (!info.parent) return 0;
  return input.delegation?.depth ?? 1;
}

/** What the parent has left to give, after what running children hold. */
function remainingOf(state: TaskState) {
  const { budgets } = state;
  return {
    turns: state.turnsLeft,
    toolCalls: state.toolCallsLeft,
    ...(budgets.tokens !== undefined ? { tokens: Math.max(0, budgets.tokens - state.tokensCommitted) } : {}),
    ...(budgets.costUsd !== undefined ? { costUsd: Math.max(0, budgets.costUsd - state.costCommitted) } : {}),
  };
}

/** A child's whole spend: its own and what its children spent. */
export function spendOf(result: Pick<TaskResult, 'turns' | 'toolCalls' | 'usage' | 'costUsd' | 'delegated'>): DelegatedSpend {
  const own: DelegatedSpend = {
    turns: result.turns,
    toolCalls: result.toolCalls,
    usage: { inputTokens: result.usage.inputTokens, outputTokens: result.usage.outputTokens, cacheWriteTokens: result.usage.cacheWriteTokens ?? 0, cacheReadTokens: result.usage.cacheReadTokens ?? 0 },
    costUsd: result.costUsd,
  };
  return result.delegated ? addSpend(own, result.delegated) : own;
}

function answerOf(agent: string, taskId: string, result: TaskResult, spent: DelegatedSpend): Record<string, unknown> {
  const cut = result.text.length > MAX_CHILD_ANSWER_CHARS;
  return {
    sub_agent: agent,
    task_id: taskId,
    outcome: result.outcome,
    answer: cut ? result.text.slice(0, MAX_CHILD_ANSWER_CHARS) : result.text,
    ...(cut ? { note: `The answer was cut at ${MAX_CHILD_ANSWER_CHARS} of ${result.text.length} characters; the whole answer is task ${taskId}'s result.` } : {}),
    spent: { turns: spent.turns, tool_calls: spent.toolCalls, tokens: tokensOf(spent.usage), cost_usd: spent.costUsd },
  };
}

/** A spend a failed child reported in its failure's details (its own code wrote it), when it did. */
function reportedSpend(value: unknown): DelegatedSpend | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const v = value as Partial<DelegatedSpend>;
  const count = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) && n >= 0 ? n : undefined);
  const [turns, toolCalls, costUsd, inputTokens, outputTokens] = [v.turns, v.toolCalls, v.costUsd, v.usage?.inputTokens, v.usage?.outputTokens].map(count);
  if (turns === undefined || toolCalls === undefined || costUsd === undefined || inputTokens === undefined || outputTokens === undefined) return undefined;
  const usage = { inputTokens, outputTokens, cacheWriteTokens: count(v.usage?.cacheWriteTokens) ?? 0, cacheReadTokens: count(v.usage?.cacheReadTokens) ?? 0 };
  return { turns, toolCalls, usage, costUsd };
}

const CHILD_HINT = 'Decide what to do: try again with a clearer or smaller task, hand it to another sub-agent, do it yourself, or tell the user.';

const { earlierChild } = proxyActivities<AgentActivities>(shortActivityOptions);

/** Whose task holds a child id this task asked for: its own earlier child (a reset run) or not. A failed look is read as not ours. */
function earlierChildOf(childId: string): Promise<EarlierChild> {
  return earlierChild({ childId }).catch((): EarlierChild => ({ kind: 'not_ours' }));
}

/** The ToolError the model reads for a child that did not complete, and what it is charged. */
function childFailure(err: unknown, agent: string, taskId: string): { state: 'failed' | 'cancelled'; error: ToolError; spent?: DelegatedSpend } {
  const hint = CHILD_HINT;
  if (err instanceof WorkflowExecutionAlreadyStartedError) {
    // Nothing ran under that id for this task: its slice goes back whole (charging it drained a reset lead's budget).
    return {
      state: 'failed',
      error: toolError('permanent', 'subagent_id_taken', `No sub-agent was started: a task with id ${taskId} already exists and is not this task's child.`, hint),
      spent: emptySpend(),
    };
  }
  const cause = err instanceof ChildWorkflowFailure ? err.cause : err;
  if (cause instanceof CancelledFailure || isCancellation(err)) {
    return { state: 'cancelled', error: toolError('policy', 'subagent_cancelled', `${agent} (task ${taskId}) was cancelled before it finished.`, hint) };
  }
  if (cause instanceof TerminatedFailure) return { state: 'failed', error: toolError('permanent', 'subagent_terminated', `${agent} (task ${taskId}) was terminated before it finished.`, hint) };
  if (cause instanceof TimeoutFailure) return { state: 'failed', error: toolError('permanent', 'subagent_timed_out', `${agent} (task ${taskId}) timed out.`, hint) };
  if (cause instanceof ApplicationFailure) {
    const inner = isToolError(cause.details?.[0]) ? cause.details[0] : undefined;
    const spent = reportedSpend(cause.details?.[1]);
    const why = inner ? `${inner.error_class}/${inner.code}: ${inner.detail}` : cause.message;
    return { state: 'failed', error: toolError('permanent', 'subagent_failed', `${agent} (task ${taskId}) failed: ${why}`, hint), ...(spent ? { spent } : {}) };
  }
  return { state: 'failed', error: toolError('permanent', 'subagent_failed', `${agent} (task ${taskId}) failed: ${err instanceof Error ? err.message : String(err)}`, hint) };
}
