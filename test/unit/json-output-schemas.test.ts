/**
 * Issue 27 item 5 and issue 38 ("Outputs keep their schema"): the JSON Schemas of every verb's
 * --json output are published in schemas/ and generated from the zod schemas the verbs print
 * through (src/cli/json-schemas.ts). Here: the committed files are what those generate, every verb
 * that takes --json (by the CLI's own argument table, verb-args.ts) has one, and nothing else is in
 * schemas/. test/integration/json-output*.test.ts check real output against them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import type { Exact, Jsonified } from '../../src/cli/json-output';
import { PUBLISHED_SCHEMAS, publishedSchemaFiles } from '../../src/cli/json-schemas';
import { VERB_NAMES } from '../../src/cli/main';
import { VERB_ARGS } from '../../src/cli/verb-args';

const SCHEMAS = path.resolve(__dirname, '../../schemas');
const files = Object.entries(publishedSchemaFiles());

test.each(files)('schemas/%s is what the zod schemas generate (run `npm run schemas` after changing them)', (file, generated) => {
  expect(readFileSync(path.join(SCHEMAS, file), 'utf8')).toBe(generated);
});

test('schemas/ holds the generated files and nothing else', () => {
  expect(readdirSync(SCHEMAS).sort()).toEqual(Object.keys(PUBLISHED_SCHEMAS).sort());
});

test.each(files)('schemas/%s compiles under JSON Schema 2020-12 in strict mode', (file) => {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  expect(() => ajv.compile(JSON.parse(readFileSync(path.join(SCHEMAS, file), 'utf8')))).not.toThrow();
});

/** Each way to call a verb that takes --json, as `verb` or `verb action`, from the CLI's own argument table. */
function jsonInvocations(): string[] {
  const invocations: string[] = [];
  for (const [verb, spec] of Object.entries(VERB_ARGS)) {
    if (!('json' in spec.options)) continue;
    if ('actions' in spec) invocations.push(...Object.keys(spec.actions.table).map((action) => `${verb} ${action}`));
    else invocations.push(verb);
  }
  return invocations;
}

test('every verb (and action) that takes --json has a published schema, and every schema names only verbs that take --json', () => {
  // The argument table covers every verb the CLI runs: a new verb is in it, or the CLI refuses it.
  expect(Object.keys(VERB_ARGS).sort()).toEqual([...VERB_NAMES].sort());
  const described = Object.values(PUBLISHED_SCHEMAS).flatMap((p) => p.prints);
  const wanted = jsonInvocations();
  expect(wanted.length).toBeGreaterThan(20);
  const missing = wanted.filter((invocation) => !described.some((d) => d === invocation || d.startsWith(`${invocation} `)));
  expect(missing).toEqual([]);
  const verbsWithJson = new Set(wanted.map((w) => w.split(' ')[0]));
  const strays = described.filter((d) => !verbsWithJson.has(d.split(' ')[0]));
  expect(strays).toEqual([]);
});

test('docs/json-output.md names every published schema file', () => {
  const page = readFileSync(path.resolve(__dirname, '../../docs/json-output.md'), 'utf8');
  expect(Object.keys(PUBLISHED_SCHEMAS).filter((file) => !page.includes(`schemas/${file}`))).toEqual([]);
});

test('the type check that holds each zod schema to the printed type sees an optional field one side lacks (tsc checks these lines)', () => {
  // Both types are assignable to each other, yet one has a field the other does not name: a difference.
  // @ts-expect-error
  const lacksOptional: Exact<{ a: number; b?: string }, { a: number }> = true;
  // @ts-expect-error
  const lacksNestedOptional: Exact<{ n: { b?: string }[] }, { n: { c?: string }[] }> = true;
  // JSON leaves out a key whose value is undefined and prints a date as a string.
  const printed: Exact<{ a?: string; d: string }, Jsonified<{ a: string | undefined; d: Date }>> = true;
  expect([lacksOptional, lacksNestedOptional, printed]).toEqual([true, true, true]);
});

test('the status schema refuses a field the CLI does not print, and a missing one it always prints', () => {
  const validate = new Ajv2020({ strict: true }).compile(JSON.parse(readFileSync(path.join(SCHEMAS, 'status.schema.json'), 'utf8')));
  const summary = { taskId: 't', runId: 'r', executionStatus: 'RUNNING', startTime: '2026-01-01T00:00:00.000Z' };
  expect(validate({ summary })).toBe(true);
  expect(validate({ summary: { ...summary, surprise: 1 } })).toBe(false);
  const { runId: _runId, ...withoutRunId } = summary;
  expect(validate({ summary: withoutRunId })).toBe(false);
});
