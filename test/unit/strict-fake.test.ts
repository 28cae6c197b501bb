/**
 * The strict fake refuses what the real Messages API refuses, through the real SDK over HTTP on
 * loopback, with the API's 400 invalid_request_error and wording close to the API's.
 */
import Anthropic from '@anthropic-ai/sdk';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DEFAULT_ANTHROPIC_MODEL } from '../../src/models/anthropic-model';
import { DOCUMENTED_MODELS } from '../../src/testing/documented-models';
import { FakeMessagesApi, fakeTurns } from '../../src/testing/fake-messages-api';
import { DOCUMENTED_BODY_FIELDS } from '../../src/testing/messages-api-rules';

const api = new FakeMessagesApi();
let client: Anthropic;
beforeAll(async () => {
  await api.start();
  client = new Anthropic({ apiKey: 'sk-ant-test', baseURL: api.url, maxRetries: 0 });
});
afterAll(() => api.stop());
beforeEach(() => {
  api.requests.length = 0;
  api.rules = {};
});

/** The installed SDK's declaration of the Messages API: its documented model ids and body fields. */
const sdkMessagesTypes = () => readFileSync(join(dirname(require.resolve('@anthropic-ai/sdk')), 'resources/messages/messages.d.ts'), 'utf8');

const tool = { name: 'list_files', description: 'List files', input_schema: { type: 'object' as const } };
const use = (id: string): Anthropic.ToolUseBlockParam => ({ type: 'tool_use', id, name: 'list_files', input: {} });
const result = (id: string): Anthropic.ToolResultBlockParam => ({ type: 'tool_result', tool_use_id: id, content: 'a.txt' });
type Body = Anthropic.MessageCreateParamsNonStreaming;
const base = (over: Partial<Body> = {}): Body => ({ model: 'claude-sonnet-5-5', max_tokens: 1024, messages: [{ role: 'user', content: 'hi' }], ...over });

/** Sends `body` (streamed) and returns the API's message for a 400, or 'accepted'. */
async function verdict(body: Body): Promise<string> {
  api.clearQueue().enqueue(fakeTurns.text('ok'));
  try {
    // Streamed: the SDK refuses a non-streamed request with a large max_tokens before sending it.
    await client.messages.stream(body).finalMessage();
    return 'accepted';
  } catch (err) {
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    const e = err as InstanceType<typeof Anthropic.BadRequestError>;
    expect(e.type).toBe('invalid_request_error');
    // A refused request does not consume the queued reply, as the real API generates nothing.
    expect(api.pending).toBe(1);
    expect(api.requests.at(-1)!.rejected).toBe(e.apiMessage);
    return e.apiMessage ?? e.message;
  } finally {
    api.clearQueue();
  }
}

const toolLoop = (): Anthropic.MessageParam[] => [
  { role: 'user', content: 'list' },
  { role: 'assistant', content: [use('toolu_1')] },
  { role: 'user', content: [result('toolu_1')] },
];

test('a valid tool loop with tools defined is accepted', async () => {
  expect(await verdict(base({ messages: toolLoop(), tools: [tool] }))).toBe('accepted');
});

test("tool blocks without `tools` are refused with the API's message (the last no-tools call)", async () => {
  expect(await verdict(base({ messages: toolLoop() }))).toBe('Requests which include `tool_use` or `tool_result` blocks must define tools.');
});

test('tool_choice none with tools defined is accepted where no tools is refused', async () => {
  expect(await verdict(base({ messages: toolLoop(), tools: [tool], tool_choice: { type: 'none' } }))).toBe('accepted');
  expect(await verdict(base({ tools: [tool], tool_choice: { type: 'sometimes' } as never }))).toMatch(/tool_choice\.type/);
  expect(await verdict(base({ tools: [tool], tool_choice: { type: 'tool', name: 'nope' } }))).toMatch(/not among the defined tools/);
});

