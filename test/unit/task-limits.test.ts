/**
 * Issue 13 items 10 and 13: the numbers a task decides by are pinned in its state and carried across
 * continue-as-new; validator messages say which field has which problem. Issue 36 point 4: a run
 * resumes a snapshot an older build wrote (the first release's rules, schema 1) under today's rules,
 * its progress kept, and refuses one pinned to rules it does not know with a clear error.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { TaskSnapshot } from '../../src/protocol/task';
import { approveProblem, taskInputProblem, unblockShapeProblem } from '../../src/workflows/base/input-checks';
import { DEFAULT_LIMITS, RULES_VERSION } from '../../src/rules/task-limits';
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

/** The snapshot the first release handed its next run: the input of the archived continued-as-new-run history. */
function firstReleaseSnapshot(): TaskSnapshot {
  const history = JSON.parse(readFileSync(path.join(__dirname, '../histories/archive/continued-as-new-run.json'), 'utf8'));
  const payload = history.events[0].workflowExecutionStartedEventAttributes.input.payloads[0];
  return JSON.parse(Buffer.from(payload.data, 'base64').toString('utf8')).resume;
}

test("a snapshot the first release wrote (no limits, schema 1 with its manifest) resumes under today's rules with its progress", () => {
  const old = firstReleaseSnapshot();
  expect(old.limits).toBeUndefined();
  expect(old.schemaVersion).toBeUndefined();
  expect(old.manifest).toBeDefined();
  const restored = restoreTask(input, clock, old);
  expect(restored.limits).toEqual(DEFAULT_LIMITS);
  expect(restored.turn).toBe(old.turn);
  expect(restored.messages).toEqual(old.messages);
  expect(restored.toolCalls).toEqual(old.toolCalls);
  expect(restored.costUsd).toBe(old.costUsd);
  expect(restored.ledger.size).toBe(Object.keys((old.ledger as { records: object }).records).length);
  // The manifest it carried is not trusted: the run asks its worker (configureRun).
  expect(restored.manifest).toBeUndefined();
  // Its next snapshot is today's: schema 2, today's rules, no manifest.
  const next = snapshotOf(restored);
  expect(next).toMatchObject({ schemaVersion: 2, limits: { rulesVersion: RULES_VERSION } });
  expect(next.manifest).toBeUndefined();
});

test("rules version 1 limits, and lists an older build did not write, give way to today's rules", () => {
  const { unpricedModels: _u, decisions: _d, pendingGuidance: _p, events: _e, eventCount: _c, ...sparse } = firstReleaseSnapshot();
  const restored = restoreTask(input, clock, { ...sparse, limits: { rulesVersion: 1, loopThreshold: 9, snapshotCeilingBytes: Number.MAX_SAFE_INTEGER } } as TaskSnapshot);
  expect(restored.limits).toEqual(DEFAULT_LIMITS);
  expect(restored.decisions).toEqual([]);
  expect(restored.conversation.pendingGuidance).toEqual([]);
  expect(snapshotOf(restored).events).toEqual([]);
});

test('a snapshot pinned to rules this build does not know is refused with a clear error, not misread', () => {
  const state = new TaskState(input, clock, DEFAULT_LIMITS);
  const snapshot = JSON.parse(JSON.stringify(snapshotOf(state)));
  snapshot.limits.rulesVersion = RULES_VERSION + 1;
  expect(() => restoreTask(input, clock, snapshot)).toThrow(`the snapshot pins rules version ${RULES_VERSION + 1}; this build runs rules version ${RULES_VERSION} and cannot resume it`);
  expect(() => restoreTask(input, clock, { ...snapshot, limits: DEFAULT_LIMITS, schemaVersion: 3 })).toThrow(/snapshot schema 3 is not one this code reads/);
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
