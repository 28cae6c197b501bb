/** The unblock budget rules the workflow, the inbox and the CLI share (src/rules/unblock-budget.ts). */
import { MAX_BUDGET, parseBudgetRaise, raiseAboveUsedProblem, raiseShapeProblem } from '../../src/rules/unblock-budget';
import { unblockShapeProblem } from '../../src/workflows/base/input-checks';

test('a raise names a known budget and a finite number within the maximum', () => {
  expect(raiseShapeProblem('turns', 40)).toBeUndefined();
  expect(raiseShapeProblem('minutes', 5)).toBe('unknown budget "minutes" (turns, toolCalls, tokens, costUsd, recoveryCalls, recoveryCostUsd)');
  expect(raiseShapeProblem('turns', Infinity)).toBe('`budget.turns` must be a finite number, got number null');
  expect(raiseShapeProblem('tokens', MAX_BUDGET + 1)).toMatch(/must be a finite number/);
  expect(raiseShapeProblem('costUsd', '5')).toBe('`budget.costUsd` must be a finite number, got a string');
});

test('against what is used: whole numbers above it, cost any amount above it', () => {
  expect(raiseAboveUsedProblem('turns', 3, 2)).toBeUndefined();
  expect(raiseAboveUsedProblem('turns', 2, 2)).toBe('budget.turns must be an integer above what is used (2), got 2');
  expect(raiseAboveUsedProblem('turns', 2.5, 2)).toMatch(/must be an integer/);
  expect(raiseAboveUsedProblem('costUsd', 2.5, 2)).toBeUndefined();
  expect(raiseAboveUsedProblem('costUsd', 1.5, 2)).toBe('budget.costUsd must be a number above what is used (2), got 1.5');
});

test('a front end reads a new total from text by the same rules, and the workflow validator refuses what a front end would', () => {
  expect(parseBudgetRaise('turns', ' 40 ')).toEqual({ value: 40 });
  expect(parseBudgetRaise('costUsd', '2.5')).toEqual({ value: 2.5 });
  expect(parseBudgetRaise('turns', '0')).toEqual({ problem: 'turns must be a whole number of at least 1 (the new total), got "0"' });
  expect(parseBudgetRaise('turns', '1.5', '--turns')).toEqual({ problem: '--turns must be a whole number of at least 1 (the new total), got "1.5"' });
  expect(parseBudgetRaise('costUsd', 'Infinity', '--cost-usd')).toEqual({ problem: '--cost-usd must be a positive number of US dollars (the new total), got "Infinity"' });
  expect(parseBudgetRaise('tokens', String(MAX_BUDGET * 10))).toHaveProperty('problem');
  expect(unblockShapeProblem({ by: 'a', budget: { tokens: MAX_BUDGET * 10 } })).toMatch(/budget.tokens` must be a finite number/);
  expect(unblockShapeProblem({ by: 'a', budget: { minutes: 5 } })).toMatch(/unknown budget "minutes"/);
});
