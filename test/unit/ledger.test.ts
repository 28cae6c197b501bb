import { callKey } from '../../src/workflows/base/canonical-key';
import { canonicalJson } from '../../src/protocol/canonical-json';
import { LOOP_THRESHOLD, ToolLedger } from '../../src/workflows/state/ledger';
import type { ToolManifest } from '../../src/protocol/agent-manifest';

const tool = (effect: ToolManifest['effect'], cacheTtlMs = 60_000): ToolManifest => ({
  name: 't',
  description: 't',
  inputSchema: { type: 'object', properties: { page: { type: 'integer', default: 1 } } },
  effect,
  idempotent: effect === 'read',
  timeoutMs: 1_000,
  maxAttempts: 3,
  fallbacks: [],
  cacheTtlMs,
});
const ok = { content: '{"a":1}', isError: false };
const broken = { content: '', isError: true, errorClass: 'schema_mismatch' as const, code: 'invalid_json' };

test('argument order and schema defaults do not change the key; values do', () => {
  const schema = tool('read').inputSchema;
  expect(canonicalJson({ b: 1, a: [2, { d: 1, c: 2 }] }, { strict: false })).toBe('{"a":[2,{"c":2,"d":1}],"b":1}');
  expect(callKey('t', { q: 'x' }, schema)).toBe(callKey('t', { page: 1, q: 'x' }, schema));
  expect(callKey('t', { q: 'x' }, schema)).not.toBe(callKey('t', { page: 2, q: 'x' }, schema));
});

test('a ledger key never throws inside the workflow: what strict canonical JSON refuses is read as JSON.stringify reads it', () => {
  let deep: unknown = 1;
  for (let i = 0; i < 100; i++) deep = [deep];
  expect(() => canonicalJson(deep)).toThrow(/nested too deeply/);
  expect(() => callKey('t', { deep })).not.toThrow();
  expect(() => canonicalJson({ n: NaN })).toThrow(/NaN/);
  expect(canonicalJson({ n: NaN, f: () => 1 }, { strict: false })).toBe('{"f":null,"n":null}');
  expect(callKey('t', { n: NaN })).toBe(callKey('t', { n: null }));
});

test('a read is reused within its TTL and runs again after it', () => {
  const ledger = new ToolLedger();
  ledger.record('k', 't', 1, 1_000, ok, true);
  expect(ledger.decide(tool('read'), 'k', 2, 30_000)).toMatchObject({ action: 'reuse', fromTurn: 1 });
  expect(ledger.decide(tool('read'), 'k', 2, 70_000)).toEqual({ action: 'run' });
  expect(ledger.decide(tool('read', 0), 'k', 2, 1_001)).toEqual({ action: 'run' });
});

test('a call that failed non-transiently is refused; a transient failure may run again', () => {
  const ledger = new ToolLedger();
  ledger.record('bad', 't', 1, 0, broken, true);
  expect(ledger.decide(tool('read'), 'bad', 2, 0)).toMatchObject({ action: 'refuse', error: { code: 'repeated_failed_call' } });
  ledger.record('flaky', 't', 1, 0, { content: '', isError: true, errorClass: 'transient', code: 'http_503' }, true);
  expect(ledger.decide(tool('read'), 'flaky', 2, 0)).toEqual({ action: 'run' });
});

test('a successful write is never repeated; executions per key per turn are capped', () => {
  const ledger = new ToolLedger();
  ledger.record('w', 't', 1, 0, ok, true);
  expect(ledger.decide(tool('write'), 'w', 2, 0)).toMatchObject({ action: 'refuse', error: { code: 'duplicate_write' } });
  const flaky = { content: '', isError: true, errorClass: 'transient' as const, code: 'timeout' };
  for (let i = 0; i < 3; i++) ledger.record('r', 't', 5, 0, flaky, true);
  expect(ledger.decide(tool('read'), 'r', 5, 0)).toMatchObject({ action: 'refuse', error: { code: 'retry_budget_exceeded' } });
  expect(ledger.decide(tool('read'), 'r', 6, 0)).toEqual({ action: 'run' });
});

test(`the loop detector trips when the same answer comes back ${LOOP_THRESHOLD} turns running, and a reset clears it`, () => {
  const ledger = new ToolLedger();
  expect(ledger.record('k', 't', 1, 0, ok, true)).toBe(false);
  expect(ledger.record('k', 't', 1, 0, ok, false)).toBe(false); // same turn twice counts once
  expect(ledger.record('k', 't', 2, 0, ok, false)).toBe(false);
  expect(ledger.record('k', 't', 3, 0, ok, false)).toBe(true);
  ledger.resetStreaks();
  expect(ledger.record('k', 't', 4, 0, ok, false)).toBe(false);
  expect(ledger.record('k', 't', 5, 0, { ...ok, content: 'other' }, true)).toBe(false);
});

test('the ledger state is plain JSON (it is carried across continue-as-new)', () => {
  const ledger = new ToolLedger();
  ledger.record('k', 't', 1, 0, ok, true);
  const copy = new ToolLedger(JSON.parse(JSON.stringify(ledger.toJSON())));
  expect(copy.decide(tool('read'), 'k', 2, 10)).toMatchObject({ action: 'reuse' });
});

