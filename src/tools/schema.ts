/**
 * The validator interface behind a tool's contract. A tool's input and output may be zod schemas
 * (hand-written tools) or JSON Schema (tools from MCP servers, see json-schema.ts); the guard reads
 * both through this one interface, so both get the same coercion, the same wording of what is wrong
 * and the same self-correction bound.
 */
import { z } from 'zod';
import { parseWithCoercion } from './coerce-input';
import { describeIssues } from './validation-message';

export type Checked<T> = { success: true; data: T } | { success: false; message: string };

export interface SchemaValidator<T = unknown> {
  /** Marks the interface apart from a zod schema (which has none of these). */
  readonly kind: 'json-schema' | 'zod';
  /** The JSON Schema the model reads, without `$schema`. */
  jsonSchema(): Record<string, unknown>;
  /** For arguments from a model: its forgivable slips coerced ("5" for 5), defaults applied, then checked. */
  parseInput(value: unknown): Checked<T>;
  /** For a tool's output: checked as it is. */
  parseOutput(value: unknown): Checked<T>;
  /** Like zod's `parse`: checked as it is (defaults applied); throws a TypeError naming what is wrong. */
  parse(value: unknown): T;
}

export type ToolSchema<T> = z.ZodType<T> | SchemaValidator<T>;

export function isSchemaValidator(schema: unknown): schema is SchemaValidator {
  return typeof schema === 'object' && schema !== null && typeof (schema as SchemaValidator).parseInput === 'function';
}

/** The interface over either kind; a zod schema keeps exactly the behaviour it always had. */
export function validatorOf<T>(schema: ToolSchema<T>): SchemaValidator<T> {
  return isSchemaValidator(schema) ? schema : zodValidator(schema as z.ZodType<T>);
}

const zodValidators = new WeakMap<object, SchemaValidator<any>>();

function zodValidator<T>(schema: z.ZodType<T>): SchemaValidator<T> {
  const known = zodValidators.get(schema);
  if (known) return known;
  const validator: SchemaValidator<T> = {
    kind: 'zod',
    jsonSchema: () => {
      const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
      delete json.$schema;
      return json;
    },
    parseInput: (value) => {
      const parsed = parseWithCoercion(schema, value);
      return parsed.success ? { success: true, data: parsed.data } : { success: false, message: describeIssues(parsed.error) };
    },
    parseOutput: (value) => {
      const parsed = schema.safeParse(value, { reportInput: true });
      return parsed.success ? { success: true, data: parsed.data } : { success: false, message: describeIssues(parsed.error) };
    },
    parse: (value) => schema.parse(value),
  };
  zodValidators.set(schema, validator);
  return validator;
}
