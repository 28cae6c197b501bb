/**
 * A tool contract written in JSON Schema (what MCP servers publish), validated with ajv through the
 * same interface as zod (schema.ts): the same forgivable coercions for what models really send, the
 * same sentence naming the field, what came and what was expected.
 */
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import Ajv2019 from 'ajv/dist/2019';
import Ajv2020 from 'ajv/dist/2020';
import type { Checked, SchemaValidator } from './schema';
import { DurableAgentError } from '../errors/durable-agent-error';

export type JsonSchema = Record<string, unknown>;

/** Thrown when a schema itself cannot be compiled: the tool cannot be validated, so it cannot be offered. */
export class InvalidJsonSchemaError extends DurableAgentError {
  readonly code = 'invalid_json_schema';
}

const MAX_ISSUES = 5;
const CACHE_LIMIT = 500;

function newAjv(kind: 'draft7' | '2019' | '2020'): Ajv {
  const options = { allErrors: true, strict: false, useDefaults: true, verbose: true, logger: false as const };
  const ajv = kind === '2020' ? new Ajv2020(options) : kind === '2019' ? new Ajv2019(options) : new Ajv(options);
  // The formats MCP elicitation uses, checked loosely: ajv itself ships none.
  ajv.addFormat('email', /^[^\s@]+@[^\s@]+\.[^\s@]+$/);
  ajv.addFormat('uri', /^[a-zA-Z][a-zA-Z0-9+.-]*:[^\s]*$/);
  ajv.addFormat('date', /^\d{4}-\d{2}-\d{2}$/);
  ajv.addFormat('date-time', /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})?$/);
  return ajv;
}

const engines = new Map<string, Ajv>();
const compiled = new Map<string, ValidateFunction>();

function compile(schema: JsonSchema): ValidateFunction {
  const key = JSON.stringify(schema);
  const known = compiled.get(key);
  if (known) return known;
  const declared = typeof schema.$schema === 'string' ? schema.$schema : '';
  const kind = declared.includes('2020-12') ? '2020' : declared.includes('2019-09') ? '2019' : 'draft7';
  let ajv = engines.get(kind);
  if (!ajv) engines.set(kind, (ajv = newAjv(kind)));
  const { $schema: _declared, $id: _id, ...body } = schema;
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(body);
  } catch (err) {
    throw new InvalidJsonSchemaError(`invalid JSON Schema: ${(err as Error).message}`);
  }
  if (compiled.size >= CACHE_LIMIT) compiled.delete(compiled.keys().next().value!);
  compiled.set(key, validate);
  return validate;
}

/** A validator for a JSON Schema; throws InvalidJsonSchemaError when the schema does not compile. */
export function jsonSchemaValidator<T = unknown>(schema: JsonSchema): SchemaValidator<T> {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) throw new InvalidJsonSchemaError('a JSON Schema must be an object');
  const validate = compile(schema);
  const { $schema: _declared, ...forModel } = schema;
  const check = (value: unknown, coerce: boolean): Checked<T> => {
    // ajv writes defaults into what it validates: never into the caller's value.
    let data = structuredClone(value);
    if (validate(data)) return { success: true, data: data as T };
    const first = [...(validate.errors ?? [])];
    if (coerce) {
      let changed = false;
      for (const error of first) {
        if (error.keyword !== 'type') continue;
        const path = pointerPath(error.instancePath);
        const coerced = coerceValue(getAt(data, path), String((error.params as { type?: unknown }).type ?? '').split(','));
        if (coerced === NO_CHANGE) continue;
        data = setAt(data, path, coerced);
        changed = true;
      }
      if (changed) {
        if (validate(data)) return { success: true, data: data as T };
        return { success: false, message: describeAjvErrors(validate.errors ?? []) };
      }
    }
    return { success: false, message: describeAjvErrors(first) };
  };
  return {
    kind: 'json-schema',
    jsonSchema: () => structuredClone(forModel),
    parseInput: (value) => check(value, true),
    parseOutput: (value) => check(value, false),
    parse: (value) => {
      const checked = check(value, false);
      if (!checked.success) throw new TypeError(checked.message);
      return checked.data;
    },
  };
}

const NO_CHANGE = Symbol('no change');

/** The same unambiguous coercions as coerce-input.ts does for zod. */
function coerceValue(value: unknown, expected: string[]): unknown {
  if (typeof value === 'string') {
    const text = value.trim();
    if ((expected.includes('number') || expected.includes('integer')) && /^-?\d+(\.\d+)?$/.test(text)) return Number(text);
    if (expected.includes('boolean') && /^(true|false)$/i.test(text)) return text.toLowerCase() === 'true';
  }
  if (expected.includes('array') && value !== undefined && value !== null && !Array.isArray(value)) return [value];
  return NO_CHANGE;
}

/** The sentence a model needs to correct its call, worded like validation-message.ts words zod's issues. */
export function describeAjvErrors(errors: ErrorObject[], maxIssues = MAX_ISSUES): string {
  const lines: string[] = [];
  for (const error of errors) {
    // anyOf/oneOf report their branches' errors too; the summary line adds nothing a model can act on.
    if (error.keyword === 'anyOf' || error.keyword === 'oneOf' || error.keyword === 'if') continue;
    const line = describeAjvError(error);
    if (!lines.includes(line)) lines.push(line);
    if (lines.length >= maxIssues) break;
  }
  return lines.join('; ') || 'the input does not match the schema';
}

function describeAjvError(error: ErrorObject): string {
  const path = pointerPath(error.instancePath);
  const field = fieldName(path);
  const got = error.data !== undefined ? `got ${preview(error.data)}; ` : '';
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required': {
      const missing = String(params.missingProperty);
      const property = ((error.parentSchema as JsonSchema | undefined)?.properties as Record<string, JsonSchema> | undefined)?.[missing];
      const type = property && (typeof property.type === 'string' || Array.isArray(property.type)) ? ` (${[property.type].flat().join(' or ')})` : '';
      return `Field ${fieldName([...path, missing])}: required${type}`;
    }
    case 'type':
      return `Field ${field}: ${got}expected ${String(params.type).split(',').join(' or ')}`;
    case 'enum':
      return `Field ${field}: ${got}expected one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return `Field ${field}: ${got}expected ${JSON.stringify(params.allowedValue)}`;
    case 'additionalProperties':
    case 'unevaluatedProperties': {
      const key = String(params.additionalProperty ?? params.unevaluatedProperty);
      return `Unknown field(s) \`${key}\` in ${field}`;
    }
    default:
      return `Field ${field}: ${got}${error.message ?? 'is invalid'}`;
  }
}

function fieldName(path: string[]): string {
  return path.length ? `\`${path.join('.')}\`` : 'the input';
}

function pointerPath(pointer: string): string[] {
  if (!pointer) return [];
  return pointer
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function getAt(root: unknown, path: string[]): unknown {
  let node = root;
  for (const key of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

function setAt(root: unknown, path: string[], value: unknown): unknown {
  if (path.length === 0) return value;
  let node = root as Record<string, unknown>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string, unknown>;
  node[path[path.length - 1]!] = value;
  return root;
}
