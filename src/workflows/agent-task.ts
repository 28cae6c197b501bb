/**
 * The `agentTask` workflow: the turn loop. Model activity, then the turn's tool calls through the
 * guards (turn-tools.ts), then the results back to the model, until it ends its turn. A spent budget,
 * a loop or a model that cannot form a valid call blocks the task until a person sends `unblock`.
 * Decisions live in TaskState, the ledger and the gate; this file wires messages and activities.
 */
import {
  ApplicationFailure,
  CancellationScope,
  condition,
  isCancellation,
  log,
  patched,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
  uuid4,
} from '@temporalio/workflow';
import type { AgentActivities } from '../protocol/activity-contracts';
import {
  AgentNameKey,
  AgentStatusKey,
  messageSignal,
  statusQuery,
  transcriptQuery,
  unblockUpdate,
} from '../protocol/definitions';
import { toolUsesOf } from '../protocol/messages';
import type { AgentStatus, TaskInput, TaskOutcome, TaskResult } from '../protocol/task';
import { isToolError, toolError, type ToolError } from '../protocol/tool-error';
import { describeAgentOptions, modelCallOptions } from './activity-options';
import { TaskState } from './task-state';
import { runTurnTools } from './turn-tools';

const { describeAgent } = proxyActivities<AgentActivities>(describeAgentOptions);
const { callModel } = proxyActivities<AgentActivities>(modelCallOptions);

/** Histories recorded before the ledger, budgets and escalations replay with the old behaviour. */
export const GUARDED_CALLS_PATCH = 'guarded-calls';

export async function agentTask(input: TaskInput): Promise<TaskResult> {
  assertValidInput(input);
  const state = new TaskState(input, { now: () => new Date(), newId: () => uuid4() });
  const guarded = patched(GUARDED_CALLS_PATCH);

  setHandler(statusQuery, () => state.status());
  setHandler(transcriptQuery, () => ({ system: state.manifest?.system ?? '', messages: state.messages }));
  setHandler(
    unblockUpdate,
    (request) => {
      const escalation = state.unblock(request);
      return { resumed: true as const, escalationId: escalation.id };
    },
    {
      // Runs before anything is written to history: a wrong or stale unblock leaves no trace.
      validator: (request) => {
        const problem = state.unblockProblem(request);
        if (problem) throw new Error(problem);
      },
    },
  );
  setHandler(messageSignal, (message) => {
    if (typeof message?.by !== 'string' || typeof message?.text !== 'string' || !message.text.trim()) {
      log.warn('Ignored a malformed message signal', { message });
      return;
    }
    state.addGuidance(message);
  });

  let publishedStatus: AgentStatus | undefined;
  const publishStatus = () => {
    if (state.agentStatus === publishedStatus) return;
    upsertSearchAttributes([
      { key: AgentStatusKey, value: state.agentStatus },
      { key: AgentNameKey, value: input.agent },
    ]);
    publishedStatus = state.agentStatus;
  };
  publishStatus();

  /** Waits, durably, for a person; true when they raised the budget that ran out. */
  const blockFor = async (code: string, reason: string, budgetLeft: () => number): Promise<boolean> => {
    state.block(code, reason);
    publishStatus();
    await condition(() => state.phase !== 'blocked');
    publishStatus();
    return budgetLeft() > 0;
  };

  const finish = (outcome: TaskOutcome, finalCallWithoutTools = false): TaskResult => {
    const result = state.complete(outcome, finalCallWithoutTools);
    publishStatus();
    return result;
  };

  try {
    const manifest = await describeAgent({ agent: input.agent, ...(input.model ? { model: input.model } : {}) });
    state.begin(manifest);
    const tools = new Map(manifest.tools.map((t) => [t.name, t]));
    const toolSpecs = manifest.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema }));
    let withoutTools = false;

    for (;;) {
      if (state.turnsLeft === 0 && !withoutTools) {
        if (!guarded) return finish('max_turns');
        const raised = await blockFor('turn_budget', `The task used all ${state.budgets.turns} turns.`, () => state.turnsLeft);
        // Unblocked without more turns: one last call, without tools, to answer with what it has.
        if (!raised) withoutTools = true;
      }
      state.startTurn();
      publishStatus();
      const reply = await callModel({
        model: manifest.model,
        system: manifest.system,
        messages: state.messages,
        tools: withoutTools ? [] : toolSpecs,
      });
      state.recordModelTurn(reply);

      if (reply.stopReason === 'refusal') return finish('refused');
      const uses = toolUsesOf(reply.content);
      if (uses.length === 0 || withoutTools) {
        // pause_turn: the API paused a long turn; sending the conversation back resumes it.
        if (reply.stopReason === 'pause_turn' && !withoutTools) continue;
        if (!withoutTools && state.addPendingGuidanceAsMessage()) continue;
        return finish(withoutTools ? 'budget_exhausted' : 'answered', withoutTools);
      }

      const turn = await runTurnTools({ state, agent: input.agent, tools, nowMs: () => Date.now(), guarded }, uses);
      state.addToolResults(turn.results, guarded ? [state.budgetNote()] : []);
      if (turn.perTurnBudgetSpent) withoutTools = true;
      if (turn.escalation) {
        const isBudget = turn.escalation.code === 'tool_call_budget';
        const raised = await blockFor(turn.escalation.code, turn.escalation.reason, () => (isBudget ? state.toolCallsLeft : 1));
        if (!raised) withoutTools = true;
      }
    }
  } catch (err) {
    if (isCancellation(err)) {
      state.cancel();
      await CancellationScope.nonCancellable(async () => publishStatus());
      throw err;
    }
    const error = taskErrorFrom(err);
    state.fail(error);
    publishStatus();
    // Failing the workflow (not the workflow task): a retry of the task would wedge it forever.
    throw ApplicationFailure.create({ message: error.detail, type: error.error_class, nonRetryable: true, details: [error] });
  }
}

function taskErrorFrom(err: unknown): ToolError {
  if (err instanceof ApplicationFailure && isToolError(err.details?.[0])) return err.details[0];
  const cause = (err as { cause?: unknown })?.cause;
  if (cause instanceof ApplicationFailure && isToolError(cause.details?.[0])) return cause.details[0];
  const message = err instanceof Error ? `${err.message}${cause instanceof Error ? `: ${cause.message}` : ''}` : String(err);
  return toolError('permanent', 'task_failed', message);
}

function assertValidInput(input: TaskInput): void {
  const problems: string[] = [];
  if (!input || typeof input !== 'object') problems.push('input must be an object');
  else {
    if (typeof input.agent !== 'string' || !input.agent) problems.push('`agent` must be a non-empty string');
    if (typeof input.prompt !== 'string' || !input.prompt.trim()) problems.push('`prompt` must be a non-empty string');
    if (input.maxTurns !== undefined && !(Number.isInteger(input.maxTurns) && input.maxTurns >= 1)) {
      problems.push('`maxTurns` must be an integer >= 1');
    }
    for (const [name, value] of Object.entries(input.budgets ?? {})) {
      if (!Number.isInteger(value) || (value as number) < 1) problems.push(`\`budgets.${name}\` must be an integer >= 1`);
    }
  }
  if (problems.length) {
    throw ApplicationFailure.create({ message: `Invalid task input: ${problems.join('; ')}`, type: 'invalid_input', nonRetryable: true });
  }
}
