/**
 * Ids derived from task ids (children, forks, rewinds) stay within Temporal's limits for any task id
 * it accepts: short ids derive exactly as before, long ones are shortened deterministically.
 */
import { childTaskId } from '../../src/protocol/delegation';
import { DERIVED_ID_MAX_BYTES, derivedId, ID_HASH_CHARS, MAX_TASK_ID_BYTES, SHORTENED_ID_MARK, taskIdProblem, utf8Length } from '../../src/protocol/task-ids';
import { TaskIdRefusedError, taskIdRefusedOr } from '../../src/client/task-client';

const HASHED = new RegExp(`~[0-9a-f]{${ID_HASH_CHARS}}$`);
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const long = (n: number, seed = 'lead') => (seed + '-').repeat(Math.ceil(n / (seed.length + 1))).slice(0, n);

test('an id that fits derives exactly as before, under either bound', () => {
  expect(childTaskId('team/lead', 'researcher', 7)).toBe('team/lead--researcher-7');
  expect(childTaskId('team/lead', 'researcher', 7, MAX_TASK_ID_BYTES)).toBe('team/lead--researcher-7');
  // Right at the bound: unchanged; one byte over: shortened.
  const tail = '--clerk-1';
  const atBound = long(DERIVED_ID_MAX_BYTES - tail.length);
  expect(childTaskId(atBound, 'clerk', 1)).toBe(`${atBound}${tail}`);
  expect(childTaskId(`${atBound}x`, 'clerk', 1)).toMatch(HASHED);
  expect(derivedId('task-1a2b3c4d', '-fork-0011aabb')).toBe('task-1a2b3c4d-fork-0011aabb');
});

test('a long id is bounded: the start of the parent, the whole tail, then ~ and 32 hex of the id it would have been', () => {
  const parent = long(995);
  const id = childTaskId(parent, 'researcher', 12);
  expect(utf8Length(id)).toBeLessThanOrEqual(DERIVED_ID_MAX_BYTES);
  expect(utf8Length(id)).toBeGreaterThan(DERIVED_ID_MAX_BYTES - 4);
  expect(id).toMatch(HASHED);
  expect(id.startsWith(parent.slice(0, 150))).toBe(true);
  expect(id.slice(0, -(ID_HASH_CHARS + 1)).endsWith('--researcher-12')).toBe(true);
  // Runs from before the bounded-ids marker keep the 1,000-byte bound: past it, shortened too.
  const old = childTaskId(parent, 'researcher', 12, MAX_TASK_ID_BYTES);
  expect(utf8Length(old)).toBeLessThanOrEqual(MAX_TASK_ID_BYTES);
  expect(old).toMatch(HASHED);
  // Between the two bounds the run's rules decide: unchanged without the marker, shortened with it.
  const mid = long(400);
  expect(childTaskId(mid, 'researcher', 3, MAX_TASK_ID_BYTES)).toBe(`${mid}--researcher-3`);
  expect(utf8Length(childTaskId(mid, 'researcher', 3))).toBeLessThanOrEqual(DERIVED_ID_MAX_BYTES);
});

test('deterministic, and distinct for different parents, agents and call numbers', () => {
  const a = long(995, 'a');
  const b = `${a.slice(0, 994)}b`; // the same first 994 characters: only the hash tells them apart
  expect(childTaskId(a, 'clerk', 1)).toBe(childTaskId(a, 'clerk', 1));
  const ids = new Set([
    childTaskId(a, 'clerk', 1),
    childTaskId(b, 'clerk', 1),
    childTaskId(a, 'clerk', 2),
    childTaskId(a, 'clerk', 11),
    childTaskId(a, 'clerk.v2', 1),
    childTaskId(`${a}--clerk-1`, 'clerk', 1),
    derivedId(a, '-fork-00000000'),
    derivedId(a, '-fork-00000001'),
  ]);
  expect(ids.size).toBe(8);
  for (const id of ids) expect(utf8Length(id)).toBeLessThanOrEqual(DERIVED_ID_MAX_BYTES);
});

test('any parent length, any characters: within the bound, whole characters, and a fitting id untouched', () => {
  const alphabets = ['x', 'é', '€', '😀', 'a/b c'];
  for (const chars of alphabets) {
    for (const n of [0, 1, 100, 172, 200, 240, 246, 250, 300, 600, 999, 1000]) {
      const parent = chars.repeat(n).slice(0, n * chars.length);
      for (const bound of [DERIVED_ID_MAX_BYTES, MAX_TASK_ID_BYTES]) {
        const plain = `${parent}--clerk-7`;
        const id = childTaskId(parent, 'clerk', 7, bound);
        expect(utf8Length(id)).toBeLessThanOrEqual(bound);
        if (utf8Length(plain) <= bound) expect(id).toBe(plain);
        else expect(id).toMatch(HASHED);
        // No character is split: a lone surrogate would be a different id to the server.
        expect(id).not.toMatch(LONE_SURROGATE);
      }
    }
  }
});

test('a tail longer than the bound leaves room is cut with the rest, still bounded and hashed', () => {
  const id = derivedId('lead', `-${'t'.repeat(400)}`);
  expect(utf8Length(id)).toBeLessThanOrEqual(DERIVED_ID_MAX_BYTES);
  expect(id.startsWith('lead-ttt')).toBe(true);
  expect(id).toMatch(HASHED);
  expect(SHORTENED_ID_MARK).toBe('~');
});

test('a task id Temporal would refuse is named in one line before anything is sent', () => {
  expect(taskIdProblem(long(MAX_TASK_ID_BYTES))).toBeUndefined();
  expect(taskIdProblem('x'.repeat(MAX_TASK_ID_BYTES + 1))).toBe('the task id is 1001 bytes long; Temporal accepts at most 1000 (its default limit.maxIDLength): choose a shorter one');
  // Bytes, as the server counts: 334 characters of 3 bytes.
  expect(taskIdProblem('€'.repeat(334))).toMatch(/^the task id is 1002 bytes long/);
  expect(taskIdProblem('')).toBe('a task id must not be empty');
  // An id its children's ParentTask could not hold (a Keyword's JSON is at most 2 KB): 1,000 quotes are 2,002 bytes
  // as JSON and fit; 400 control characters are 2,402.
  expect(taskIdProblem('"'.repeat(1000))).toBeUndefined();
  expect(taskIdProblem('\u0001'.repeat(400))).toBe(
    'the task id is 2402 bytes as JSON (quotes, backslashes and control characters are escaped); the ParentTask and ForkedFrom search attributes that name it hold at most 2036: choose a shorter one',
  );
});

test("the server's own refusal of a long id (a lower limit.maxIDLength) becomes a TaskIdRefusedError; other errors pass", () => {
  const grpc = Object.assign(new Error('3 INVALID_ARGUMENT: WorkflowId length exceeds limit.'), { code: 3 });
  const refused = taskIdRefusedOr(grpc, 'x'.repeat(300));
  expect(refused).toBeInstanceOf(TaskIdRefusedError);
  expect((refused as Error).message).toMatch(/^the server refused the task id \(300 bytes\): it is longer than the server's limit\.maxIDLength/);
  expect((refused as Error).message).not.toContain('\n');
  const wrapped = Object.assign(new Error('Failed to start'), { cause: new Error('WorkflowId exceeds length limit.') });
  expect(taskIdRefusedOr(wrapped, 'y')).toBeInstanceOf(TaskIdRefusedError);
  const other = new Error('14 UNAVAILABLE: connection refused');
  expect(taskIdRefusedOr(other, 'z')).toBe(other);
});