test('a tool_use must be answered in the next user turn, once, first, with matching ids', async () => {
  const missing: Anthropic.MessageParam[] = [
    { role: 'user', content: 'list' },
    { role: 'assistant', content: [use('toolu_1')] },
    { role: 'user', content: 'go on' },
  ];
  expect(await verdict(base({ messages: missing, tools: [tool] }))).toMatch(/`tool_use` ids were found without `tool_result` blocks immediately after: toolu_1/);

  const wrongId = toolLoop();
  wrongId[2] = { role: 'user', content: [result('toolu_2')] };
  expect(await verdict(base({ messages: wrongId, tools: [tool] }))).toMatch(/unexpected `tool_use_id` found in `tool_result` blocks: toolu_2/);

  const twice = toolLoop();
  twice[2] = { role: 'user', content: [result('toolu_1'), result('toolu_1')] };
  expect(await verdict(base({ messages: twice, tools: [tool] }))).toMatch(/Found multiple `tool_result` blocks with id: toolu_1/);

  const notFirst = toolLoop();
  notFirst[2] = { role: 'user', content: [{ type: 'text', text: 'here:' }, result('toolu_1')] };
  expect(await verdict(base({ messages: notFirst, tools: [tool] }))).toMatch(/`tool_result` blocks must come first/);

  const repeatedId = [...toolLoop(), { role: 'assistant' as const, content: [use('toolu_1')] }, { role: 'user' as const, content: [result('toolu_1')] }];
  expect(await verdict(base({ messages: repeatedId, tools: [tool] }))).toMatch(/`tool_use` ids must be unique/);
});

test("consecutive user turns are merged as the API does: a person's note after the tool results passes, before them it does not", async () => {
  const after = [...toolLoop(), { role: 'user' as const, content: 'a note from a person' }];
  expect(await verdict(base({ messages: after, tools: [tool] }))).toBe('accepted');
  const before: Anthropic.MessageParam[] = [toolLoop()[0]!, toolLoop()[1]!, { role: 'user', content: 'a note' }, toolLoop()[2]!];
  expect(await verdict(base({ messages: before, tools: [tool] }))).toMatch(/must come first/);
});

test('the first message must be from the user; empty text blocks are refused', async () => {
  expect(
    await verdict(
      base({
        messages: [
          { role: 'assistant', content: 'hello' },
          { role: 'user', content: 'hi' },
        ],
      }),
    ),
  ).toBe('messages: first message must use the "user" role');
  expect(await verdict(base({ messages: [{ role: 'user', content: [{ type: 'text', text: '' }] }] }))).toMatch(/text content blocks must be non-empty/);
});

test('prefill: refused for current models, configurable, and never with trailing whitespace', async () => {
  const prefill: Anthropic.MessageParam[] = [
    { role: 'user', content: 'write' },
    { role: 'assistant', content: 'The first half' },
  ];
  expect(await verdict(base({ messages: prefill }))).toMatch(/does not support assistant message prefill/);
  expect(await verdict(base({ model: 'claude-opus-4-6', messages: prefill }))).toMatch(/does not support assistant message prefill/);
  expect(await verdict(base({ model: 'claude-haiku-4-5', messages: prefill }))).toBe('accepted');
  api.rules = { prefill: true };
  expect(await verdict(base({ messages: prefill }))).toBe('accepted');
  expect(await verdict(base({ messages: [prefill[0]!, { role: 'assistant', content: 'The first half ' }] }))).toBe('final assistant content cannot end with trailing whitespace');
});

test('at most 4 cache_control breakpoints across system, tools and messages', async () => {
  const cc = { cache_control: { type: 'ephemeral' as const } };
  const four = base({
    system: [{ type: 'text', text: 'sys', ...cc }],
    tools: [
      { ...tool, ...cc },
      { ...tool, name: 'b', ...cc },
    ],
    messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', ...cc }] }],
  });
  expect(await verdict(four)).toBe('accepted');
  const five = { ...four, tools: [...four.tools!, { ...tool, name: 'c', ...cc }] };
  expect(await verdict(five)).toBe('A maximum of 4 blocks with cache_control may be provided. Found 5.');
});

test("max_tokens must be at least 1 and within the model's output limit (configurable)", async () => {
  expect(await verdict(base({ max_tokens: 0 }))).toMatch(/greater than or equal to 1/);
  expect(await verdict(base({ max_tokens: 64_000 }))).toBe('accepted');
  expect(await verdict(base({ max_tokens: 64_001 }))).toBe('max_tokens: 64001 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-5-5');
  api.rules = { maxOutputTokens: { default: 8_192 } };
  expect(await verdict(base({ max_tokens: 9_000 }))).toMatch(/> 8192/);
});

