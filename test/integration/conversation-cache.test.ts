/**
 * Prompt caching that follows the conversation, billed as the API bills it: a 100-turn task with
 * 10 KB tool results through the real SDK against the strict fake (whose usage follows the
 * documented prompt cache), with the conversation breakpoint and without it.
 */
import { cacheTotals, runCachedConversation, type CachedConversationRun } from '../support/cached-conversation';
import { useHarness } from '../support/harness';

const h = useHarness();

const TURNS = 100;
const RESULT_CHARS = 10_000;
const runs: Partial<Record<'conversation' | 'static', CachedConversationRun>> = {};

test('with the moving breakpoint, every call whose conversation extends the previous one reads the whole previous prompt from the cache', async () => {
  const run = (runs.conversation = await runCachedConversation(h, { turns: TURNS, resultChars: RESULT_CHARS, caching: 'conversation' }));
  expect(run.rejected).toEqual([]);
  expect(run.result).toMatchObject({ outcome: 'answered', toolCalls: TURNS });
  expect(run.calls).toHaveLength(TURNS + 1);
  const extending = run.calls.filter((c) => c.extendsPrevious);
  // Trimming the conversation (80 -> 60 messages) changes its prefix a few times; every other call extends the last.
  expect(extending.length).toBeGreaterThanOrEqual(TURNS - 10);
  for (const call of extending) {
    expect(call.cacheRead).toBeGreaterThan(0);
    // What is new since the last call (one assistant turn and one 10 KB result) is written, not re-read.
    expect(call.cacheWrite).toBeLessThan(RESULT_CHARS / 2);
  }
  expect(run.status.usage.cacheReadTokens).toBe(run.calls.reduce((n, c) => n + c.cacheRead, 0));
  console.log('conversation caching:', JSON.stringify(cacheTotals(run)));
}, 600_000);

test('without it (system prompt and tools only), the same task reads almost nothing from the cache and costs several times more', async () => {
  const run = (runs.static = await runCachedConversation(h, { turns: TURNS, resultChars: RESULT_CHARS, caching: 'static' }));
  expect(run.rejected).toEqual([]);
  expect(run.result).toMatchObject({ outcome: 'answered', toolCalls: TURNS });
  // Only the fixed prefix (tools and system prompt) can be read: never any of the conversation.
  const fixedPrefix = Math.max(...run.calls.map((c) => c.cacheRead));
  expect(run.calls.every((c) => c.cacheRead === 0 || c.cacheRead === fixedPrefix)).toBe(true);
  expect(fixedPrefix).toBeLessThan(RESULT_CHARS / 4);
  const cached = runs.conversation;
  if (!cached) throw new Error('the conversation-caching run did not complete');
  const billed = (r: CachedConversationRun) => r.status.usage.inputTokens + (r.status.usage.cacheReadTokens ?? 0) + (r.status.usage.cacheWriteTokens ?? 0);
  // Same task, same prompts: the same tokens, billed differently.
  expect(Math.abs(billed(cached) - billed(run)) / billed(run)).toBeLessThan(0.02);
  expect(cached.status.costUsd).toBeLessThan(run.status.costUsd / 3);
  console.log('static caching:', JSON.stringify(cacheTotals(run)));
}, 600_000);
