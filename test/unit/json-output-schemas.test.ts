/**
 * Issue 27 item 5: the JSON Schemas of `status --json`, `list --json` and `result --json` are
 * published in schemas/ and generated from the zod schemas that tsc holds equal to the printed
 * types (src/cli/json-output.ts). test/integration/json-output.test.ts checks real output against them.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import { publishedSchemaFiles } from '../../src/cli/json-schemas';

const SCHEMAS = path.resolve(__dirname, '../../schemas');
const files = Object.entries(publishedSchemaFiles());

test.each(files)('schemas/%s is what the zod schemas generate (run `npm run schemas` after changing them)', (file, generated) => {
  expect(readFileSync(path.join(SCHEMAS, file), 'utf8')).toBe(generated);
});

test.each(files)('schemas/%s compiles under JSON Schema 2020-12 in strict mode', (file) => {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  expect(() => ajv.compile(JSON.parse(readFileSync(path.join(SCHEMAS, file), 'utf8')))).not.toThrow();
});

test('the status schema refuses a field the CLI does not print, and a missing one it always prints', () => {
  const validate = new Ajv2020({ strict: true }).compile(JSON.parse(readFileSync(path.join(SCHEMAS, 'status.schema.json'), 'utf8')));
  const summary = { taskId: 't', runId: 'r', executionStatus: 'RUNNING', startTime: '2026-01-01T00:00:00.000Z' };
  expect(validate({ summary })).toBe(true);
  expect(validate({ summary: { ...summary, surprise: 1 } })).toBe(false);
  const { runId: _runId, ...withoutRunId } = summary;
  expect(validate({ summary: withoutRunId })).toBe(false);
});