test('5a. a write whose outcome is unknown is never re-run under a new key: an idempotent one reuses its key, another is refused', () => {
  const ledger = new ToolLedger();
  const write = (idempotent: boolean) => ({ name: 'refund', description: '', inputSchema: {}, effect: 'write' as const, idempotent, timeoutMs: 1_000, maxAttempts: 4, fallbacks: [], cacheTtlMs: 0 });
  const unknown = { content: '', isError: true, errorClass: 'transient' as const, code: 'timeout', outcomeUnknown: true };
  ledger.record('refund#a', write(true), 1, 0, unknown, true, 'task:run:7');
  expect(ledger.decide(write(true), 'refund#a', 2, 10)).toEqual({ action: 'run', idempotencyKey: 'task:run:7' });
  ledger.record('legacy#b', write(false), 1, 0, unknown, true, 'task:run:8');
  expect(ledger.decide(write(false), 'legacy#b', 2, 10)).toMatchObject({ action: 'refuse', error: { code: 'outcome_unknown' } });
});

test('8. the loop detector counts consecutive turns only: the same answer in turns 2, 40 and 95 is not a loop', () => {
  const ledger = new ToolLedger();
  const read = { name: 'r', description: '', inputSchema: {}, effect: 'read' as const, idempotent: true, timeoutMs: 1_000, maxAttempts: 4, fallbacks: [], cacheTtlMs: 0 };
  const same = { content: '{"x":1}', isError: false };
  expect([2, 40, 95].map((turn) => ledger.record('r#a', read, turn, turn, same, true))).toEqual([false, false, false]);
  expect([96, 97].map((turn) => ledger.record('r#a', read, turn, turn, same, true))).toEqual([false, true]);
});

test("the ledger a fork starts from keeps writes, failures and recent reads without their cached content; the task's own ledger is unchanged", () => {
  const ledger = new ToolLedger();
  ledger.record('recent', tool('read'), 9, 0, ok, true);
  ledger.record('old', tool('read'), 1, 0, ok, true);
  ledger.record('w', tool('write'), 1, 0, ok, true);
  ledger.record('bad', tool('read'), 1, 0, broken, true);
  const forked = ledger.forkable(10);
  expect(Object.keys(forked.records).sort()).toEqual(['bad', 'recent', 'w']);
  expect(forked.records.recent!.executed!.content).toBe('');
  expect(ledger.toJSON().records.recent!.executed!.content).toBe(ok.content);
  expect(Object.keys(ledger.toJSON().records)).toContain('old');
  // The fork still refuses to repeat the write, and runs the read again instead of answering from a cache it no longer has.
  const restored = new ToolLedger(forked);
  expect(restored.decide(tool('write'), 'w', 11, 0)).toMatchObject({ action: 'refuse', error: { code: 'duplicate_write' } });
  expect(restored.decide(tool('read'), 'recent', 11, 0)).toEqual({ action: 'run' });
});

test('a person stepping in (unblock) lets each call that failed for good run once more; a write of unknown outcome is not forgiven', () => {
  const ledger = new ToolLedger();
  const revoked = { content: '', isError: true, errorClass: 'resource' as const, code: 'credential_revoked' };
  ledger.record('read', tool('read'), 1, 0, revoked, true);
  expect(ledger.decide(tool('read'), 'read', 2, 1_000)).toMatchObject({ action: 'refuse', error: { code: 'repeated_failed_call' } });
  ledger.record('write', tool('write'), 1, 0, { content: '', isError: true, errorClass: 'transient', code: 'timeout', outcomeUnknown: true }, true);
  ledger.forgiveFailures();
  expect(ledger.decide(tool('read'), 'read', 2, 1_000)).toEqual({ action: 'run' });
  expect(ledger.decide(tool('write'), 'write', 2, 1_000)).toMatchObject({ action: 'refuse', error: { code: 'outcome_unknown' } });
  // Once: failing the same way after the fix is remembered again.
  ledger.record('read', tool('read'), 2, 1_000, revoked, true);
  expect(ledger.decide(tool('read'), 'read', 3, 2_000)).toMatchObject({ action: 'refuse', error: { code: 'repeated_failed_call' } });
  // A tool's broken answer is not something an unblock fixes: still refused.
  ledger.record('bad', tool('read'), 1, 0, broken, true);
  ledger.forgiveFailures();
  expect(ledger.decide(tool('read'), 'bad', 4, 2_000)).toMatchObject({ action: 'refuse', error: { code: 'repeated_failed_call' } });
  // The memory travels with the ledger's state (continue-as-new, forks).
  ledger.record('read', tool('read'), 4, 2_000, revoked, true);
  const copy = new ToolLedger(JSON.parse(JSON.stringify(ledger.toJSON())));
  expect(copy.decide(tool('read'), 'read', 5, 2_000)).toMatchObject({ action: 'refuse' });
  copy.forgiveFailures();
  expect(copy.decide(tool('read'), 'read', 5, 2_000)).toEqual({ action: 'run' });
});
