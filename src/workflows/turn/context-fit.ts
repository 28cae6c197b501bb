/**
 * Makes room in the conversation before a model call, by the task's strategy (ContextState):
 * native compaction needs nothing here (the model call carries its trigger) unless the API would
 * refuse the prompt; a model without it gets a summary of the turns that leave, written by a
 * summary call with its own budget; trimming without a summary is the last resort and says why.
 */
import { isCancellation, proxyActivities } from '@temporalio/workflow';
import { COMPACTION_MIN_TRIGGER_TOKENS } from '../../protocol/compaction';
import type { AgentActivities } from '../../protocol/activity-contracts';
import { DEFAULT_SUMMARY_TOKENS } from '../../protocol/agent-settings';
import type { ModelChoice } from '../../protocol/task';
import { taskErrorFrom } from '../base/activity-failures';
import { summaryCallOptions } from '../base/activity-options';
import { spendBudgetAllows, type Blocker } from '../state/budget-meter';
import { newContextState } from '../state/conversation';
import type { Run } from '../run/run-setup';
import type { TaskState } from '../state/task-state';
import { modelIdNow } from '../state/model-fallback';

const { summarizeTurns } = proxyActivities<AgentActivities>(summaryCallOptions);

/** The summary's output limit, in tokens. */
export const SUMMARY_MAX_TOKENS = 2_048;

/** The input tokens at which the API compacts: the task's compaction budget, never below the API's minimum. */
export function compactionTrigger(state: TaskState, contextWindowTokens: number): number {
  return Math.max(COMPACTION_MIN_TRIGGER_TOKENS, Math.floor(contextWindowTokens * state.limits.compactAtRatio));
}

/**
 * False when a summary was due and the task's token or cost budget was spent: the task blocked on it
 * as for a turn, a person did not raise it, and no summary was made (the task ends budget_exhausted).
 */
export async function fitContext(run: Run, people: Blocker, model: ModelChoice, contextWindowTokens: number, extraChars: number): Promise<boolean> {
  const { state } = run;
  const conversation = state.conversation;
  // Decided once per task, the first time its conversation needs room (the trigger follows the window then).
  conversation.context ??= newContextState(compactionTrigger(state, contextWindowTokens));
  const context = conversation.context;
  if (context.native !== false) {
    // The API compacts at the trigger; past the whole window it would refuse the call, so the oldest turns go now.
    if (conversation.estimatedPromptTokens(extraChars) > contextWindowTokens) {
      conversation.leaveTurns(conversation.turnsToLeave(contextWindowTokens, extraChars), 0, undefined, 'the conversation passed the whole context window before the API compacted it', state.turn);
    }
    return true;
  }
  const stubbed = conversation.stubForContext(contextWindowTokens, extraChars);
  const pairs = conversation.turnsToLeave(contextWindowTokens, extraChars);
  if (pairs === 0) {
    if (stubbed) state.audit.record('informed', `compacted the conversation for the context window: ${stubbed} older tool results stubbed`);
    return true;
  }
  const refused = summaryBudgetProblem(state);
  if (refused) {
    conversation.leaveTurns(pairs, stubbed, undefined, refused, state.turn);
    return true;
  }
  // The summary is a call billed to the task: not made past its spent token or cost budget.
  if (!(await spendBudgetAllows(state, people))) return false;
  const previous = conversation.summary;
  try {
    const result = await summarizeTurns({
      model,
      ...(modelIdNow(state) ? { modelId: modelIdNow(state) } : {}),
      scope: run.scope,
      ...(previous ? { previousSummary: previous } : {}),
      messages: conversation.messages.slice(1, 1 + 2 * pairs),
      maxTokens: SUMMARY_MAX_TOKENS,
    });
    // The summary call is the task's spend too: its tokens (every class) and USD count against the task's budgets.
    state.addSpend(result);
    conversation.leaveTurns(pairs, stubbed, { text: result.summary, usage: result.usage, ...(result.costUsd !== undefined ? { costUsd: result.costUsd } : {}) }, undefined, state.turn);
  } catch (err) {
    if (isCancellation(err)) throw err;
    const error = taskErrorFrom(err);
    context.summaries.failed += 1;
    conversation.leaveTurns(pairs, stubbed, undefined, `the summary call failed: ${error.error_class}/${error.code}: ${error.detail}`, state.turn);
  }
  return true;
}

/** Why no summary call may be made now (its token or USD budget is spent), or undefined. */
export function summaryBudgetProblem(state: TaskState): string | undefined {
  const spent = state.conversation.context!.summaries;
  const tokens = state.budgets.summaryTokens ?? DEFAULT_SUMMARY_TOKENS;
  const used = spent.usage.inputTokens + spent.usage.outputTokens;
  if (used >= tokens) return `the summary token budget is spent (${used} of ${tokens})`;
  const usd = state.budgets.summaryCostUsd;
  if (usd !== undefined && spent.costUsd >= usd) return `the summary USD budget is spent ($${spent.costUsd.toFixed(4)} of $${usd})`;
  return undefined;
}
