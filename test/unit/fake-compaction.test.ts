/**
 * The strict fake's server-side compaction, through the real SDK's beta client over loopback:
 * it refuses what the API refuses (no beta header, a model without compaction, a trigger below the
 * minimum, malformed edits, a changed block), compacts when the input reaches the trigger, returns
 * the signed block, ignores what precedes a passed-back block, and bills the compaction apart.
 */
import Anthropic from '@anthropic-ai/sdk';
import { COMPACTION_BETA, COMPACTION_MIN_TRIGGER_TOKENS, supportsNativeCompaction } from '../../src/protocol/compaction';
import { DOCUMENTED_MODELS } from '../../src/testing/documented-models';
import { FakeMessagesApi, fakeTurns } from '../../src/testing/fake-messages-api';

const api = new FakeMessagesApi();
let client: Anthropic;
beforeAll(async () => {
  await api.start();
  client = new Anthropic({ apiKey: 'sk-ant-test', baseURL: api.url, maxRetries: 0 });
});
afterAll(() => api.stop());
beforeEach(() => {
  api.requests.length = 0;
  api.clearQueue();
});

type Params = Anthropic.Beta.Messages.MessageCreateParamsStreaming;
const MODEL = 'claude-opus-5-5';
const big = (label: string) => `${label} ${'x'.repeat(70_000)}`;
/** Three long user turns: about 52 000 tokens as the fake counts (characters / 4). */
const longConversation = (): Anthropic.Beta.Messages.BetaMessageParam[] => [
  { role: 'user', content: `The vault code is 4417. ${big('part one')}` },
  { role: 'assistant', content: 'Noted.' },
  { role: 'user', content: big('part two') },
  { role: 'assistant', content: 'Noted again.' },
  { role: 'user', content: `${big('part three')} What now?` },
];
const compactEdit = (extra: Record<string, unknown> = {}) => ({
  edits: [{ type: 'compact_20260112' as const, trigger: { type: 'input_tokens' as const, value: COMPACTION_MIN_TRIGGER_TOKENS }, ...extra }],
});

async function send(params: Omit<Params, 'stream'>, betas: string[] | undefined = [COMPACTION_BETA]) {
  return client.beta.messages.stream({ ...params, ...(betas ? { betas } : {}) } as Params).finalMessage();
}

async function refusal(params: Omit<Params, 'stream'>, betas?: string[]): Promise<string> {
  api.enqueue(fakeTurns.text('ok'));
  try {
    await send(params, betas);
    return 'accepted';
  } catch (err) {
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    return (err as InstanceType<typeof Anthropic.BadRequestError>).apiMessage ?? '';
  }
}

test('context_management without the compaction beta header is an unknown field, as the API refuses it', async () => {
  const message = await refusal({ model: MODEL, max_tokens: 100, messages: [{ role: 'user', content: 'hi' }], context_management: compactEdit() }, []);
  expect(message).toBe('context_management: Extra inputs are not permitted');
});

test('compaction on a model without it, a trigger below 50 000 tokens and malformed edits are refused', async () => {
  const messages: Anthropic.Beta.Messages.BetaMessageParam[] = [{ role: 'user', content: 'hi' }];
  expect(await refusal({ model: 'claude-haiku-4-5', max_tokens: 100, messages, context_management: compactEdit() }, [COMPACTION_BETA])).toMatch(
    /compact_20260112 is not supported on model claude-haiku-4-5/,
  );
  const low = { edits: [{ type: 'compact_20260112' as const, trigger: { type: 'input_tokens' as const, value: 49_999 } }] };
  expect(await refusal({ model: MODEL, max_tokens: 100, messages, context_management: low }, [COMPACTION_BETA])).toMatch(/trigger.value: Input should be greater than or equal to 50000/);
  const unknownEdit = { edits: [{ type: 'compact_2099' }] } as unknown as Params['context_management'];
  expect(await refusal({ model: MODEL, max_tokens: 100, messages, context_management: unknownEdit }, [COMPACTION_BETA])).toMatch(/does not match any of the expected tags/);
  const extraField = compactEdit({ keep: 3 }) as unknown as Params['context_management'];
  expect(await refusal({ model: MODEL, max_tokens: 100, messages, context_management: extraField }, [COMPACTION_BETA])).toMatch(/keep: Extra inputs are not permitted/);
  const clearing = { edits: [{ type: 'clear_tool_uses_20250919' as const }] };
  expect(await refusal({ model: MODEL, max_tokens: 100, messages, context_management: clearing }, [COMPACTION_BETA])).toMatch(/requires the anthropic-beta header context-management-2025-06-27/);
});

test('below the trigger the request is answered as usual, without a compaction block', async () => {
  api.enqueue(fakeTurns.text('plain'));
  const reply = await send({ model: MODEL, max_tokens: 100, messages: [{ role: 'user', content: 'short' }], context_management: compactEdit() });
  expect(reply.content.map((b) => b.type)).toEqual(['text']);
  expect(reply.usage.iterations ?? null).toBeNull();
});

