/** Worker Versioning's pure parts: build ids, the agent's own version, what a divergence names (docs/deploy.md). */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { buildIdOfBundle, buildIdProblem, defaultBuildId, packageVersion, resolveVersioning, versioningFromEnvironment } from '../../src/worker/versioning';
import { workflowCodeHash } from '../../src/worker/workflow-bundle';
import { agentVersionOf } from '../../src/protocol/agent-version';
import { divergenceDetail } from '../../src/deploy/build-check';
import type { AgentManifest } from '../../src/protocol/agent-manifest';

const ROOT = path.resolve(__dirname, '../..');

test('the default build id is the package version and the workflow code hash, the same in another process', () => {
  const here = defaultBuildId();
  expect(here).toBe(`${packageVersion()}-${workflowCodeHash()}`);
  // What a `durable-agent worker` process computes for the same checkout (the CLI runs through tsx too).
  const there = execFileSync(process.execPath, ['--require', 'tsx/cjs', '-e', "process.stdout.write(require('./src/worker/versioning').defaultBuildId())"], { cwd: ROOT, encoding: 'utf8' });
  expect(there).toBe(here);
});

test("a worker given a bundle takes the bundle's build: the hash in its name, else the hash of its bytes", () => {
  expect(buildIdOfBundle('/x/bundles/workflows-0123456789abcdef.js')).toBe(`${packageVersion()}-0123456789abcdef`);
  expect(buildIdOfBundle('/x/bundles/workflows-0123456789abcdef-wi-1234abcd.js')).toBe(`${packageVersion()}-0123456789abcdef`);
  expect(resolveVersioning(true, '/x/workflows-0123456789abcdef-at-99.js').buildId).toBe(`${packageVersion()}-0123456789abcdef`);
  expect(resolveVersioning({ buildId: 'mine' }, '/x/workflows-0123456789abcdef.js').buildId).toBe('mine');
  expect(buildIdOfBundle(__filename)).toMatch(new RegExp(`^${packageVersion().replace(/\./g, '\\.')}-b[0-9a-f]{16}$`));
});

test('build ids and deployment names the server would refuse are refused first', () => {
  expect(buildIdProblem('v1')).toBeUndefined();
  expect(buildIdProblem('0.1.0-3f9c0a2b7d41e655')).toBeUndefined();
  expect(buildIdProblem('')).toMatch(/empty/);
  expect(buildIdProblem('__unversioned__')).toMatch(/__/);
  expect(buildIdProblem('a b')).toMatch(/white space/);
  expect(buildIdProblem('x'.repeat(256))).toMatch(/255/);
  expect(() => resolveVersioning({ deploymentName: 'a.b', buildId: 'v1' })).toThrow(/without "."/);
  expect(resolveVersioning({ buildId: 'v1' })).toMatchObject({ buildId: 'v1', bootstrap: true });
});

test('versioning is on unless DURABLE_AGENT_VERSIONING=0; any value but 0 and 1 is refused, not guessed', () => {
  expect(versioningFromEnvironment({})).toBe(true);
  expect(versioningFromEnvironment({ DURABLE_AGENT_VERSIONING: '' })).toBe(true);
  expect(versioningFromEnvironment({ DURABLE_AGENT_VERSIONING: '1' })).toBe(true);
  expect(versioningFromEnvironment({ DURABLE_AGENT_VERSIONING: '0' })).toBe(false);
  for (const value of ['true', 'false', 'off', ' 0']) expect(() => versioningFromEnvironment({ DURABLE_AGENT_VERSIONING: value })).toThrow(/must be 1 .* or 0/);
});

const manifest: AgentManifest = {
  name: 'demo',
  description: 'd',
  system: 'You help.',
  tools: [{ name: 'search', description: 's', inputSchema: { type: 'object' }, effect: 'read', idempotent: true, timeoutMs: 1000, maxAttempts: 3, fallbacks: [], cacheTtlMs: 0 }],
  model: { provider: 'scripted', script: 'x.json' },
  maxTurns: 10,
};

test("the agent's version follows its behaviour, not the worker's settings", () => {
  const v = agentVersionOf(manifest);
  expect(v).toMatch(/^[0-9a-f]{16}$/);
  expect(agentVersionOf(structuredClone(manifest))).toBe(v);
  expect(agentVersionOf({ ...manifest, approverKeys: [{ keyId: 'k', publicKey: 'AA' }] as unknown as AgentManifest['approverKeys'], wholeConversations: true })).toBe(v);
  expect(agentVersionOf({ ...manifest, system: 'You help, briefly.' })).not.toBe(v);
  expect(agentVersionOf({ ...manifest, tools: [{ ...manifest.tools[0]!, inputSchema: { type: 'object', required: ['q'] } }] })).not.toBe(v);
  expect(agentVersionOf({ ...manifest, budgets: { toolCalls: 5 } })).not.toBe(v);
  expect(agentVersionOf({ ...manifest, policy: { write: 'allow' } as AgentManifest['policy'] })).not.toBe(v);
});

test("a divergence names the event and the command from the SDK's message", () => {
  expect(divergenceDetail('[TMPRL1100] Nondeterminism error: Timer machine does not handle this event: HistoryEvent(id: 52, ActivityTaskScheduled)')).toEqual({
    eventId: 52,
    eventType: 'ActivityTaskScheduled',
    command: "Timer command (the new code's, where the history has the event)",
  });
  expect(divergenceDetail('[TMPRL1100] Nondeterminism error: No command scheduled for event HistoryEvent(id: 11, TimerStarted)')).toMatchObject({
    eventId: 11,
    eventType: 'TimerStarted',
    command: expect.stringMatching(/^no command/),
  });
});
