/**
 * AnthropicModel through the real SDK against the strict fake on loopback: every request it builds
 * is one the real API accepts, answers stream in with throttled progress, thinking survives a tool
 * loop unchanged, and a stream that stalls, breaks off or reports an error mid-way is transient.
 */
import { AnthropicModel, PROGRESS_CHARS } from '../../src/models/anthropic-model';
import { classifyModelError } from '../../src/models/classify-model-error';
import type { AssistantBlock, Message, ModelProgress, ToolSpec } from '../../src/protocol/messages';
import { FakeMessagesApi, fakeTurns, type FakeReply } from '../../src/testing/fake-messages-api';
import { waitFor } from '../support/processes';

const api = new FakeMessagesApi();
beforeAll(() => api.start());
afterAll(() => api.stop());
beforeEach(() => {
  api.requests.length = 0;
  api.clearQueue();
  api.rules = {};
});

const tools: ToolSpec[] = [
  { name: 'list_files', description: 'List files', input_schema: { type: 'object' } },
  { name: 'read_file', description: 'Read a file', input_schema: { type: 'object', properties: { path: { type: 'string' } } } },
];
const model = (options: ConstructorParameters<typeof AnthropicModel>[0] = {}) => new AnthropicModel({ apiKey: 'sk-ant-test', baseURL: api.url, ...options });
const ask = (text: string): Message[] => [{ role: 'user', content: text }];
const countCacheControl = (body: unknown): number => JSON.stringify(body).split('"cache_control"').length - 1;

test('a call is streamed, with the system prompt, the last tool and the last user block as cache breakpoints (3 of the 4 allowed)', async () => {
  api.enqueue(fakeTurns.text('hello'));
  const turn = await model().complete({ system: 'be brief', messages: ask('hi'), tools });
  expect(turn).toMatchObject({ content: [{ type: 'text', text: 'hello' }], stopReason: 'end_turn', model: 'claude-sonnet-5-5' });
  const body = api.requests[0]!.body;
  expect(api.requests[0]!.rejected).toBeUndefined();
  expect(body.stream).toBe(true);
  expect(body.system).toEqual([{ type: 'text', text: 'be brief', cache_control: { type: 'ephemeral' } }]);
  expect(body.tools!.map((t) => t.cache_control)).toEqual([undefined, { type: 'ephemeral' }]);
  expect(body.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }] }]);
  expect(countCacheControl(body)).toBe(3);
  expect(body.tool_choice).toBeUndefined();
});

test('the conversation breakpoint follows the last user turn (a tool_result), never more than 4 in all', async () => {
  const messages: Message[] = [
    { role: 'user', content: 'list' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_a', name: 'list_files', input: {} }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_a', content: 'a.txt' }] },
  ];
  api.enqueue(fakeTurns.text('one file'));
  await model().complete({ system: 's', messages, tools });
  const sent = api.requests[0]!.body.messages as { content: { cache_control?: unknown }[] }[];
  expect(sent[2]!.content[0]!.cache_control).toEqual({ type: 'ephemeral' });
  expect(sent[0]!.content).toBe('list');
  expect(countCacheControl(api.requests[0]!.body)).toBe(3);
  // The caller's messages are not modified.
  expect(JSON.stringify(messages)).not.toContain('cache_control');
});

test("toolChoice 'none' keeps the tool definitions and sends tool_choice none: the final no-tools call is accepted", async () => {
  const messages: Message[] = [
    { role: 'user', content: 'list' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_b', name: 'list_files', input: {} }] },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_b', content: 'a.txt' },
        { type: 'text', text: 'Budget spent: answer now.' },
      ],
    },
  ];
  api.enqueue(fakeTurns.text('final answer'));
  const turn = await model().complete({ system: 's', messages, tools, toolChoice: 'none' });
  expect(turn.content).toEqual([{ type: 'text', text: 'final answer' }]);
  expect(api.requests[0]!.body.tool_choice).toEqual({ type: 'none' });
  expect(api.requests[0]!.body.tools).toHaveLength(2);
});

test('maxTokens and model from the request override the model choice; a 64 000-token answer is streamed, not refused by the SDK', async () => {
  api.enqueue(fakeTurns.text('long'));
  await model({ maxTokens: 1_000 }).complete({ system: '', messages: ask('essay'), tools: [], maxTokens: 64_000, model: 'claude-opus-5-5' });
  expect(api.requests[0]!.body).toMatchObject({ max_tokens: 64_000, model: 'claude-opus-5-5' });
  expect(api.requests[0]!.body.system).toBeUndefined();
});

test('an answer cut at max_tokens comes back as such, with its text', async () => {
  api.enqueue(fakeTurns.cutAtMaxTokens('The first half'));
  const turn = await model().complete({ system: '', messages: ask('write'), tools: [] });
  expect(turn).toMatchObject({ stopReason: 'max_tokens', content: [{ type: 'text', text: 'The first half' }] });
});

test('progress is reported as the answer streams, throttled, with a tail of the text', async () => {
  const text = 'abcdefghij'.repeat(1_000);
  api.enqueue({ ...fakeTurns.thinking('t'.repeat(300), fakeTurns.text(text)), stream: { chunkChars: 10 } } as FakeReply);
  const seen: ModelProgress[] = [];
  const turn = await model({ thinking: { type: 'enabled', budgetTokens: 1024 } }).complete({ system: '', messages: ask('x'), tools: [], onProgress: (p) => seen.push(p) });
  expect(turn.content[1]).toEqual({ type: 'text', text });
  const last = seen.at(-1)!;
  expect(last).toEqual({ outputChars: 10_000, thinkingChars: 300, tail: text.slice(-300) });
  // 1 030 deltas, but a report only every PROGRESS_CHARS characters (or 250 ms): a handful, growing.
  expect(seen.length).toBeLessThanOrEqual(Math.ceil(10_300 / PROGRESS_CHARS) + 2);
  expect(seen.length).toBeGreaterThanOrEqual(2);
  for (let i = 1; i < seen.length; i++) expect(seen[i]!.outputChars).toBeGreaterThanOrEqual(seen[i - 1]!.outputChars);
});

