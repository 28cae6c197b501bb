/**
 * The one function that adds a call's spend to the task's (src/workflows/state/spend.ts), without a
 * server: every token class the API bills counts (input, output, cache writes, cache reads, a native
 * compaction's), a call without a price names its model, and every site that adds spend (a turn, a
 * grade, a cancelled call, a closed child) goes through it, so the token budget sees cache tokens and
 * the check before a call blocks on them.
 */
import type { CancelledModelCall } from '../../src/protocol/activity-contracts';
import { emptySpend, type ChildTaskSummary } from '../../src/protocol/delegation';
import { chargeCancelledCall, spendBudgetAllows, spentSpendBudget, type Blocker } from '../../src/workflows/state/budget-meter';
import { ChildSpend } from '../../src/workflows/state/child-spend';
import { notGraded, outcomeStatusOf, recordGrade } from '../../src/workflows/state/grades';
import { addCallSpend, tokensOf, type TaskSpend } from '../../src/workflows/state/spend';
import { TaskState } from '../../src/workflows/state/task-state';
import { statusOf } from '../../src/workflows/state/task-status';
import { outcomeVerdict } from '../../src/protocol/outcome';

const clock = { now: () => new Date('2026-11-29T10:00:00Z'), newId: () => 'id' };
const emptyTaskSpend = (): TaskSpend => ({ usage: { inputTokens: 0, outputTokens: 0, cacheWriteTokens: 0, cacheReadTokens: 0 }, costUsd: 0, unpricedModels: [] });
/** The numbers: a small prompt and answer over a large cached prefix. */
const CACHED_TURN = { inputTokens: 13, outputTokens: 500, cacheWriteTokens: 2_000, cacheReadTokens: 70_000 };

describe('addCallSpend', () => {
  test('adds every token class and the USD, and returns the tokens added', () => {
    const spend = emptyTaskSpend();
    expect(addCallSpend(spend, { usage: CACHED_TURN, costUsd: 0.05, model: 'claude-opus-4-5' })).toBe(72_513);
    expect(addCallSpend(spend, { usage: { inputTokens: 7, outputTokens: 3 }, costUsd: 0.01, model: 'claude-opus-4-5' })).toBe(10);
    expect(spend.usage).toEqual({ inputTokens: 20, outputTokens: 503, cacheWriteTokens: 2_000, cacheReadTokens: 70_000 });
    expect(spend.costUsd).toBeCloseTo(0.06, 12);
    expect(spend.unpricedModels).toEqual([]);
    expect(tokensOf(spend.usage)).toBe(72_523);
  });

  test("a native compaction's usage (billed apart from the top level) is added with the call's; its USD is already in the call's", () => {
    const spend = emptyTaskSpend();
    const added = addCallSpend(spend, {
      usage: { inputTokens: 100, outputTokens: 10, cacheReadTokens: 50 },
      costUsd: 0.02,
      model: 'm',
      compaction: { usage: { inputTokens: 4_000, outputTokens: 300, cacheWriteTokens: 5 } },
    });
    expect(added).toBe(4_465);
    expect(spend.usage).toEqual({ inputTokens: 4_100, outputTokens: 310, cacheWriteTokens: 5, cacheReadTokens: 50 });
    expect(spend.costUsd).toBeCloseTo(0.02, 12);
  });

  test('a call without a price names its model once; a script never does; a call without a model names none', () => {
    const spend = emptyTaskSpend();
    addCallSpend(spend, { usage: { inputTokens: 1, outputTokens: 1 }, model: 'local-llm' });
    addCallSpend(spend, { usage: { inputTokens: 1, outputTokens: 1 }, model: 'local-llm' });
    addCallSpend(spend, { usage: { inputTokens: 1, outputTokens: 1 }, model: 'scripted:demo.json' });
    addCallSpend(spend, { usage: { inputTokens: 1, outputTokens: 1 } });
    addCallSpend(spend, { usage: { inputTokens: 1, outputTokens: 1 }, model: 'claude-opus-4-5', costUsd: 0.001 });
    expect(spend.unpricedModels).toEqual(['local-llm']);
    expect(spend.usage.inputTokens).toBe(5);
    expect(spend.costUsd).toBeCloseTo(0.001, 12);
  });
});

