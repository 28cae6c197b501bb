import { CACHE_LOOKBACK_BLOCKS, PromptCache } from '../../src/testing/prompt-cache';

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
