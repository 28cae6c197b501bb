/**
 * A task's model calls carry only what changed since the run's previous call, and the model still
 * reads the whole conversation every turn: built from the worker's copy when it holds the run, from
 * the task itself (a query) when it does not. Checked on a real server against what the model
 * received and what history recorded, at the size where it matters (40 turns of 2 KB results).
 */
import { z } from 'zod';
import { ConversationCopies } from '../../src/activities/conversation-copies';
import { defineAgent } from '../../src/agents/define-agent';
import type { Model, ModelRequest } from '../../src/models/model';
import type { CallModelInput } from '../../src/protocol/activity-contracts';
import type { Message, ModelTurn } from '../../src/protocol/messages';
import { defineTool } from '../../src/tools/define-tool';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import { useHarness } from '../support/harness';

const TURNS = 40;
const PAGE_CHARS = 2_000;

const h = useHarness();

const page = defineTool({
  name: 'page',
  description: 'Reads one page of the book.',
  input: z.object({ n: z.number().int() }),
  output: z.object({ text: z.string() }),
  effect: 'read',
  idempotent: true,
  cacheTtlMs: 0,
  run: async ({ n }) => ({ text: pageText(n) }),
});
/** Page n's text: the same on every read, and as hard to compress as prose (a repeated letter would shrink to nothing). */
function pageText(n: number): string {
  let seed = n + 1;
  let text = `page ${n}: `;
  for (let i = 0; i < PAGE_CHARS; i++) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    text += 'abcdefghijklmnopqrstuvwxyz '[seed % 27];
  }
  return text;
}
const reader = defineAgent({ name: 'book-reader', system: 'Read every page, then say done.', tools: [page] });

/** Reads page k at call k, and keeps a copy of every conversation it was given. */
class PageModel implements Model {
  readonly id = 'test:pages';
  readonly seen: Message[][] = [];

  async complete(request: ModelRequest): Promise<ModelTurn> {
    this.seen.push(structuredClone(request.messages));
    const call = this.seen.length - 1;
    const content: ModelTurn['content'] = call < TURNS ? [{ type: 'tool_use', id: `toolu_page_${call}`, name: 'page', input: { n: call } }] : [{ type: 'text', text: 'done' }];
    return { content, stopReason: call < TURNS ? 'tool_use' : 'end_turn', usage: { inputTokens: 0, outputTokens: 0 }, model: this.id };
  }
}

/** Runs the task on a worker with `conversationCopies` and returns what the model saw and the model calls' inputs as recorded. */
async function readBook(
  options: { conversationCopies?: number | ConversationCopies; wholeConversations?: boolean } = {},
): Promise<{ seen: Message[][]; inputs: { input: CallModelInput; bytes: number }[] }> {
  const model = new PageModel();
  const worker = await h.worker([reader], { models: { pages: model }, ...options });
  const taskId = h.taskId('book');
  await worker.runUntil(async () => {
    await h.client.start({ agent: reader.name, prompt: 'Read the book.', model: { provider: 'custom', name: 'pages' }, budgets: { turns: TURNS + 5, toolCalls: TURNS + 5 } }, { taskId });
    expect((await h.client.result(taskId)).toolCalls).toBe(TURNS);
  });
  const converter = h.client.client.options.loadedDataConverter;
  const events = (await h.client.client.workflow.getHandle(taskId).fetchHistory()).events ?? [];
  const inputs: { input: CallModelInput; bytes: number }[] = [];
  for (const event of events) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled?.activityType?.name !== 'callModel') continue;
    const payloads = scheduled.input?.payloads ?? [];
    inputs.push({ input: await decodeFromPayloadsAtIndex<CallModelInput>(converter, 0, payloads), bytes: payloads.reduce((n, p) => n + (p.data?.length ?? 0), 0) });
  }
  return { seen: model.seen, inputs };
}

/** The model read the whole conversation at every call: the prompt, then every page it asked for, in full. */
function expectWholeConversations(seen: Message[][]): void {
  expect(seen).toHaveLength(TURNS + 1);
  for (const [call, messages] of seen.entries()) {
    expect(messages).toHaveLength(1 + 2 * call);
    for (let n = 0; n < call; n++) {
      const result = messages[2 + 2 * n]!.content as { type: string; tool_use_id?: string; content?: string }[];
      expect(result[0]).toMatchObject({ type: 'tool_result', tool_use_id: `toolu_page_${n}` });
      expect(JSON.parse(result[0]!.content!).text).toBe(pageText(n));
    }
  }
}

test('every model call after the first carries only the turn it adds, and the model reads the whole conversation from the worker that kept it', async () => {
  const { seen, inputs } = await readBook();
  expectWholeConversations(seen);
  expect(inputs).toHaveLength(TURNS + 1);
  expect(inputs[0]!.input.messages).toBeUndefined();
  expect(inputs[0]!.input.conversation).toMatchObject({ call: 1, append: [{ role: 'user', content: 'Read the book.' }] });
  for (const [i, { input }] of inputs.entries()) {
    if (i === 0) continue;
    expect(input.conversation).toMatchObject({ call: i + 1, from: { call: i, keep: 2 * i - 1 } });
    expect(input.conversation!.append).toHaveLength(2);
  }
  // The conversation reaches 80 KB; each call's input stays the size of one turn.
  const largest = Math.max(...inputs.map((i) => i.bytes));
  expect(JSON.stringify(seen.at(-1)).length).toBeGreaterThan(TURNS * PAGE_CHARS);
  expect(largest).toBeLessThan(8_000);
}, 120_000);

test('a worker that keeps no conversation asks the task for each one, and the model reads the same whole conversations', async () => {
  const copies = new ConversationCopies(0);
  const { seen, inputs } = await readBook({ conversationCopies: copies });
  expectWholeConversations(seen);
  expect(inputs.slice(1).every(({ input }) => input.conversation?.append.length === 2)).toBe(true);
  // Every call after the first builds on one this worker did not keep: each asked the task, none was a hit.
  expect(copies.stats).toEqual({ hits: 0, asked: TURNS });
}, 120_000);

test('a worker set to send whole conversations (a rolling upgrade beside older workers) puts the whole conversation in every call', async () => {
  const { seen, inputs } = await readBook({ wholeConversations: true });
  expectWholeConversations(seen);
  for (const [call, { input }] of inputs.entries()) {
    expect(input.conversation).toBeUndefined();
    expect(input.messages).toHaveLength(1 + 2 * call);
  }
  // The same 80 KB conversation, whole in the last call's input: what the change saves.
  expect(inputs.at(-1)!.bytes).toBeGreaterThan(30_000);
}, 120_000);

test('a worker refuses a copy count that is not a whole number from 0', async () => {
  await expect(h.worker([reader], { conversationCopies: -1 })).rejects.toThrow(/conversationCopies must be a whole number from 0/);
});
