/**
 * What an unblock may raise, and to what: the one set of rules the workflow's validator, the inbox's
 * form and the CLI's flags all apply. Each value is the budget's new total. Sandbox-safe.
 */
import type { Budgets } from '../protocol/agent-settings';
import { describeValue } from './describe-value';

export const RAISABLE_BUDGETS = ['turns', 'toolCalls', 'tokens', 'costUsd'] as const;
export type RaisableBudget = (typeof RAISABLE_BUDGETS)[number];
export type BudgetRaise = Partial<Pick<Budgets, RaisableBudget>>;

/** The largest budget a task may be given or raised to: beyond it a number stops meaning a limit. */
export const MAX_BUDGET = 1_000_000_000;

export function isRaisableBudget(name: string): name is RaisableBudget {
  return (RAISABLE_BUDGETS as readonly string[]).includes(name);
}

/** Cost is in US dollars; every other budget counts whole things. */
const isWhole = (name: RaisableBudget) => name !== 'costUsd';

/** A raise read on its own, before the task's state is known: a known budget and a finite number within MAX_BUDGET. */
export function raiseShapeProblem(name: string, value: unknown): string | undefined {
  if (!isRaisableBudget(name)) return `unknown budget "${name.slice(0, 40)}" (${RAISABLE_BUDGETS.join(', ')})`;
  if (typeof value !== 'number' || !Number.isFinite(value) || value > MAX_BUDGET) return `\`budget.${name}\` must be a finite number, got ${describeValue(value)}`;
  return undefined;
}

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