test('a slow stream reports progress by time, and a failing reporter does not fail the call', async () => {
  api.enqueue({ ...fakeTurns.text('x'.repeat(40)), stream: { chunkChars: 4, delayMs: 60 } } as FakeReply);
  let calls = 0;
  const turn = await model().complete({
    system: '',
    messages: ask('x'),
    tools: [],
    onProgress: () => {
      calls++;
      throw new Error('heartbeat failed');
    },
  });
  expect(turn.content).toEqual([{ type: 'text', text: 'x'.repeat(40) }]);
  expect(calls).toBeGreaterThanOrEqual(2);
});

test('thinking on across five tool turns: thinking and redacted_thinking come back unchanged and every request is accepted', async () => {
  const m = model({ maxTokens: 4_096, thinking: { type: 'enabled', budgetTokens: 2_048 } });
  const messages: Message[] = ask('look around');
  for (let i = 1; i <= 5; i++) {
    api.enqueue(fakeTurns.thinking(`step ${i}: I need the list`, fakeTurns.toolUse(`toolu_${i}`, 'list_files', {}, `turn ${i}`), i % 2 === 0));
    const turn = await m.complete({ system: 's', messages, tools });
    expect(turn.content[0]!.type).toBe(i % 2 === 0 ? 'redacted_thinking' : 'thinking');
    messages.push({ role: 'assistant', content: turn.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${i}`, content: 'a.txt' }] });
  }
  api.enqueue({
    kind: 'turn',
    content: [
      { type: 'thinking', thinking: 'done' },
      { type: 'text', text: 'Five looks, one file.' },
    ],
    usage: { input: 10, output: 700, cacheRead: 50, cacheWrite: 5 },
  });
  const final = await m.complete({ system: 's', messages, tools });
  expect(final.content.at(-1)).toEqual({ type: 'text', text: 'Five looks, one file.' });
  expect(final.usage).toEqual({ inputTokens: 10, outputTokens: 700, cacheReadTokens: 50, cacheWriteTokens: 5 });
  expect(api.rejected).toEqual([]);
  expect(api.requests).toHaveLength(6);
  expect(api.requests.every((r) => r.body.thinking?.type === 'enabled' && r.body.thinking.budget_tokens === 2_048)).toBe(true);
  const thinkingBlock = (messages[1] as { content: AssistantBlock[] }).content[0]!;
  expect(thinkingBlock).toMatchObject({ type: 'thinking', signature: expect.any(String) });
});

test('thinking from the request overrides the choice, adaptive included', async () => {
  api.enqueue(fakeTurns.text('ok'));
  await model({ thinking: { type: 'enabled', budgetTokens: 1_024 } }).complete({ system: '', messages: ask('x'), tools: [], thinking: { type: 'adaptive' } });
  expect(api.requests[0]!.body.thinking).toEqual({ type: 'adaptive' });
});

test('a stream that goes silent mid-answer is a transient stream_stalled, not a hang', async () => {
  api.enqueue({ ...fakeTurns.text('slow words'), stream: { chunkChars: 2, delayMs: 5_000 } } as FakeReply);
  const err = await model({ timeoutMs: 400 })
    .complete({ system: '', messages: ask('x'), tools: [] })
    .catch((e: unknown) => e);
  expect(classifyModelError(err).error).toMatchObject({ error_class: 'transient', code: 'stream_stalled' });
  // The client gave up while the fake was still between deltas: the stream never finished.
  await waitFor('the fake to see the client hang up', () => api.requests[0]!.stream?.ended || undefined);
  expect(api.requests[0]!.stream).toEqual({ deltas: 0, ended: 'client_gone' });
});

test('a stream cut mid-way is transient', async () => {
  api.enqueue({ ...fakeTurns.text('x'.repeat(100)), stream: { chunkChars: 5, cutAfterDeltas: 3 } } as FakeReply);
  const err = await model()
    .complete({ system: '', messages: ask('x'), tools: [] })
    .catch((e: unknown) => e);
  expect(classifyModelError(err).error.error_class).toBe('transient');
});

test('an overloaded_error event in the middle of a stream is transient', async () => {
  api.enqueue({ ...fakeTurns.text('x'.repeat(100)), stream: { chunkChars: 5, errorAfterDeltas: { after: 2 } } } as FakeReply);
  const err = await model()
    .complete({ system: '', messages: ask('x'), tools: [] })
    .catch((e: unknown) => e);
  expect(classifyModelError(err).error).toMatchObject({ error_class: 'transient', code: 'stream_overloaded_error' });
});

test("a request the API refuses is a permanent invalid_request with the API's own message", async () => {
  api.enqueue(fakeTurns.text('never'));
  const err = await model({ maxTokens: 100_000 })
    .complete({ system: '', messages: ask('x'), tools: [] })
    .catch((e: unknown) => e);
  expect(classifyModelError(err).error).toMatchObject({
    error_class: 'permanent',
    code: 'invalid_request',
    detail: 'max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-5-5',
    hint: expect.stringContaining('--max-tokens'),
  });
});
