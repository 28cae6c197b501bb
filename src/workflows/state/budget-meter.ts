/**
 * What the task's budgets say: how much is left, what the model is told after each turn (a
 * warning before they run out, not only after), and which spend budget is spent.
 */
import { ActivityFailure, CancelledFailure } from '@temporalio/common';
import type { CancelledModelCall } from '../../protocol/activity-contracts';
import type { TaskState } from './task-state';
import { recoveryText } from '../../protocol/recovery';
import { addCallSpend, type TaskSpend } from './spend';

type Meter = Pick<TaskState, 'turn' | 'budgets' | 'turnsLeft' | 'toolCallsLeft' | 'tokensCommitted' | 'costCommitted' | 'recovery'>;

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
  return spentRecoveryBudget(state);
}

/**
 * A recovery budget that is spent: recovering from faults (calls run again, lost model attempts)
 * cost more than the task allows, so a person looks before the engine recovers any further.
 */
function spentRecoveryBudget(state: Meter): { code: string; reason: string } | undefined {
  const { recoveryCalls, recoveryCostUsd } = state.budgets;
  const bill = state.recovery;
  const limit =
    recoveryCalls !== undefined && bill.callsRepeated >= recoveryCalls
      ? `${recoveryCalls} calls run again`
      : recoveryCostUsd !== undefined && bill.costUsdAgain >= recoveryCostUsd
        ? `$${recoveryCostUsd} of lost model attempts`
        : undefined;
  if (!limit) return undefined;
  return { code: 'recovery_budget', reason: `Recovering from faults reached the task's limit of ${limit}: ${recoveryText(bill)}. Look at what keeps failing before raising it.` };
}

/** How a task blocks for a person (People.block): true when the budget it names was raised. */
export interface Blocker {
  block(code: string, reason: string, budgetLeft: () => number): Promise<boolean>;
}

/**
 * The cap, checked before every call the engine makes for the task and bills to it (a turn's model
 * call, one after a native compaction, the summary, the grader): true when no token or cost budget
 * is spent, or when the task blocked on the spent one and a person raised it; false when they did
 * not, and the call is not made.
 */
export async function spendBudgetAllows(state: Meter, people: Blocker): Promise<boolean> {
  const spent = spentSpendBudget(state);
  if (!spent) return true;
  return people.block(spent.code, spent.reason, () => (spentSpendBudget(state) ? 0 : 1));
}

/**
 * What a cancelled model call cost, as its activity reported it (CancelledModelCall, details[0] of
 * the cancellation): undefined when it reported nothing (cancelled before it started: nothing sent).
 * Numbers are checked: a malformed report counts as nothing rather than breaking the meter.
 */
export function cancelledCallCharge(err: unknown): CancelledModelCall | undefined {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (!(cause instanceof CancelledFailure)) return undefined;
  const v = cause.details?.[0] as Partial<CancelledModelCall> | null | undefined;
  if (v === null || typeof v !== 'object' || v.usage === null || typeof v.usage !== 'object') return undefined;
  const count = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) && n >= 0 ? n : undefined);
  const inputTokens = count(v.usage.inputTokens);
  const outputTokens = count(v.usage.outputTokens);
  if (inputTokens === undefined || outputTokens === undefined) return undefined;
  const cacheWriteTokens = count(v.usage.cacheWriteTokens);
  const cacheReadTokens = count(v.usage.cacheReadTokens);
  const costUsd = count(v.costUsd);
  return {
    usage: { inputTokens, outputTokens, ...(cacheWriteTokens ? { cacheWriteTokens } : {}), ...(cacheReadTokens ? { cacheReadTokens } : {}) },
    model: typeof v.model === 'string' ? v.model.slice(0, 200) : 'unknown',
    measured: v.measured === true,
    ...(costUsd !== undefined ? { costUsd } : {}),
  };
}

/** Counts a cancelled call's cost in the task's usage and cost (every token class), and says so in the audit trail. */
export function chargeCancelledCall(state: TaskSpend & Pick<TaskState, 'audit'>, charge: CancelledModelCall): void {
  const tokens = addCallSpend(state, {
    usage: charge.usage,
    ...(charge.costUsd !== undefined ? { costUsd: charge.costUsd } : {}),
    // A call that reported no model (`unknown`) names none as unpriced.
    ...(charge.model !== 'unknown' ? { model: charge.model } : {}),
  });
  const cost = charge.costUsd !== undefined ? `, $${charge.costUsd.toFixed(4)}` : '';
  const how = charge.measured ? 'as its stream reported it' : 'at its maximum: nothing had arrived';
  state.audit.record('informed', `the cancelled model call was counted ${how} [${tokens} tokens${cost}]`);
}