test('thinking: budget at least 1024 and below max_tokens; no forced tool use', async () => {
  expect(await verdict(base({ max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 1000 } }))).toMatch(/budget_tokens: Input should be greater than or equal to 1024/);
  expect(await verdict(base({ max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 2048 } }))).toMatch(/`max_tokens` must be greater than `thinking.budget_tokens`/);
  expect(await verdict(base({ max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 2048 } }))).toBe('accepted');
  expect(await verdict(base({ thinking: { type: 'adaptive' } }))).toBe('accepted');
  expect(await verdict(base({ tools: [tool], tool_choice: { type: 'any' }, thinking: { type: 'adaptive' } }))).toMatch(/forces tool use/);
});

test('thinking in a tool loop: the assistant turn goes back with its signed thinking first and unchanged', async () => {
  const thinking = { type: 'enabled' as const, budget_tokens: 1024 };
  api.enqueue(fakeTurns.thinking('I should list the files.', fakeTurns.toolUse('toolu_9', 'list_files', {})));
  const first = await client.messages.create(base({ max_tokens: 2048, thinking, tools: [tool] }));
  const [think, call] = first.content as [Anthropic.ThinkingBlock, Anthropic.ToolUseBlock];
  expect(think).toMatchObject({ type: 'thinking', thinking: 'I should list the files.', signature: expect.any(String) });
  const loop = (assistant: Anthropic.ContentBlockParam[]): Body =>
    base({
      max_tokens: 2048,
      thinking,
      tools: [tool],
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: assistant },
        { role: 'user', content: [result(call.id)] },
      ],
    });

  expect(await verdict(loop([think, call]))).toBe('accepted');
  expect(await verdict(loop([call]))).toMatch(/Expected `thinking` or `redacted_thinking`, but found `tool_use`/);
  expect(await verdict(loop([{ ...think, thinking: 'I should delete the files.' }, call]))).toMatch(/Invalid `signature` in `thinking` block/);
  expect(await verdict(loop([{ ...think, signature: '' }, call]))).toMatch(/Invalid `signature`/);
  expect(await verdict(loop([{ type: 'redacted_thinking', data: 'made-up' }, call]))).toMatch(/Invalid `data` in `redacted_thinking`/);
});

test('a conversation over the context window is "prompt is too long" (tokens estimated as chars / 4)', async () => {
  api.rules = { contextWindowTokens: 1_000 };
  expect(await verdict(base({ messages: [{ role: 'user', content: 'x'.repeat(3_000) }] }))).toBe('accepted');
  expect(await verdict(base({ messages: [{ role: 'user', content: 'x'.repeat(5_000) }] }))).toMatch(/^prompt is too long: \d+ tokens > 1000 maximum$/);
});

test('with a model list, an unknown model is 404 not_found_error', async () => {
  const strictModels = new FakeMessagesApi({ models: ['claude-sonnet-5-5'] });
  await strictModels.start();
  try {
    const c = new Anthropic({ apiKey: 'k', baseURL: strictModels.url, maxRetries: 0 });
    await expect(c.messages.create(base({ model: 'claude-nonesuch' }))).rejects.toBeInstanceOf(Anthropic.NotFoundError);
  } finally {
    await strictModels.stop();
  }
});

test('lenient mode accepts what strict refuses (kept for tests that need it)', async () => {
  const lenient = new FakeMessagesApi({ strict: false });
  await lenient.start();
  try {
    const c = new Anthropic({ apiKey: 'k', baseURL: lenient.url, maxRetries: 0 });
    lenient.enqueue(fakeTurns.text('fine'));
    const reply = await c.messages.create(base({ messages: toolLoop() }));
    expect(reply.content).toEqual([{ type: 'text', text: 'fine' }]);
  } finally {
    await lenient.stop();
  }
});

