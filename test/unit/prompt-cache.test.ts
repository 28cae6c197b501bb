import Anthropic from '@anthropic-ai/sdk';
import { costOf, DEFAULT_PRICES } from '../../src/models/pricing';
import { FakeMessagesApi, fakeTurns } from '../../src/testing/fake-messages-api';
import { CACHE_LOOKBACK_BLOCKS, defaultMinimumCacheTokens, PromptCache } from '../../src/testing/prompt-cache';

const cc = { type: 'ephemeral' };
const big = (tag: string) => `${tag} ${'lorem ipsum dolor sit amet '.repeat(200)}`; // about 1,400 tokens
const user = (text: string, breakpoint = false) => ({ role: 'user', content: [{ type: 'text', text, ...(breakpoint ? { cache_control: cc } : {}) }] });
const assistant = (text: string) => ({ role: 'assistant', content: [{ type: 'text', text }] });
const request = (messages: unknown[], model = 'claude-sonnet-5-5') => ({ model, system: [{ type: 'text', text: 'sys', cache_control: cc }], messages });

test('a prefix below the minimum cacheable length is neither written nor read', () => {
  const cache = new PromptCache();
  const body = request([user('short', true)]);
  expect(cache.use(body)).toMatchObject({ cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
  expect(cache.use(body)).toMatchObject({ cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
  expect(cache.size).toBe(0);
});

test('the first call writes up to its last breakpoint; the same prompt again reads all of it', () => {
  const cache = new PromptCache();
  const body = request([user(big('a'), true)]);
  const first = cache.use(body);
  expect(first.cache_read_input_tokens).toBe(0);
  expect(first.cache_creation_input_tokens).toBeGreaterThan(1024);
  expect(first.input_tokens).toBe(0);
  const second = cache.use(body);
  expect(second).toEqual({ input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: first.cache_creation_input_tokens });
});

test('a breakpoint that moves to the latest message reads the previous prompt and writes only the new turn', () => {
  const cache = new PromptCache();
  const first = cache.use(request([user(big('a'), true)]));
  const next = cache.use(request([user(big('a')), assistant('ok'), user('more please', true)]));
  expect(next.cache_read_input_tokens).toBe(first.cache_creation_input_tokens);
  expect(next.cache_creation_input_tokens).toBeGreaterThan(0);
  expect(next.cache_creation_input_tokens).toBeLessThan(40); // two short blocks, not the 1,400-token first message
});

test('a changed earlier block, another model, or an expired entry misses', () => {
  let now = 0;
  const cache = new PromptCache({ now: () => now });
  cache.use(request([user(big('a'), true)]));
  expect(cache.use(request([user(big('b'), true)])).cache_read_input_tokens).toBe(0);
  expect(cache.use(request([user(big('a'), true)], 'claude-opus-5-5')).cache_read_input_tokens).toBe(0);
  now = 4 * 60_000;
  expect(cache.use(request([user(big('a'), true)])).cache_read_input_tokens).toBeGreaterThan(0);
  now += 5 * 60_000 + 1; // the read above refreshed the entry; five minutes after it, it is gone
  expect(cache.use(request([user(big('a'), true)])).cache_read_input_tokens).toBe(0);
});

test(`a cached prefix more than ${CACHE_LOOKBACK_BLOCKS} blocks before the breakpoint is not found`, () => {
  const cache = new PromptCache();
  cache.use(request([user(big('a'), true)]));
  const filler = Array.from({ length: CACHE_LOOKBACK_BLOCKS + 2 }, (_, i) => (i % 2 === 0 ? assistant(`a${i}`) : user(`u${i}`)));
  const far = [user(big('a')), ...filler, assistant('x'), user('last', true)];
  expect(cache.use(request(far)).cache_read_input_tokens).toBe(0);
  const nearFiller = filler.slice(0, 4);
  const near = [user(big('a')), ...nearFiller, assistant('x'), user('last', true)];
  expect(cache.use(request(near)).cache_read_input_tokens).toBeGreaterThan(1024);
});

test('the minimum cacheable length is the documented one for each model', () => {
  const documented: Record<string, number> = {
    'claude-opus-4-5-20251101': 4096,
    'claude-opus-4-6': 4096,
    'claude-opus-4-7': 4096,
    'claude-haiku-4-5-20251001': 4096,
    'claude-mythos-preview': 4096,
    'claude-3-5-haiku-20241022': 2048,
    'claude-3-haiku-20240307': 2048,
    'claude-opus-4-8': 1024,
    'claude-opus-4-1-20250805': 1024,
    'claude-sonnet-4-6': 1024,
    'claude-sonnet-4-5-20250929': 1024,
    'claude-sonnet-5-5': 1024,
  };
  expect(Object.fromEntries(Object.keys(documented).map((m) => [m, defaultMinimumCacheTokens(m)]))).toEqual(documented);
  // A 1,400-token prompt is cached on Sonnet 5.5, not on Opus 4.6.
  const cache = new PromptCache();
  for (let i = 0; i < 2; i++) expect(cache.use(request([user(big('a'), true)], 'claude-opus-4-6')).cache_read_input_tokens).toBe(0);
  cache.use(request([user(big('a'), true)]));
  expect(cache.use(request([user(big('a'), true)])).cache_read_input_tokens).toBeGreaterThan(1024);
});

test('a breakpoint with ttl "1h" keeps its prefix for an hour; the default, five minutes', () => {
  let now = 0;
  const cache = new PromptCache({ now: () => now });
  const hour = {
    model: 'claude-sonnet-5-5',
    system: [{ type: 'text', text: 'sys' }],
    messages: [{ role: 'user', content: [{ type: 'text', text: big('h'), cache_control: { type: 'ephemeral', ttl: '1h' } }] }],
  };
  cache.use(hour);
  cache.use(request([user(big('a'), true)]));
  now = 30 * 60_000;
  expect(cache.use(hour).cache_read_input_tokens).toBeGreaterThan(1024);
  expect(cache.use(request([user(big('a'), true)])).cache_read_input_tokens).toBe(0);
});

test('a changed tool_choice or thinking setting misses the messages but still reads the tools and system prompt', () => {
  const cache = new PromptCache();
  const tools = [{ name: 't', description: big('tool'), input_schema: { type: 'object' }, cache_control: cc }];
  const body = { ...request([user(big('a'), true)]), tools };
  const first = cache.use(body);
  expect(cache.use(body).cache_read_input_tokens).toBe(first.cache_creation_input_tokens);
  for (const changed of [{ tool_choice: { type: 'none' } }, { thinking: { type: 'adaptive' } }]) {
    const usage = cache.use({ ...body, ...changed });
    expect(usage.cache_read_input_tokens).toBeGreaterThan(1024);
    // The tools and system prompt are read; the 1,400-token message is not.
    expect(usage.cache_read_input_tokens).toBeLessThan(first.cache_creation_input_tokens - 1_000);
  }
});

describe('the bill of a cached conversation, cross-checked by hand against the documented pricing rules', () => {
  // Documented for Claude Opus 4.5, USD per million tokens: input $5, 5-minute cache write $6.25
  // (1.25 x input), cache hit $0.50 (0.1 x input), output $25. Minimum cacheable prompt: 4,096 tokens.
  const model = 'claude-opus-4-5';
  const api = new FakeMessagesApi();
  let client: Anthropic;
  beforeAll(async () => {
    await api.start();
    client = new Anthropic({ apiKey: 'k', baseURL: api.url, maxRetries: 0 });
  });
  afterAll(() => api.stop());

  // The fake counts a block as its JSON's characters / 4, rounded up:
  // {"type":"text","text":"<L characters>"} is 25 + L characters; ["user",{"type":"text","text":"hi"}] is 36 (9 tokens);
  // the answer [{"type":"text","text":"ok"}] is 29 characters (8 output tokens).
  const ask = (systemChars: number) =>
    client.messages.create({
      model,
      max_tokens: 100,
      system: [{ type: 'text', text: 's'.repeat(systemChars), cache_control: { type: 'ephemeral' } }],
      messages: [{ role: 'user', content: 'hi' }],
    });
  const bill = (u: Anthropic.Usage) =>
    costOf(
      model,
      { inputTokens: u.input_tokens, outputTokens: u.output_tokens, cacheWriteTokens: u.cache_creation_input_tokens ?? 0, cacheReadTokens: u.cache_read_input_tokens ?? 0 },
      DEFAULT_PRICES,
    );

  test('a 4,096-token system prompt is written once at 1.25 x input, then read at 0.1 x input', async () => {
    api.enqueue(fakeTurns.text('ok'), fakeTurns.text('ok'));
    const first = (await ask(16_359)).usage; // 16,384 characters: 4,096 tokens
    expect(first).toMatchObject({ input_tokens: 9, cache_creation_input_tokens: 4_096, cache_read_input_tokens: 0, output_tokens: 8 });
    // 9 x $5 + 4,096 x $6.25 + 8 x $25 = $25,845 per million requests
    expect(bill(first)).toBeCloseTo(0.025845, 10);
    const second = (await ask(16_359)).usage;
    expect(second).toMatchObject({ input_tokens: 9, cache_creation_input_tokens: 0, cache_read_input_tokens: 4_096, output_tokens: 8 });
    // 9 x $5 + 4,096 x $0.50 + 8 x $25 = $2,293 per million requests
    expect(bill(second)).toBeCloseTo(0.002293, 10);
  });

  test('a system prompt under the 4,096-token minimum is billed as plain input every time', async () => {
    api.enqueue(fakeTurns.text('ok'), fakeTurns.text('ok'));
    for (let i = 0; i < 2; i++) {
      const usage = (await ask(16_000)).usage; // 16,025 characters: 4,007 tokens, + 9 for the message
      expect(usage).toMatchObject({ input_tokens: 4_016, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
      // 4,016 x $5 + 8 x $25 = $20,280 per million requests
      expect(bill(usage)).toBeCloseTo(0.02028, 10);
    }
  });

  test('the price table carries the documented cache rates of the current models', () => {
    // From the models' pages: input, output, 5-minute cache write, cache hit, USD per million tokens.
    const documented: Record<string, [number, number, number, number]> = {
      'claude-opus-5-5': [4, 20, 5, 0.2],
      'claude-sonnet-5-5': [2, 10, 2.5, 0.2],
      'claude-opus-5': [5, 25, 6.25, 0.5],
      'claude-sonnet-5': [2, 10, 2.5, 0.2],
      'claude-opus-4-5': [5, 25, 6.25, 0.5],
    };
    for (const [id, [input, output, write, read]] of Object.entries(documented)) {
      const million = (kind: 'input' | 'output' | 'write' | 'read') =>
        costOf(
          id,
          { inputTokens: kind === 'input' ? 1e6 : 0, outputTokens: kind === 'output' ? 1e6 : 0, cacheWriteTokens: kind === 'write' ? 1e6 : 0, cacheReadTokens: kind === 'read' ? 1e6 : 0 },
          DEFAULT_PRICES,
        );
      expect([id, million('input'), million('output'), million('write'), million('read')]).toEqual([id, input, output, write, expect.closeTo(read, 10)]);
    }
  });
});
