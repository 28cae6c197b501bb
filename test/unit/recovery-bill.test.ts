/**
 * What recovering from faults costs a task (issue 49 item 5): each call's recovery as its activity
 * reports it, the bill that adds them up (a malformed report adds nothing), and the recovery budget
 * that asks a person when the bill reaches it.
 */
import { attemptRecovery, lostAttemptUsage, modelCallRecovery } from '../../src/activities/attempt-recovery';
import { recoveryText } from '../../src/protocol/recovery';
import { raiseShapeProblem } from '../../src/protocol/wire-shapes';
import { spentSpendBudget } from '../../src/workflows/state/budget-meter';
import { addRecovery, anyRecovery, emptyRecoveryBill } from '../../src/workflows/state/recovery-bill';
import { TaskState } from '../../src/workflows/state/task-state';

const info = (attempt: number, waitedMs = 0) => ({ attempt, scheduledTimestampMs: 1_000, currentAttemptScheduledTimestampMs: 1_000 + waitedMs });

test('a call answered at its first try has no recovery; a later attempt or a re-read counts, with the time since the first was scheduled', () => {
  expect(attemptRecovery(info(1))).toBeUndefined();
  expect(attemptRecovery(info(3, 2_400))).toEqual({ repeated: 2, waitedMs: 2_400 });
  expect(attemptRecovery(info(1), 2)).toEqual({ repeated: 2, waitedMs: 0 });
});

test("a lost model attempt's tokens: the planned input once it had streamed, and its output at four characters a token", () => {
  expect(lostAttemptUsage(undefined, 900)).toBeUndefined();
  expect(lostAttemptUsage({ outputChars: 0, thinkingChars: 0, tail: '' }, 900)).toBeUndefined();
  expect(lostAttemptUsage({ outputChars: 1_001, thinkingChars: 399, tail: '' }, 900)).toEqual({ inputTokens: 900, outputTokens: 350 });
  // A heartbeat is a workflow input's cousin: whatever it holds, the numbers are read defensively.
  expect(lostAttemptUsage({ outputChars: 'lots', thinkingChars: -5 }, undefined)).toBeUndefined();
  expect(lostAttemptUsage('garbage', 900)).toBeUndefined();
});

test("a model call's recovery prices the lost attempt at the model's prices, and says nothing of a price it does not have", () => {
  const prices = { 'claude-x': { input: 3, output: 15 } };
  const progress = { outputChars: 4_000, thinkingChars: 0, tail: '' };
  expect(modelCallRecovery(info(1), progress, () => 1_000, 'claude-x', prices)).toBeUndefined();
  const priced = modelCallRecovery(info(2, 1_500), progress, () => 1_000, 'claude-x', prices);
  expect(priced).toEqual({ repeated: 1, waitedMs: 1_500, tokensAgain: 2_000, costUsdAgain: expect.closeTo((1_000 * 3 + 1_000 * 15) / 1e6, 10) });
  expect(modelCallRecovery(info(2), progress, () => undefined, 'own-model', prices)).toEqual({ repeated: 1, waitedMs: 0, tokensAgain: 1_000 });
  expect(modelCallRecovery(info(2), undefined, () => 1_000, 'claude-x', prices)).toEqual({ repeated: 1, waitedMs: 0 });
});

test('the bill adds every report, and a malformed one adds nothing', () => {
  const bill = emptyRecoveryBill();
  expect(anyRecovery(bill)).toBe(false);
  addRecovery(bill, { repeated: 2, waitedMs: 1_200 });
  addRecovery(bill, { repeated: 1, waitedMs: 300, tokensAgain: 500, costUsdAgain: 0.002 });
  addRecovery(bill, undefined);
  addRecovery(bill, { repeated: Number.NaN, waitedMs: -4, tokensAgain: Infinity, costUsdAgain: -1 } as never);
  expect(bill).toEqual({ callsRepeated: 3, tokensAgain: 500, costUsdAgain: 0.002, waitedMs: 1_500 });
  expect(recoveryText(bill)).toBe('3 calls run again, ~500 tokens of lost model attempts ($0.0020), 1.5 s waited');
});

test('a recovery budget reached asks a person (recovery_budget); none set, the bill never blocks', () => {
  const state = new TaskState({ agent: 'a', prompt: 'x' }, { now: () => new Date(0), newId: () => 'id' });
  state.addToolRecovery({ repeated: 40, waitedMs: 60_000 });
  expect(spentSpendBudget(state)).toBeUndefined();
  state.budgets = { ...state.budgets, recoveryCalls: 40 };
  expect(spentSpendBudget(state)).toEqual({
    code: 'recovery_budget',
    reason: "Recovering from faults reached the task's limit of 40 calls run again: 40 calls run again, 60.0 s waited. Look at what keeps failing before raising it.",
  });
  state.budgets = { ...state.budgets, recoveryCalls: 50, recoveryCostUsd: 0.01 };
  expect(spentSpendBudget(state)).toBeUndefined();
  state.addSpend({ usage: { inputTokens: 0, outputTokens: 0 }, recovery: { repeated: 1, waitedMs: 0, tokensAgain: 4_000, costUsdAgain: 0.012 } });
  // The lost attempt is billed to recovery, not to the task's usage (the API never reported it).
  expect(state.usage.inputTokens + state.usage.outputTokens).toBe(0);
  expect(spentSpendBudget(state)).toEqual({
    code: 'recovery_budget',
    reason: expect.stringContaining("reached the task's limit of $0.01 of lost model attempts: 41 calls run again, ~4000 tokens of lost model attempts ($0.0120)"),
  });
});

test('an unblock may raise the recovery budgets: whole calls, and dollars', () => {
  expect(raiseShapeProblem('recoveryCalls', 10)).toBeUndefined();
  expect(raiseShapeProblem('recoveryCostUsd', 0.5)).toBeUndefined();
  expect(raiseShapeProblem('recoveryCalls', 'ten')).toMatch(/finite number/);
});
