/**
 * What a person asks of a spent budget at unblock: `+N` adds N to the task's current limit, a plain
 * `N` sets the limit to N. The task takes only a new total (an unblock's `budget`), so the client
 * reads the current limit from the task's status and sends the absolute limit; the answer says the
 * limit before and after, and which of the two was done.
 */
import type { TaskStatus } from '../protocol/task';
import { type BudgetRaise, parseBudgetRaise, type RaisableBudget, raiseShapeProblem } from '../rules/unblock-budget';

export type BudgetChange = { name: RaisableBudget; mode: 'add' | 'set'; amount: number; raw: string };

/** One budget flag's text: `+N` (add N to the current limit) or `N` (the new limit). */
export function parseBudgetChange(name: RaisableBudget, raw: string, label: string = name): BudgetChange | { problem: string } {
  const text = raw.trim();
  if (!text.startsWith('+')) {
    const set = parseBudgetRaise(name, text, label);
    if ('problem' in set) return { problem: `${set.problem.replace(/ \(the new total\), got .*$/, '')} (the new limit), or +N to add N to the current limit, got "${raw}"` };
    return { name, mode: 'set', amount: set.value, raw };
  }
  const add = parseBudgetRaise(name, text.slice(1), label);
  if ('problem' in add) return { problem: `${label} +N must add ${inDollars(name) ? 'a positive number of US dollars' : 'a whole number of at least 1'}, got "${raw}"` };
  return { name, mode: 'add', amount: add.value, raw };
}

export type BudgetChangeLine = { name: RaisableBudget; mode: 'add' | 'set'; before: number | undefined; after: number; used: number | undefined };

/** A limit's reading in the task's status; undefined when the task has no such limit (no cost cap). */
function reading(budgets: TaskStatus['budgets'] | undefined, name: RaisableBudget): { limit: number; used: number } | undefined {
  const r = budgets?.[name];
  return r && typeof r === 'object' ? { limit: r.limit, used: r.used } : undefined;
}

/** Cents, not float noise: 0.1 + 0.2 is 0.3 here. */
const tidy = (name: RaisableBudget, n: number) => (inDollars(name) ? Math.round(n * 1e6) / 1e6 : n);

function inDollars(name: RaisableBudget): boolean {
  return name === 'costUsd' || name === 'recoveryCostUsd';
}

/**
 * The absolute limits to send, from the changes and the task's current budgets (`undefined` when
 * they could not be read: then a `+N` is refused, since there is nothing to add it to).
 */
export function resolveBudgetChanges(
  changes: BudgetChange[],
  budgets: TaskStatus['budgets'] | undefined,
  label: (name: RaisableBudget) => string = (n) => n,
): { budget: BudgetRaise; lines: BudgetChangeLine[] } | { problem: string } {
  const budget: BudgetRaise = {};
  const lines: BudgetChangeLine[] = [];
  for (const change of changes) {
    const current = reading(budgets, change.name);
    if (change.mode === 'add' && !budgets)
      return { problem: `${label(change.name)} ${change.raw} adds to the current limit, which could not be read (is a worker running the task?); give the new limit without +` };
    if (change.mode === 'add' && !current) return { problem: `${label(change.name)} ${change.raw}: the task has no ${change.name} limit to add to; give the new limit without +` };
    const after = tidy(change.name, change.mode === 'add' ? current!.limit + change.amount : change.amount);
    const shape = raiseShapeProblem(change.name, after);
    if (shape) return { problem: `${label(change.name)} ${change.raw}: ${shape}` };
    budget[change.name] = after;
    lines.push({ name: change.name, mode: change.mode, before: current?.limit, after, used: current?.used });
  }
  return { budget, lines };
}

/** One line per budget: `toolCalls limit 50 -> 60 (added 10; 50 used)`. */
export function describeBudgetChange(line: BudgetChangeLine): string {
  const how = line.mode === 'add' ? `added ${tidy(line.name, line.after - (line.before ?? 0))}` : 'set';
  const used = line.used !== undefined ? `; ${line.used} used` : '';
  return `${line.name} limit ${line.before ?? 'unknown'} -> ${line.after} (${how}${used})`;
}