describe('the token budget counts cache tokens at every site', () => {
  const state = (tokens = 3_000) => new TaskState({ agent: 'a', prompt: 'go', budgets: { tokens } }, clock);

  test("a model turn's cache reads and writes spend a 3,000-token budget that input and output alone would not", () => {
    const s = state();
    s.startTurn();
    s.recordModelTurn({ content: [{ type: 'text', text: 'hi' }], stopReason: 'end_turn', usage: CACHED_TURN, model: 'claude-opus-4-5', costUsd: 0.05 });
    expect(s.tokensUsed).toBe(72_513);
    expect(s.tokensCommitted).toBe(72_513);
    expect(spentSpendBudget(s)).toEqual({ code: 'token_budget', reason: 'The task used 72513 of its 3000 tokens.' });
    expect(statusOf(s).budgets.tokens).toMatchObject({ used: 72_513, limit: 3_000, left: 0 });
    expect(s.audit.events.at(-1)!.detail).toContain('[72513 tokens, $0.0500;');
  });

  test("a grade's cache tokens count, and an unpriced grader names its model", () => {
    const s = state();
    s.startTurn();
    recordGrade(s, { pass: false, reasons: 'no', model: 'grader-x', usage: { inputTokens: 100, outputTokens: 10, cacheReadTokens: 4_000 } }, 3);
    expect(s.tokensUsed).toBe(4_110);
    expect(s.unpricedModels).toEqual(['grader-x']);
    expect(spentSpendBudget(s)?.code).toBe('token_budget');
  });

  test("a cancelled call's cache tokens count, and its model is named when it has no price", () => {
    const s = state();
    const charge: CancelledModelCall = { usage: { inputTokens: 10, outputTokens: 20, cacheWriteTokens: 1_000, cacheReadTokens: 2_500 }, model: 'local-llm', measured: true };
    chargeCancelledCall(s, charge);
    expect(s.tokensUsed).toBe(3_530);
    expect(s.unpricedModels).toEqual(['local-llm']);
    expect(s.audit.events.at(-1)!.detail).toMatch(/counted as its stream reported it \[3530 tokens\]/);
    // A call that reported no model names none.
    chargeCancelledCall(s, { ...charge, model: 'unknown' });
    expect(s.unpricedModels).toEqual(['local-llm']);
  });

  test("a closed child's cache tokens count against its parent's token budget", () => {
    const children = new ChildSpend();
    const child: ChildTaskSummary = { taskId: 'c', agent: 'scout', toolUseId: 't', state: 'running', slice: { turns: 1, toolCalls: 1, tokens: 500 } };
    children.hold(child);
    expect(children.tokens).toBe(500);
    const spent = emptySpend();
    spent.usage = { inputTokens: 10, outputTokens: 5, cacheWriteTokens: 100, cacheReadTokens: 300 };
    children.settle(child, 'completed', spent);
    expect(children.tokens).toBe(415);
    expect(children.toJSON()).toBeDefined();
    const cacheOnly = emptySpend();
    cacheOnly.usage.cacheReadTokens = 7;
    const other = new ChildSpend();
    other.spent = cacheOnly;
    expect(other.toJSON()).toBe(cacheOnly);
  });
});

describe('the cap, checked before a call', () => {
  const blocker = (answer: boolean) => {
    const calls: [string, string][] = [];
    const people: Blocker = {
      block: async (code, reason) => {
        calls.push([code, reason]);
        return answer;
      },
    };
    return { calls, people };
  };

  test('no spent budget: the call goes on, nobody is asked', async () => {
    const s = new TaskState({ agent: 'a', prompt: 'go', budgets: { tokens: 100_000 } }, clock);
    s.addSpend({ usage: CACHED_TURN });
    const { calls, people } = blocker(false);
    await expect(spendBudgetAllows(s, people)).resolves.toBe(true);
    expect(calls).toEqual([]);
  });

  test('a budget spent by cache tokens blocks with its reason; the call goes on only when a person raised it', async () => {
    const s = new TaskState({ agent: 'a', prompt: 'go', budgets: { tokens: 3_000 } }, clock);
    s.addSpend({ usage: CACHED_TURN });
    const kept = blocker(false);
    await expect(spendBudgetAllows(s, kept.people)).resolves.toBe(false);
    expect(kept.calls).toEqual([['token_budget', 'The task used 72513 of its 3000 tokens.']]);
    const raised = blocker(true);
    await expect(spendBudgetAllows(s, raised.people)).resolves.toBe(true);
  });

  test("an answer not graded for a spent budget: status's outcome says so", () => {
    const s = new TaskState({ agent: 'a', prompt: 'go', budgets: { costUsd: 0.01 } }, clock);
    s.manifest = { outcome: { rubric: 'r', maxAttempts: 2 } } as TaskState['manifest'];
    s.addSpend({ usage: { inputTokens: 1, outputTokens: 1 }, costUsd: 0.02 });
    notGraded(s, spentSpendBudget(s)!.reason);
    const outcome = outcomeStatusOf(s).outcome!;
    expect(outcome).toMatchObject({ attempts: 0, notGraded: 'the budget was spent: The task spent $0.0200 of its $0.01 budget.' });
    expect(outcome.passed).toBeUndefined();
    expect(outcomeVerdict(outcome)).toBe('not graded (budget_exhausted)');
    expect(s.audit.events.at(-1)!.detail).toContain('the answer was not graded (attempt 1)');
  });
});