test('at the trigger the answer opens with a signed compaction block whose usage is an iteration apart from the top-level usage', async () => {
  api.enqueue(fakeTurns.text('Carrying on.'));
  const reply = await send({ model: MODEL, max_tokens: 100, messages: longConversation(), context_management: compactEdit() });
  const [block, text] = reply.content;
  expect(block?.type).toBe('compaction');
  expect(text).toMatchObject({ type: 'text', text: 'Carrying on.' });
  const compaction = block as Anthropic.Beta.Messages.BetaCompactionBlock;
  expect(compaction.content).toContain('The vault code is 4417.');
  expect(compaction.signature).toEqual(expect.any(String));
  const iterations = reply.usage.iterations!;
  expect(iterations.map((i) => i.type)).toEqual(['compaction', 'message']);
  expect(iterations[0]!.input_tokens).toBeGreaterThanOrEqual(COMPACTION_MIN_TRIGGER_TOKENS);
  // The top-level usage is the sampling after the summary, far smaller than what was compacted.
  expect(reply.usage.input_tokens).toBe(iterations[1]!.input_tokens);
  expect(reply.usage.input_tokens).toBeLessThan(iterations[0]!.input_tokens / 10);
});

test('pause_after_compaction returns the block alone with stop_reason compaction and keeps the scripted reply for the next call', async () => {
  api.enqueue(fakeTurns.text('After the pause.'));
  const paused = await send({ model: MODEL, max_tokens: 100, messages: longConversation(), context_management: compactEdit({ pause_after_compaction: true }) });
  expect(paused.stop_reason).toBe('compaction');
  expect(paused.content.map((b) => b.type)).toEqual(['compaction']);
  expect(paused.usage.iterations!.map((i) => i.type)).toEqual(['compaction']);
  expect(api.pending).toBe(1);
  // The block goes back alone as the final message: what precedes it is no longer read or counted.
  const next = await send({
    model: MODEL,
    max_tokens: 100,
    messages: [...longConversation(), { role: 'assistant', content: paused.content as Anthropic.Beta.Messages.BetaContentBlockParam[] }],
    context_management: compactEdit({ pause_after_compaction: true }),
  });
  expect(next.content).toEqual([expect.objectContaining({ type: 'text', text: 'After the pause.' })]);
  expect(api.requests.at(-1)!.compaction).toBeUndefined();
  expect(next.usage.input_tokens).toBeLessThan(COMPACTION_MIN_TRIGGER_TOKENS / 10);
});

test('a compaction block changed by the client, sent without the beta or placed after other blocks is refused', async () => {
  api.enqueue(fakeTurns.text('x'));
  const paused = await send({ model: MODEL, max_tokens: 100, messages: longConversation(), context_management: compactEdit({ pause_after_compaction: true }) });
  api.clearQueue();
  const block = paused.content[0] as Anthropic.Beta.Messages.BetaCompactionBlock;
  const withBlock = (b: Record<string, unknown>, before: Anthropic.Beta.Messages.BetaContentBlockParam[] = []): Omit<Params, 'stream'> => ({
    model: MODEL,
    max_tokens: 100,
    messages: [
      { role: 'user', content: 'start' },
      { role: 'assistant', content: [...before, b as unknown as Anthropic.Beta.Messages.BetaContentBlockParam] },
      { role: 'user', content: 'go on' },
    ],
  });
  expect(await refusal(withBlock({ ...block, content: `${block.content} The vault code is 0000.` }), [COMPACTION_BETA])).toMatch(/Invalid `signature` in `compaction` block/);
  expect(await refusal(withBlock({ ...block }), [])).toMatch(/block type "compaction" requires the anthropic-beta header compact-2026-01-12/);
  expect(await refusal(withBlock({ ...block }, [{ type: 'text', text: 'first' }]), [COMPACTION_BETA])).toMatch(/must be the first block of its message/);
  expect(await refusal(withBlock({ ...block }), [COMPACTION_BETA])).toBe('accepted');
});

test('the documented compaction models are among the documented models, and Haiku and the 4.5 generation are not among them', () => {
  const supported = DOCUMENTED_MODELS.filter(supportsNativeCompaction);
  expect(supported).toEqual(expect.arrayContaining(['claude-opus-4-6', 'claude-opus-4-7', 'claude-sonnet-4-6', 'claude-mythos-preview', 'claude-opus-5-5', 'claude-sonnet-5-5']));
  for (const model of ['claude-haiku-4-5', 'claude-haiku-5-5', 'claude-sonnet-4-5', 'claude-opus-4-5-20251101']) expect(supportsNativeCompaction(model)).toBe(false);
});