test('a responder computes replies from the request when the queue is empty', async () => {
  api.responder = (req) => fakeTurns.text(`you said ${JSON.stringify(req.body.messages.at(-1))}`);
  try {
    const reply = await client.messages.create(base());
    expect(reply.content[0]).toMatchObject({ text: 'you said {"role":"user","content":"hi"}' });
  } finally {
    delete api.responder;
  }
});

test('tool names outside ^[a-zA-Z0-9_-]{1,64}$ are refused; 64 characters pass', async () => {
  for (const name of ['list files', 'list.files', 'ünïcode', '', 'x'.repeat(65)]) {
    expect(await verdict(base({ tools: [{ ...tool, name }] }))).toBe("tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'");
  }
  expect(await verdict(base({ tools: [{ ...tool, name: `a-${'x'.repeat(62)}` }] }))).toBe('accepted');
});

test('a custom tool needs an input_schema that is an object schema', async () => {
  const { input_schema: _omitted, ...noSchema } = tool;
  expect(await verdict(base({ tools: [noSchema as never] }))).toBe('tools.0.custom.input_schema: Field required');
  expect(await verdict(base({ tools: [{ ...tool, input_schema: 'object' as never }] }))).toBe('tools.0.custom.input_schema: Input should be a valid dictionary');
  expect(await verdict(base({ tools: [{ ...tool, input_schema: { type: 'string' } as never }] }))).toBe("tools.0.custom.input_schema.type: Input should be 'object'");
});

test('an unknown top-level field is refused, not ignored', async () => {
  expect(await verdict({ ...base(), temprature: 0.2 } as never)).toBe('temprature: Extra inputs are not permitted');
  expect(await verdict(base({ metadata: { user_id: 'u-1' }, stop_sequences: ['END'] }))).toBe('accepted');
});

test('the fake accepts exactly the body fields the installed SDK documents', () => {
  const dts = sdkMessagesTypes();
  const start = dts.indexOf('export interface MessageCreateParamsBase {');
  const declaration = dts.slice(start, dts.indexOf('\n}', start));
  const fields = [...declaration.matchAll(/^ {4}([a-z_]+)\??:/gm)].map((m) => m[1]);
  expect(fields.length).toBeGreaterThan(5);
  expect([...DOCUMENTED_BODY_FIELDS].sort()).toEqual([...new Set(fields)].sort());
});

test('a request without the anthropic-version header is refused', async () => {
  api.clearQueue().enqueue(fakeTurns.text('ok'));
  const res = await fetch(`${api.url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'k' },
    body: JSON.stringify(base()),
  });
  expect(res.status).toBe(400);
  expect(await res.json()).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: 'anthropic-version: header is required' } });
  expect(api.pending).toBe(1);
  const withVersion = await fetch(`${api.url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify(base()),
  });
  expect(withVersion.status).toBe(200);
  api.clearQueue();
});

test('by default the fake knows only the documented models: a made-up or misspelt id is 404', async () => {
  api.clearQueue().enqueue(fakeTurns.text('ok'));
  for (const model of ['claude-sonnet-5-6', 'claude-3-opus', 'claude-sonnet-5.5']) {
    const err = await client.messages.create(base({ model })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.NotFoundError);
    expect((err as InstanceType<typeof Anthropic.NotFoundError>).apiMessage).toBe(`model: ${model}`);
  }
  expect(api.pending).toBe(1);
  for (const model of ['claude-sonnet-5-5', 'claude-haiku-4-5', DEFAULT_ANTHROPIC_MODEL]) {
    api.clearQueue().enqueue(fakeTurns.text('ok'));
    await expect(client.messages.create(base({ model }))).resolves.toMatchObject({ model });
  }
  api.clearQueue();
});

test("the default model list is the installed SDK's documented list", () => {
  const dts = sdkMessagesTypes();
  const line = dts.split('\n').find((l) => l.startsWith('export type Model = '))!;
  const ids = [...line.matchAll(/'([^']+)'/g)].map((m) => m[1]);
  expect(ids.length).toBeGreaterThan(3);
  expect([...DOCUMENTED_MODELS].sort()).toEqual([...ids].sort());
  expect(new FakeMessagesApi().models).toEqual(DOCUMENTED_MODELS);
});
