/**
 * The memory tool goes to Claude as the Messages API documents it (`{ type: 'memory_20250818',
 * name: 'memory' }`, no schema of ours), and the strict fake, through the real SDK, accepts exactly
 * that and refuses a memory tool dressed as a custom one.
 */
import Anthropic from '@anthropic-ai/sdk';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { defineAgent } from '../../src/agents/define-agent';
import { buildParams, DEFAULT_ANTHROPIC_MODEL } from '../../src/models/anthropic-model';
import { FakeMessagesApi, fakeTurns } from '../../src/testing/fake-messages-api';
import { MEMORY_TOOL_FIELDS } from '../../src/testing/messages-api-rules';

const api = new FakeMessagesApi();
let client: Anthropic;
beforeAll(async () => {
  await api.start();
  client = new Anthropic({ apiKey: 'sk-ant-test', baseURL: api.url, maxRetries: 0 });
});
afterAll(() => api.stop());

async function verdict(tools: unknown[]): Promise<string> {
  api.clearQueue().enqueue(fakeTurns.text('ok'));
  try {
    await client.messages.stream({ model: DEFAULT_ANTHROPIC_MODEL, max_tokens: 1024, messages: [{ role: 'user', content: 'hi' }], tools: tools as never }).finalMessage();
    return 'accepted';
  } catch (err) {
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    return (err as InstanceType<typeof Anthropic.BadRequestError>).apiMessage ?? '';
  } finally {
    api.clearQueue();
  }
}

const agent = defineAgent({ name: 'remembers', system: 'You remember.', tools: [], memory: true });
const manifest = agent.manifest({ provider: 'anthropic' });
const memorySpec = (() => {
  const t = manifest.tools.find((x) => x.name === 'memory')!;
  return { name: t.name, description: t.description, input_schema: t.inputSchema, type: t.declaration! };
})();

test('an agent with memory gets the memory tool (view reads, the rest write) and its writes run without a person', () => {
  const tool = manifest.tools.find((t) => t.name === 'memory');
  expect(tool).toMatchObject({ declaration: 'memory_20250818', readCommands: ['view'], effect: 'write', idempotent: true, local: false, cacheTtlMs: 0 });
  expect(manifest.policy?.tools?.memory).toBe('allow');
  expect(agent.memorySettings).toEqual({ scope: 'agent', limits: { maxFileChars: 40_000, maxScopeChars: 400_000, maxFiles: 200 } });
  // A policy that names the tool keeps its say.
  const careful = defineAgent({ name: 'careful', system: 's', tools: [], memory: { scope: 'task' }, policy: { tools: { memory: 'confirm' } } });
  expect(careful.manifest({ provider: 'anthropic' }).policy?.tools?.memory).toBe('confirm');
  expect(careful.memorySettings?.scope).toBe('task');
  expect(() => defineAgent({ name: 'bad', system: 's', tools: [], memory: { scope: 'everyone' as never } })).toThrow('memory.scope must be "agent" or "task"');
  expect(() => defineAgent({ name: 'bad', system: 's', tools: [], memory: { limits: { maxFileChars: 0 } } })).toThrow('memory.limits.maxFileChars must be a positive integer');
});

test('Claude is sent the memory tool by its documented type and name only, and the strict fake accepts that request', async () => {
  const params = buildParams({ system: '', messages: [{ role: 'user', content: 'hi' }], tools: [memorySpec] }, { model: DEFAULT_ANTHROPIC_MODEL, maxTokens: 1024, thinking: undefined });
  expect(params.tools).toEqual([{ type: 'memory_20250818', name: 'memory', cache_control: { type: 'ephemeral' } }]);
  expect(await verdict(params.tools!)).toBe('accepted');
});

test('the strict fake refuses a memory tool with a schema or description of its own, or another name', async () => {
  expect(await verdict([{ type: 'memory_20250818', name: 'memory', input_schema: { type: 'object' } }])).toBe('tools.0.memory_20250818.input_schema: Extra inputs are not permitted');
  expect(await verdict([{ type: 'memory_20250818', name: 'memory', description: 'mine' }])).toBe('tools.0.memory_20250818.description: Extra inputs are not permitted');
  expect(await verdict([{ type: 'memory_20250818', name: 'notes' }])).toBe("tools.0.memory_20250818.name: Input should be 'memory'");
});

test("the fake's memory tool fields are exactly the installed SDK's MemoryTool20250818", () => {
  const dts = readFileSync(join(dirname(require.resolve('@anthropic-ai/sdk')), 'resources/messages/messages.d.ts'), 'utf8');
  const start = dts.indexOf('export interface MemoryTool20250818 {');
  expect(start).toBeGreaterThan(0);
  const declaration = dts.slice(start, dts.indexOf('\n}', start));
  const fields = [...declaration.matchAll(/^ {4}([a-z_]+)\??:/gm)].map((m) => m[1]);
  expect([...MEMORY_TOOL_FIELDS].sort()).toEqual([...new Set(fields)].sort());
});
