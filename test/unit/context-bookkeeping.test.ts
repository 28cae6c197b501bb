/**
 * The conversation's bookkeeping for the context strategies, without Temporal: a native compaction
 * leaves only the first prompt and the block in state (and in the snapshot), the summary replaces
 * the one at the head, trimming is counted and said, the turns that leave are the ones past the
 * window, and the request keeps the block's breakpoint within the API's four.
 */
import { buildParams } from '../../src/models/anthropic-model';
import { extractiveSummary } from '../../src/models/summary-request';
import type { CompactionBlock, Message } from '../../src/protocol/messages';
import { DEFAULT_LIMITS } from '../../src/rules/task-limits';
import { newContextState, SUMMARY_LABEL } from '../../src/workflows/state/conversation';
import { taskInputProblem } from '../../src/workflows/base/input-checks';
import { TaskState } from '../../src/workflows/state/task-state';
import { restoreTask, snapshotOf } from '../../src/workflows/state/task-snapshot';
import { statusOf } from '../../src/workflows/state/task-status';

const clock = { now: () => new Date(0), newId: () => 'id' };
const input = { agent: 'long', prompt: 'read everything' };

function longTask(turns: number, resultChars = 1_000): TaskState {
  const state = new TaskState(input, clock, DEFAULT_LIMITS);
  state.messages.push({ role: 'user', content: input.prompt });
  for (let i = 0; i < turns; i++) {
    state.messages.push({ role: 'assistant', content: [{ type: 'tool_use', id: `toolu_${i}`, name: 'big_read', input: { offset: i } }] });
    state.messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${i}`, content: `page ${i} ${'x'.repeat(resultChars)}` }] });
  }
  return state;
}

const block: CompactionBlock = { type: 'compaction', content: 'Summary: page 5 holds 39595.', signature: 'sig' };

test('a native compaction leaves the first prompt and the block, and the snapshot carries both with what it cost', () => {
  const state = longTask(30);
  state.conversation.context = newContextState(50_000);
  const line = state.conversation.recordNativeCompaction(block, { inputTokens: 60_000, outputTokens: 500 }, 0.125, 31);
  expect(state.messages).toEqual([
    { role: 'user', content: input.prompt },
    { role: 'assistant', content: [block] },
  ]);
  expect(line).toMatch(/compacted the conversation natively .*60 messages replaced by its summary; 60500 tokens, \$0\.1250/);
  expect(state.conversation.context.compactions).toEqual({ count: 1, usage: { inputTokens: 60_000, outputTokens: 500 }, costUsd: 0.125, lastTurn: 31 });
  // The recall tool is not offered for it: nothing was stubbed.
  expect(state.conversation.offersRecall).toBe(false);
  const snapshot = JSON.parse(JSON.stringify(snapshotOf(state)));
  expect(JSON.stringify(snapshot).length).toBeLessThan(6_000);
  const restored = restoreTask(input, clock, snapshot);
  expect(restored.messages[1]).toEqual({ role: 'assistant', content: [block] });
  expect(restored.conversation.context).toEqual(state.conversation.context);
  expect(statusOf(restored).context?.compactions.count).toBe(1);
});

test('native mode needs room only past the whole window; the sliding window needed it past 80 messages', () => {
  const state = longTask(45, 100);
  expect(state.conversation.needsRoom(200_000, 0)).toBe(true);
  state.conversation.context = newContextState(140_000);
  expect(state.conversation.needsRoom(200_000, 0)).toBe(false);
  state.conversation.context.native = false;
  expect(state.conversation.needsRoom(200_000, 0)).toBe(true);
});

test('the turns that leave bring the conversation back to trimConversationTo, and a summary replaces the one at the head', () => {
  const window = 200_000;
  const pairs = longTask(45).conversation.turnsToLeave(window, 0);
  // 91 messages, past the 80 kept: down to 60 at most, in whole turns after the first prompt.
  expect(pairs).toBe(16);

  const state = longTask(45);
  state.conversation.context = newContextState(140_000);
  state.conversation.context.native = false;
  state.conversation.leaveTurns(pairs, 0, { text: 'first summary', usage: { inputTokens: 100, outputTokens: 10 } }, undefined, 46);
  expect(state.messages.length).toBe(91 - 2 * pairs);
  expect(state.conversation.summary).toBe('first summary');
  state.conversation.leaveTurns(1, 0, { text: 'second summary', usage: { inputTokens: 50, outputTokens: 5 } }, undefined, 47);
  const head = state.messages[0]!.content as { type: string; text: string }[];
  expect(head.filter((b) => b.text.startsWith(SUMMARY_LABEL))).toEqual([{ type: 'text', text: `${SUMMARY_LABEL} second summary` }]);
  expect(state.conversation.context.summaries).toMatchObject({ count: 2, usage: { inputTokens: 150, outputTokens: 15 }, lastTurn: 47 });
  expect(statusOf(state).budgets.summaryTokens).toEqual({ used: 165, limit: 500_000, left: 500_000 - 165 });
});

test('trimming without a summary is counted and says why, and the summary at the head stays', () => {
  const state = longTask(45);
  state.conversation.context = newContextState(140_000);
  state.conversation.leaveTurns(2, 0, { text: 'kept', usage: { inputTokens: 1, outputTokens: 1 } }, undefined, 10);
  const line = state.conversation.leaveTurns(3, 4, undefined, 'the summary token budget is spent (2 of 1)', 11);
  expect(line).toMatch(/4 older tool results stubbed .*3 oldest turns trimmed without a summary \(last resort: the summary token budget is spent \(2 of 1\)\)/);
  expect(state.conversation.context.trims).toBe(1);
  expect(state.conversation.summary).toBe('kept');
  expect(state.audit.events.at(-1)!.detail).toBe(line);
});

test('the request keeps a breakpoint on the compaction block and one on the last user turn after it: four with system and tools', () => {
  const messages: Message[] = [
    { role: 'user', content: 'read everything' },
    { role: 'assistant', content: [block] },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_9', name: 'big_read', input: {} }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_9', content: 'page 9' }] },
  ];
  const params = buildParams(
    { system: 'sys', messages, tools: [{ name: 'big_read', description: 'd', input_schema: { type: 'object' } }] },
    { model: 'claude-sonnet-5-5', maxTokens: 100, thinking: undefined },
  );
  const marked = JSON.stringify(params).match(/cache_control/g) ?? [];
  expect(marked).toHaveLength(4);
  expect(params.messages[0]).toEqual({ role: 'user', content: 'read everything' });
  expect(params.messages[1]!.content).toEqual([{ ...block, cache_control: { type: 'ephemeral' } }]);
  expect(JSON.stringify(params.messages[3])).toContain('cache_control');
});

test('a scripted summary keeps the earliest facts and stays bounded when re-summarised', () => {
  const turns: Message[] = Array.from({ length: 200 }, (_, i) => ({
    role: 'user' as const,
    content: [{ type: 'tool_result' as const, tool_use_id: `t${i}`, content: `page ${i} fact ${i * 7919} ${'y'.repeat(500)}` }],
  }));
  let summary: string | undefined;
  for (let round = 0; round < 5; round++) summary = extractiveSummary(summary, turns.slice(round * 40, round * 40 + 40));
  expect(summary!.length).toBeLessThanOrEqual(8_000);
  expect(summary).toContain('page 5 fact 39595');
});

test('the summary budgets are checked like the task budgets', () => {
  expect(taskInputProblem({ agent: 'a', prompt: 'x', budgets: { summaryTokens: 0 } })).toMatch(/budgets.summaryTokens/);
  expect(taskInputProblem({ agent: 'a', prompt: 'x', budgets: { summaryCostUsd: -1 } })).toMatch(/budgets.summaryCostUsd/);
  expect(taskInputProblem({ agent: 'a', prompt: 'x', budgets: { summaryTokens: 1000, summaryCostUsd: 0.5 } })).toBeUndefined();
});

test('the prompt estimate, asked every turn and kept per block, follows every change to a block: a stub, a summary at the head, a new input', () => {
  const state = longTask(10);
  const { conversation } = state;
  conversation.context = newContextState(140_000);
  const fresh = () => {
    const again = longTask(0);
    again.messages.splice(0, again.messages.length, ...structuredClone(state.messages));
    return again.conversation.estimatedPromptTokens();
  };
  expect(conversation.estimatedPromptTokens()).toBe(fresh());
  expect(conversation.compactOldToolResults(2)).toBeGreaterThan(0);
  expect(conversation.estimatedPromptTokens()).toBe(fresh());
  conversation.leaveTurns(2, 0, { text: 'what happened: '.repeat(50), usage: { inputTokens: 1, outputTokens: 1 } }, undefined, 11);
  expect(conversation.estimatedPromptTokens()).toBe(fresh());
  const use = state.messages[1]!.content[0] as { input: unknown };
  use.input = { offset: 'x'.repeat(500) };
  expect(conversation.estimatedPromptTokens()).toBe(fresh());
});
