/**
 * What the inbox and the MCP server show of a pending approval when no worker runs: the arguments
 * only when the memo's `waitingFor` holds them whole, never a cut prefix.
 */
import { argumentsHash, wholeArguments } from '../../src/client/pending-at-rest';

const approval = { id: 'a-7', tool: 'delete_file' };
// How the workflow writes it (src/workflows/people/pending-memo.ts): the JSON cut at 200 characters.
const waitingFor = (input: unknown) => `approval a-7: delete_file ${JSON.stringify(input).slice(0, 200)}`;

test('arguments the memo holds whole are read back exactly, a blob reference included', () => {
  expect(wholeArguments(waitingFor({ path: 'notes.txt', force: true }), approval)).toEqual({ path: 'notes.txt', force: true });
  const marker = { $blob: `sha256:${'ab'.repeat(32)}`, bytes: 52_000 };
  expect(wholeArguments(waitingFor(marker), approval)).toEqual(marker);
});

test("arguments cut at 200 characters, another approval's line, and a non-object are not shown", () => {
  expect(wholeArguments(waitingFor({ path: 'x'.repeat(300) }), approval)).toBeUndefined();
  expect(wholeArguments(waitingFor({ path: 'notes.txt' }), { id: 'a-8', tool: 'delete_file' })).toBeUndefined();
  expect(wholeArguments(waitingFor({ path: 'notes.txt' }), { id: 'a-7', tool: 'write_file' })).toBeUndefined();
  expect(wholeArguments('approval a-7: delete_file [1,2]', approval)).toBeUndefined();
  expect(wholeArguments('block b-1: turn_budget', approval)).toBeUndefined();
  expect(wholeArguments(undefined, approval)).toBeUndefined();
});

test('the hash of arguments a person read ignores key order and tells different values apart', () => {
  expect(argumentsHash({ a: 1, b: [1, { c: 2, d: 3 }] })).toBe(argumentsHash({ b: [1, { d: 3, c: 2 }], a: 1 }));
  expect(argumentsHash({ path: 'a.txt' })).not.toBe(argumentsHash({ path: 'b.txt' }));
});
