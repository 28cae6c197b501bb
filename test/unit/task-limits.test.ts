/**
 * Issue 13 items 10 and 13: the numbers a task decides by are pinned in its state and carried across
 * continue-as-new; validator messages say which field has which problem.
 */
import { approveProblem, taskInputProblem, unblockShapeProblem } from '../../src/workflows/base/input-checks';
import { DEFAULT_LIMITS, LEGACY_LIMITS } from '../../src/rules/task-limits';
import { TaskState } from '../../src/workflows/state/task-state';
import { restoreTask, snapshotOf } from '../../src/workflows/state/task-snapshot';

const clock = { now: () => new Date(0), newId: () => 'id' };
const input = { agent: 'demo', prompt: 'x' };

test('10. a snapshot carries the limits its task started with; a later default does not change a task in flight', () => {
  const state = new TaskState(input, clock, { ...DEFAULT_LIMITS, loopThreshold: 5, maxConversationMessages: 42 });
  const snapshot = JSON.parse(JSON.stringify(snapshotOf(state)));
  const restored = restoreTask(input, clock, snapshot);
  expect(restored.limits).toMatchObject({ rulesVersion: 2, loopThreshold: 5, maxConversationMessages: 42 });
});

test('10. a snapshot from before pinned limits restores with the legacy limits it was recorded with', () => {
  const state = new TaskState(input, clock, DEFAULT_LIMITS);
  const { limits: _dropped, ...old } = JSON.parse(JSON.stringify(snapshotOf(state)));
  expect(restoreTask(input, clock, old).limits).toEqual(LEGACY_LIMITS);
});

test('13. a wrong type is named as a wrong type, a missing field as missing', () => {
  expect(approveProblem({ approvalId: 42, by: 'a' })).toBe('`approvalId` must be a string, got number 42');
  expect(approveProblem({ by: 'a' })).toBe('`approvalId` is required');
  expect(approveProblem({ approvalId: 'x', by: 'a', comment: 42 })).toBe('`comment` must be a string, got number 42');
  expect(approveProblem({ approvalId: 'x', by: 'a', sneaky: 1 })).toMatch(/unknown field `sneaky`/);
  expect(unblockShapeProblem({ by: 'a', budget: { turns: 'many' } })).toBe('`budget.turns` must be a finite number, got a string');
  expect(unblockShapeProblem({ by: 'a', maxTokens: 0 })).toMatch(/`maxTokens` must be an integer from 1/);
  expect(taskInputProblem({ agent: 'demo', prompt: 'x', continueAsNewEveryTurns: 0 })).toMatch(/`continueAsNewEveryTurns` must be an integer from 1 to 10000, got number 0/);
  expect(taskInputProblem({ agent: 'demo', prompt: 'x', model: { provider: 'scripted', script: 1 } })).toBe('`script` must be a string, got number 1');
});
