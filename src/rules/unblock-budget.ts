/**
 * What an unblock may raise, and to what: the one set of rules the workflow's validator, the inbox's
 * form and the CLI's flags all apply. Each value is the budget's new total. Sandbox-safe.
 */
import { type RaisableBudget, raiseShapeProblem } from '../protocol/wire-shapes';

// The shape of a raise is part of the unblock's wire shape; the rules against what is used live here.
export { type BudgetRaise, isRaisableBudget, MAX_BUDGET, RAISABLE_BUDGETS, type RaisableBudget, raiseShapeProblem } from '../protocol/wire-shapes';

/** Costs are in US dollars; every other budget counts whole things. */
const isWhole = (name: RaisableBudget) => name !== 'costUsd' && name !== 'recoveryCostUsd';

/** A well-shaped raise against what the task has used: a whole number (but cost) above it. */
export function raiseAboveUsedProblem(name: RaisableBudget, value: number, used: number): string | undefined {
  if ((isWhole(name) && !Number.isInteger(value)) || value <= used) {
    return `budget.${name} must be ${isWhole(name) ? 'an integer' : 'a number'} above what is used (${used}), got ${JSON.stringify(value)}`;
  }
  return undefined;
}

/**
 * A person's text (a form field, a flag) as a new total. Front ends do not know what is used, so
 * they refuse what no task could take (nothing, zero, a fraction of a turn); the task checks the rest.
 */
export function parseBudgetRaise(name: RaisableBudget, raw: string, label: string = name): { value: number } | { problem: string } {
  const text = raw.trim();
  const value = text === '' ? Number.NaN : Number(text);
  if (raiseShapeProblem(name, value) || raiseAboveUsedProblem(name, value, 0)) {
    return { problem: `${label} must be ${isWhole(name) ? 'a whole number of at least 1' : 'a positive number of US dollars'} (the new total), got "${raw}"` };
  }
  return { value };
}
