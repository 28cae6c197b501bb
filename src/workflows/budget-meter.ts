/**
 * What the task's budgets say: how much is left, what the model is told after each turn (a
 * warning before they run out, not only after), and which spend budget is spent.
 */
import type { TaskState } from './task-state';

type Meter = Pick<TaskState, 'turn' | 'budgets' | 'turnsLeft' | 'toolCallsLeft' | 'tokensCommitted' | 'costCommitted'>;

/** What the model is told about its budgets after each turn, with a warning before they run out. */
export function budgetNote(state: Meter): string {
  const turnsLeft = state.turnsLeft;
  const callsLeft = state.toolCallsLeft;
  const parts = [`[budget] turn ${state.turn} of ${state.budgets.turns}; ${callsLeft} of ${state.budgets.toolCalls} tool calls left.`];
  if (state.budgets.tokens !== undefined) parts.push(`${Math.max(0, state.budgets.tokens - state.tokensCommitted)} of ${state.budgets.tokens} tokens left.`);
  if (state.budgets.costUsd !== undefined) parts.push(`$${Math.max(0, state.budgets.costUsd - state.costCommitted).toFixed(4)} of $${state.budgets.costUsd} left.`);
  if (turnsLeft <= Math.max(2, Math.floor(state.budgets.turns * 0.2)) || callsLeft <= Math.max(3, Math.floor(state.budgets.toolCalls * 0.2))) {
    parts.push('Warning: the budget is nearly spent; finish with what you have rather than starting new work.');
  }
  return parts.join(' ');
}

/** The token or cost budget that is spent, if one is. */
export function spentSpendBudget(state: Meter): { code: string; reason: string } | undefined {
  const { tokens, costUsd } = state.budgets;
  if (tokens !== undefined && state.tokensCommitted >= tokens) {
    return { code: 'token_budget', reason: `The task used ${state.tokensCommitted} of its ${tokens} tokens.` };
  }
  if (costUsd !== undefined && state.costCommitted >= costUsd) {
    return { code: 'cost_budget', reason: `The task spent $${state.costCommitted.toFixed(4)} of its $${costUsd} budget.` };
  }
  return undefined;
}
