import { z } from 'zod';
import { defineTool } from '../../src/tools/define-tool';
import { guardedCall } from '../../src/tools/guarded-call';
import { jsonSchemaValidator, InvalidJsonSchemaError } from '../../src/tools/json-schema';
import { validatorOf } from '../../src/tools/schema';

const ctx = { idempotencyKey: 'k', workflowId: 'w', toolUseId: 't', attempt: 1, signal: new AbortController().signal, heartbeat: () => undefined };

const schema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  properties: {
    id: { type: 'string' },
    count: { type: 'integer', default: 1 },
    flag: { type: 'boolean' },
    tags: { type: 'array', items: { type: 'string' } },
    color: { type: 'string', enum: ['red', 'green'] },
  },
  required: ['id'],
  additionalProperties: false,
};

test('JSON Schema input gets the same forgivable coercions as zod: "5" for 5, "true" for true, a lone value for an array; defaults applied', () => {
  const parsed = jsonSchemaValidator(schema).parseInput({ id: 'a', count: '5', flag: 'TRUE', tags: 'x' });
  expect(parsed).toEqual({ success: true, data: { id: 'a', count: 5, flag: true, tags: ['x'] } });
  expect(jsonSchemaValidator(schema).parseInput({ id: 'a' })).toEqual({ success: true, data: { id: 'a', count: 1 } });
});

test('JSON Schema errors are worded like zod errors: the field, what came, what was expected', () => {
  const zodTool = z.object({ id: z.string(), color: z.enum(['red', 'green']).optional() }).strict();
  const asZod = validatorOf(zodTool).parseInput({ id: 5, color: 'blue' });
  const asJson = jsonSchemaValidator(schema).parseInput({ id: 5, color: 'blue' });
  expect(asJson).toEqual({ success: false, message: 'Field `id`: got 5; expected string; Field `color`: got "blue"; expected one of "red", "green"' });
  expect(asZod).toEqual(asJson);
  expect(jsonSchemaValidator(schema).parseInput({})).toEqual({ success: false, message: 'Field `id`: required (string)' });
  expect(jsonSchemaValidator(schema).parseInput({ id: 'a', extra: 1 })).toEqual({ success: false, message: 'Unknown field(s) `extra` in the input' });
});

test("outputs are checked as they are, without coercion, and the caller's value is never changed", () => {
  const input = { id: 'a', count: '5' };
  expect(jsonSchemaValidator(schema).parseOutput(input)).toEqual({ success: false, message: 'Field `count`: got "5"; expected integer' });
  expect(input).toEqual({ id: 'a', count: '5' });
});

test('2020-12 schemas are compiled with their own draft, and a schema that cannot compile is refused', () => {
  const v = jsonSchemaValidator({
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties: { a: { type: 'number' }, pair: { type: 'array', prefixItems: [{ type: 'string' }] } },
  });
  expect(v.parseInput({ a: '2' })).toEqual({ success: true, data: { a: 2 } });
  expect(() => jsonSchemaValidator({ type: 'object', properties: { a: { type: 'no-such-type' } } })).toThrow(InvalidJsonSchemaError);
});

test('a tool defined with JSON Schema runs through the same guard: model error for bad input, schema_mismatch for bad output', async () => {
  const tool = defineTool({
    name: 'json_tool',
    description: 'x',
    input: jsonSchemaValidator<{ id: string }>(schema),
    output: jsonSchemaValidator({ type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] }),
    effect: 'read',
    idempotent: true,
    run: async (input) => (input.id === 'bad' ? { ok: 'yes' } : { ok: true }),
  });
  expect(tool.manifest.inputSchema).not.toHaveProperty('$schema');
  expect(await guardedCall(tool, { id: 'a' }, ctx)).toEqual({ kind: 'ok', output: { ok: true } });
  const badInput = await guardedCall(tool, { id: 1 }, ctx);
  expect(badInput).toMatchObject({ kind: 'failed', error: { error_class: 'model', code: 'invalid_arguments', detail: 'Field `id`: got 1; expected string' } });
  const badOutput = await guardedCall(tool, { id: 'bad' }, ctx);
  expect(badOutput).toMatchObject({ kind: 'failed', error: { error_class: 'schema_mismatch', code: 'schema_violation' } });
});
