/**
 * The claim rule on what the journal holds (issue 47): who holds an intent and how its call stands
 * decide, never how the caller is related to the holder.
 */
import { claimName, decideClaim, type IntentClaim, type IntentView } from '../../src/forks/intent-claims';
import { familyOf, type EffectRecord, type EffectState } from '../../src/protocol/fork';

const record = (attempt: string, state: EffectState, over: Partial<EffectRecord> = {}): EffectRecord => ({
  version: 3,
  taskId: `task-of-${attempt}`,
  runId: attempt.split('/')[0]!,
  turn: 1,
  at: '2026-11-29T07:00:00.000Z',
  tool: 'pay',
  effect: 'write',
  idempotent: false,
  intent: 'pay:abc',
  idempotencyKey: `key-${attempt}`,
  attempt,
  state,
  outcome: { ok: state === 'done', summary: state },
  ...over,
});
const claim = (generation: number, attempt: string, state: EffectState): IntentClaim => ({
  generation,
  claim: record(attempt, 'pending', { generation }),
  latest: record(attempt, state, { generation }),
  state,
});
const view = (...claims: IntentClaim[]): IntentView => ({ claims, legacy: [] });
const caller = { attempt: 'run-9/5', idempotent: false, idempotencyKey: 'key-run-9/5', repeatApproved: false };

test('an intent nobody holds is taken at generation 1', () => {
  expect(decideClaim(view(), caller)).toEqual({ kind: 'take', generation: 1 });
});

test.each<EffectState>(['pending', 'done', 'unknown'])('a claim %s by any other call is refused, naming its record, whatever the relation', (state) => {
  const held = claim(1, 'run-1/3', state);
  expect(decideClaim(view(held), caller)).toEqual({ kind: 'refuse', record: held.latest });
});

test("the holder's own retry (same attempt) goes on under its claim", () => {
  const held = claim(1, caller.attempt, 'pending');
  expect(decideClaim(view(held), caller)).toEqual({ kind: 'hold', claim: held });
});

test('a failed claim took no effect and releases the intent: the next generation is taken, never the failed one again', () => {
  expect(decideClaim(view(claim(1, 'run-1/3', 'failed')), caller)).toEqual({ kind: 'take', generation: 2 });
  // Its own failed claim too: a retry after a failure is a new claim.
  expect(decideClaim(view(claim(1, caller.attempt, 'failed')), caller)).toEqual({ kind: 'take', generation: 2 });
});

test('a failed repeat does not hide the effect before it: the earlier done claim still holds the intent', () => {
  const first = claim(1, 'run-1/3', 'done');
  expect(decideClaim(view(first, claim(2, 'run-2/3', 'failed')), caller)).toEqual({ kind: 'refuse', record: first.latest });
});

test("a person's approval to run it again is a new claim, one past the last", () => {
  expect(decideClaim(view(claim(1, 'run-1/3', 'done'), claim(2, 'run-2/3', 'failed')), { ...caller, repeatApproved: true })).toEqual({ kind: 'take', generation: 3 });
});

test('an idempotent call done or unknown elsewhere is reused under its key; pending elsewhere, a person is asked', () => {
  const idempotent = { ...caller, idempotent: true };
  const done = claim(1, 'run-1/3', 'done');
  expect(decideClaim(view(done), idempotent)).toEqual({ kind: 'reuse', claim: done });
  const unknown = claim(1, 'run-1/3', 'unknown');
  expect(decideClaim(view(unknown), idempotent)).toEqual({ kind: 'reuse', claim: unknown });
  const pending = claim(1, 'run-1/3', 'pending');
  expect(decideClaim(view(pending), idempotent)).toEqual({ kind: 'refuse', record: pending.latest });
});

test("an idempotent call under its holder's own key is the same call again (the model's retry after a lost reply): reused even while pending; another key waits for a person", () => {
  const pending = claim(1, 'run-1/3', 'pending');
  expect(decideClaim(view(pending), { ...caller, idempotent: true, idempotencyKey: 'key-run-1/3' })).toEqual({ kind: 'reuse', claim: pending });
  expect(decideClaim(view(pending), { ...caller, idempotencyKey: 'key-run-1/3' })).toEqual({ kind: 'refuse', record: pending.latest });
});

test('the family is named by its root chain: a task reusing a freed id is another family; lineages from before name the root alone', () => {
  expect(familyOf('t', 'run-a', [])).toBe('t/run-a');
  expect(familyOf('t', 'run-b', [])).not.toBe(familyOf('t', 'run-a', []));
  expect(familyOf('fork', 'run-f', [{ taskId: 't', turn: 2, firstRunId: 'run-a' }])).toBe('t/run-a');
  expect(familyOf('fork', 'run-f', [{ taskId: 't', turn: 2 }])).toBe('t');
});

test('a call journaled by a build before claims still holds its intent unless it failed', () => {
  const legacy = record('run-0/2', 'done', { version: 2 });
  expect(decideClaim({ claims: [], legacy: [legacy] }, caller)).toEqual({ kind: 'refuse', record: legacy });
  expect(decideClaim({ claims: [], legacy: [record('run-0/2', 'failed', { version: 2 })] }, caller)).toEqual({ kind: 'take', generation: 1 });
});

test('claim names sort by generation and refuse anything but 1..99999999', () => {
  expect(claimName(1)).toBe('claim-00000001');
  expect([claimName(10), claimName(9)].sort()).toEqual([claimName(9), claimName(10)]);
  for (const bad of [0, -1, 1.5, 100_000_000, Number.NaN]) expect(() => claimName(bad)).toThrow(RangeError);
});
