/** unblock's budget flags: +N adds to the task's current limit, N sets it; the answer says which, before and after. */
import { describeBudgetChange, parseBudgetChange, resolveBudgetChanges } from '../../src/client/budget-change';
import type { TaskStatus } from '../../src/protocol/task';

const budgets = {
  turns: { used: 20, limit: 20, left: 0 },
  toolCalls: { used: 50, limit: 50, left: 0 },
  toolCallsPerTurn: 10,
  correctionsPerTool: 3,
  costUsd: { used: 0.3, limit: 0.3, left: 0 },
} as TaskStatus['budgets'];

test('+N adds N to the current limit and a plain N sets it; both say so with the limit before and after', () => {
  const add = parseBudgetChange('toolCalls', '+10', '--tool-calls');
  const set = parseBudgetChange('turns', '60', '--turns');
  expect(add).toEqual({ name: 'toolCalls', mode: 'add', amount: 10, raw: '+10' });
  expect(set).toEqual({ name: 'turns', mode: 'set', amount: 60, raw: '60' });
  const resolved = resolveBudgetChanges([add, set] as never, budgets);
  expect(resolved).toEqual({
    budget: { toolCalls: 60, turns: 60 },
    lines: [
      { name: 'toolCalls', mode: 'add', before: 50, after: 60, used: 50 },
      { name: 'turns', mode: 'set', before: 20, after: 60, used: 20 },
    ],
  });
  const lines = 'lines' in resolved ? resolved.lines.map(describeBudgetChange) : [];
  expect(lines).toEqual(['toolCalls limit 50 -> 60 (added 10; 50 used)', 'turns limit 20 -> 60 (set; 20 used)']);
});

test('cost adds in dollars without float noise', () => {
  const resolved = resolveBudgetChanges([parseBudgetChange('costUsd', '+0.1')] as never, budgets);
  expect(resolved).toMatchObject({ budget: { costUsd: 0.4 } });
  expect('lines' in resolved && describeBudgetChange(resolved.lines[0]!)).toBe('costUsd limit 0.3 -> 0.4 (added 0.1; 0.3 used)');
});

test('bad flags and a +N with nothing to add to are refused with the reason', () => {
  expect(parseBudgetChange('toolCalls', '+0', '--tool-calls')).toEqual({ problem: '--tool-calls +N must add a whole number of at least 1, got "+0"' });
  expect(parseBudgetChange('toolCalls', '+', '--tool-calls')).toHaveProperty('problem');
  expect(parseBudgetChange('turns', '1.5', '--turns')).toEqual({ problem: '--turns must be a whole number of at least 1 (the new limit), or +N to add N to the current limit, got "1.5"' });
  const add = parseBudgetChange('toolCalls', '+5', '--tool-calls');
  expect(resolveBudgetChanges([add] as never, undefined, () => '--tool-calls')).toEqual({
    problem: '--tool-calls +5 adds to the current limit, which could not be read (is a worker running the task?); give the new limit without +',
  });
  const noCap = { ...budgets, costUsd: undefined };
  expect(resolveBudgetChanges([parseBudgetChange('costUsd', '+1')] as never, noCap)).toHaveProperty('problem', 'costUsd +1: the task has no costUsd limit to add to; give the new limit without +');
  // A plain N without a readable status still goes: the task checks it against what is used.
  expect(resolveBudgetChanges([parseBudgetChange('toolCalls', '80')] as never, undefined)).toEqual({
    budget: { toolCalls: 80 },
    lines: [{ name: 'toolCalls', mode: 'set', before: undefined, after: 80, used: undefined }],
  });
});
