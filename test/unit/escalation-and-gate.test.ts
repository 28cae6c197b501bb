import { escalationLevel } from '../../src/workflows/people/escalation-policy';
import { gateToolCall } from '../../src/rules/tool-gate';
import { toolError } from '../../src/protocol/tool-error';
import type { ToolManifest } from '../../src/protocol/agent-manifest';

const err = (c: Parameters<typeof toolError>[0], attempts = 1) => toolError(c, 'x', 'x', undefined, attempts);

test.each([
  [{ kind: 'tool_error', error: err('resource'), effect: 'read' }, 'block'],
  [{ kind: 'tool_error', error: err('transient', 3), effect: 'read' }, 'inform'],
  [{ kind: 'tool_error', error: err('transient', 1), effect: 'read' }, 'auto'],
  [{ kind: 'tool_error', error: err('model'), effect: 'destructive' }, 'confirm'],
  [{ kind: 'tool_error', error: err('model'), effect: 'write' }, 'auto'],
  [{ kind: 'tool_error', error: err('permanent'), effect: 'write' }, 'auto'],
  [{ kind: 'fallback_used' }, 'inform'],
  [{ kind: 'guard', code: 'loop_detected' }, 'block'],
  [{ kind: 'guard', code: 'turn_budget' }, 'block'],
  [{ kind: 'model_failed', error: { ...err('permanent'), code: 'authentication_failed' } }, 'block'],
  [{ kind: 'model_failed', error: { ...err('permanent'), code: 'script_exhausted' } }, 'auto'],
] as const)('escalation for %j is %s', (trigger, level) => {
  expect(escalationLevel(trigger as Parameters<typeof escalationLevel>[0])).toBe(level);
});

const manifest = (name: string, effect: string): ToolManifest =>
  ({ name, description: name, inputSchema: {}, effect, idempotent: false, timeoutMs: 1, maxAttempts: 1, fallbacks: [], cacheTtlMs: 0 }) as ToolManifest;
const tools = new Map([
  ['read_it', manifest('read_it', 'read')],
  ['write_it', manifest('write_it', 'write')],
  ['drop_it', manifest('drop_it', 'destructive')],
  ['odd_it', manifest('odd_it', 'teleport')],
]);

test('the gate: reads run, writes and destructive calls confirm by default, an unknown effect counts as destructive', () => {
  expect(gateToolCall('read_it', tools, {}).action).toBe('run');
  expect(gateToolCall('write_it', tools, {}).action).toBe('confirm');
  expect(gateToolCall('drop_it', tools, {}).action).toBe('confirm');
  expect(gateToolCall('odd_it', tools, { destructive: 'deny', write: 'allow' })).toMatchObject({ action: 'refuse', error: { code: 'not_permitted' } });
  expect(gateToolCall('nope', tools, {})).toMatchObject({ action: 'refuse', error: { code: 'unknown_tool' } });
});

test('the policy: per-effect rules, and a per-tool rule wins', () => {
  expect(gateToolCall('write_it', tools, { write: 'allow' }).action).toBe('run');
  expect(gateToolCall('drop_it', tools, { destructive: 'allow' }).action).toBe('run');
  expect(gateToolCall('drop_it', tools, { destructive: 'allow', tools: { drop_it: 'deny' } }).action).toBe('refuse');
  expect(gateToolCall('read_it', tools, { tools: { read_it: 'confirm' } }).action).toBe('confirm');
});

test("auto: a classifier decides, and write: 'auto' never makes a destructive call auto", () => {
  expect(gateToolCall('write_it', tools, { write: 'auto' }).action).toBe('classify');
  expect(gateToolCall('drop_it', tools, { write: 'auto' }).action).toBe('confirm');
  expect(gateToolCall('odd_it', tools, { write: 'auto' }).action).toBe('confirm');
  expect(gateToolCall('drop_it', tools, { destructive: 'auto' }).action).toBe('classify');
  expect(gateToolCall('write_it', tools, { write: 'auto', tools: { write_it: 'confirm' } }).action).toBe('confirm');
  expect(gateToolCall('read_it', tools, { write: 'auto' }).action).toBe('run');
});
