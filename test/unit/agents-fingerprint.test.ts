/** The agents' part of a build id (src/worker/agents-fingerprint.ts): a change to what an agent does is a new build, a worker's settings are not. */
import { z } from 'zod';
import { defineAgent } from '../../src/agents/define-agent';
import { defineTool } from '../../src/tools/define-tool';
import { agentsFingerprint } from '../../src/worker/agents-fingerprint';
import { composeBuildId, defaultBuildId, packageVersion, resolveVersioning } from '../../src/worker/versioning';
import { workflowCodeHash } from '../../src/worker/workflow-bundle';

const lookup = (description = 'Looks a customer up.', input = z.object({ id: z.string() })) =>
  defineTool({ name: 'lookup', description, input, output: z.object({ ok: z.boolean() }), effect: 'read', idempotent: true, run: async () => ({ ok: true }) });
const agent = (overrides: Partial<Parameters<typeof defineAgent>[0]> = {}) =>
  defineAgent({ name: 'crm', system: 'You answer about customers.', tools: [lookup()], model: { id: 'claude-sonnet-4-5' }, ...overrides });

test('the same agents give the same fingerprint, in any order and from fresh definitions', () => {
  const other = defineAgent({ name: 'notes', system: 'You keep notes.', tools: [] });
  const one = agentsFingerprint([agent(), other]);
  expect(one).toMatch(/^[0-9a-f]{8}$/);
  expect(agentsFingerprint([other, agent()])).toBe(one);
  // A tool's code is not its behaviour's contract: a new closure over the same schema is the same agent.
  expect(agentsFingerprint([agent({ tools: [defineTool({ ...lookup(), run: async () => ({ ok: false }) })] }), other])).toBe(one);
});

test.each([
  ['the system prompt', { system: 'You answer about customers, briefly.' }],
  ["a tool's input schema", { tools: [lookup(undefined, z.object({ id: z.string(), region: z.string() }))] }],
  ["a tool's description", { tools: [lookup('Finds a customer.')] }],
  ['the model', { model: { id: 'claude-opus-4-1' } }],
  ['the policy', { policy: { write: 'deny' as const } }],
  ['the turn limit', { maxTurns: 7 }],
  ['the queue', { taskQueue: 'crm-elsewhere' }],
])('a change to %s is a new fingerprint', (_what, change) => {
  expect(agentsFingerprint([agent(change)])).not.toBe(agentsFingerprint([agent()]));
});

test("an MCP server's secrets are not part of it: rotating a token is not a new build", () => {
  const withServer = (env: Record<string, string>) => agent({ mcpServers: [{ name: 'files', command: 'node', args: ['server.js'], env }] });
  expect(agentsFingerprint([withServer({ TOKEN: 'one' })])).toBe(agentsFingerprint([withServer({ TOKEN: 'two' })]));
  expect(agentsFingerprint([withServer({})])).not.toBe(agentsFingerprint([agent()]));
});

test('a derived build id carries the fingerprint; a given one is taken as it is', () => {
  const fp = agentsFingerprint([agent()]);
  expect(defaultBuildId(undefined, fp)).toBe(`${packageVersion()}-${workflowCodeHash()}-a${fp}`);
  expect(composeBuildId('1.2.3', '0123456789abcdef', fp)).toBe(`1.2.3-0123456789abcdef-a${fp}`);
  expect(resolveVersioning(true, '/x/workflows-0123456789abcdef.js', fp)).toMatchObject({ buildId: `${packageVersion()}-0123456789abcdef-a${fp}`, given: false, allowAgentChanges: false });
  expect(resolveVersioning({ buildId: 'v7' }, '/x/workflows-0123456789abcdef.js', fp)).toMatchObject({ buildId: 'v7', given: true });
});
