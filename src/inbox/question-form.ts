/**
 * A tool's question (an MCP server's elicitation) as a form: its requestedSchema read into one field
 * per property when it is a flat object of primitives (what MCP allows), and the posted form turned
 * back into the answer. The inbox only shapes the answer; the task checks it against the schema.
 */

export interface FieldOption {
  value: string;
  label: string;
}

export interface QuestionField {
  /** The property's name: the answer's key. */
  name: string;
  kind: 'string' | 'number' | 'integer' | 'boolean' | 'choice' | 'choices';
  title?: string;
  description?: string;
  required: boolean;
  /** For choice (one of) and choices (several of). */
  options?: FieldOption[];
  /** A string's format: email, uri, date, date-time. */
  format?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  /** The schema's default, as the form shows it. */
  defaultValue?: string | string[];
}

/** The prefix of the answer fields' form names: they never collide with the form's own fields. */
export const ANSWER_FIELD = 'answer.';
/** The form field that carries a whole answer as JSON, when the schema is not flat. */
export const ANSWER_JSON = 'answerJson';

type Schema = Record<string, unknown>;

const isObject = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);
const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const str = (v: unknown) => (typeof v === 'string' && v ? v : undefined);

/** Options from `enum` (with the legacy `enumNames`) or from `oneOf`/`anyOf` of `{const, title}`. */
function optionsOf(schema: Schema): FieldOption[] | undefined {
  if (Array.isArray(schema.enum)) {
    if (!schema.enum.every((v) => typeof v === 'string')) return undefined;
    const names = Array.isArray(schema.enumNames) ? schema.enumNames : [];
    return (schema.enum as string[]).map((value, i) => ({ value, label: typeof names[i] === 'string' ? `${names[i] as string} (${value})` : value }));
  }
  const alternatives = Array.isArray(schema.oneOf) ? schema.oneOf : Array.isArray(schema.anyOf) ? schema.anyOf : undefined;
  if (!alternatives) return undefined;
  const options: FieldOption[] = [];
  for (const alt of alternatives) {
    if (!isObject(alt) || typeof alt.const !== 'string') return undefined;
    options.push({ value: alt.const, label: typeof alt.title === 'string' ? `${alt.title} (${alt.const})` : alt.const });
  }
  return options;
}

function fieldOf(name: string, schema: unknown, required: boolean): QuestionField | undefined {
  if (!isObject(schema)) return undefined;
  const base: QuestionField = { name, kind: 'string', required };
  const title = str(schema.title);
  const description = str(schema.description);
  if (title) base.title = title;
  if (description) base.description = description;
  const type = schema.type;
  if (type === 'string') {
    const options = optionsOf(schema);
    if (options) {
      base.kind = 'choice';
      base.options = options;
    } else if (schema.enum !== undefined || schema.oneOf !== undefined || schema.anyOf !== undefined) return undefined;
    const format = str(schema.format);
    if (format) base.format = format;
    const [minLength, maxLength] = [num(schema.minLength), num(schema.maxLength)];
    if (minLength !== undefined) base.minLength = minLength;
    if (maxLength !== undefined) base.maxLength = maxLength;
    if (typeof schema.default === 'string') base.defaultValue = schema.default;
    return base;
  }
  if (type === 'number' || type === 'integer') {
    base.kind = type;
    const [minimum, maximum] = [num(schema.minimum), num(schema.maximum)];
    if (minimum !== undefined) base.minimum = minimum;
    if (maximum !== undefined) base.maximum = maximum;
    if (num(schema.default) !== undefined) base.defaultValue = String(schema.default);
    return base;
  }
  if (type === 'boolean') {
    base.kind = 'boolean';
    if (typeof schema.default === 'boolean') base.defaultValue = String(schema.default);
    return base;
  }
  // Several of a list of strings (MCP's multi-select): a group of checkboxes.
  if (type === 'array' && isObject(schema.items)) {
    const options = optionsOf(schema.items);
    if (!options) return undefined;
    base.kind = 'choices';
    base.options = options;
    const [minItems, maxItems] = [num(schema.minItems), num(schema.maxItems)];
    if (minItems !== undefined) base.minItems = minItems;
    if (maxItems !== undefined) base.maxItems = maxItems;
    if (Array.isArray(schema.default) && schema.default.every((v) => typeof v === 'string')) base.defaultValue = schema.default as string[];
    return base;
  }
  return undefined;
}

/**
 * One field per property, in the schema's order; undefined when the schema is not a flat object of
 * primitives (nested objects, arrays of anything but choices, several types): then the form asks
 * for the answer as JSON.
 */
export function questionFields(schema: Schema): QuestionField[] | undefined {
  if (schema.type !== undefined && schema.type !== 'object') return undefined;
  if (schema.properties === undefined) return [];
  if (!isObject(schema.properties)) return undefined;
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : []);
  const fields: QuestionField[] = [];
  for (const [name, property] of Object.entries(schema.properties)) {
    const field = fieldOf(name, property, required.has(name));
    if (!field) return undefined;
    fields.push(field);
  }
  return fields;
}

/** What the JSON answer box starts with: the schema's defaults, else an empty object. */
export function defaultAnswer(schema: Schema): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!isObject(schema.properties)) return out;
  for (const [name, property] of Object.entries(schema.properties)) if (isObject(property) && property.default !== undefined) out[name] = property.default;
  return out;
}

/** A short description of a field's type and limits, e.g. "integer, 1 to 100". */
export function fieldTypeText(field: QuestionField): string {
  const parts: string[] = [];
  switch (field.kind) {
    case 'choice':
      parts.push('one of the choices');
      break;
    case 'choices':
      parts.push('some of the choices');
      if (field.minItems !== undefined || field.maxItems !== undefined) parts.push(range(field.minItems, field.maxItems, 'choices'));
      break;
    case 'boolean':
      parts.push('yes or no');
      break;
    case 'number':
    case 'integer':
      parts.push(field.kind);
      if (field.minimum !== undefined || field.maximum !== undefined) parts.push(range(field.minimum, field.maximum));
      break;
    default:
      parts.push(field.format ? `text (${field.format})` : 'text');
      if (field.minLength !== undefined || field.maxLength !== undefined) parts.push(range(field.minLength, field.maxLength, 'characters'));
  }
  return parts.join(', ');
}

function range(min: number | undefined, max: number | undefined, unit = ''): string {
  const u = unit ? ` ${unit}` : '';
  if (min !== undefined && max !== undefined) return `${min} to ${max}${u}`;
  return min !== undefined ? `at least ${min}${u}` : `at most ${max}${u}`;
}

export type Answer = { value: Record<string, unknown> } | { error: string };

/**
 * The posted form as the answer. Empty fields are left out; numbers and yes/no become JSON values
 * when they read as such, and anything else goes as typed, so the task's check names the problem.
 */
export function answerFromForm(schema: Schema, form: URLSearchParams): Answer {
  const fields = questionFields(schema);
  if (!fields) return parseJsonAnswer(form.get(ANSWER_JSON) ?? '');
  const answer: Record<string, unknown> = {};
  for (const field of fields) {
    const key = ANSWER_FIELD + field.name;
    if (field.kind === 'choices') {
      const chosen = form.getAll(key).filter((v) => v !== '');
      if (chosen.length) answer[field.name] = chosen;
      continue;
    }
    const raw = form.get(key);
    if (raw === null || raw.trim() === '') continue;
    if (field.kind === 'number' || field.kind === 'integer') {
      const n = Number(raw.trim());
      answer[field.name] = Number.isFinite(n) ? n : raw;
    } else if (field.kind === 'boolean') {
      answer[field.name] = raw === 'true' ? true : raw === 'false' ? false : raw;
    } else answer[field.name] = raw;
  }
  return { value: answer };
}

function parseJsonAnswer(text: string): Answer {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.trim() || '{}');
  } catch (err) {
    return { error: `The answer is not valid JSON: ${(err as Error).message}` };
  }
  if (!isObject(parsed)) return { error: 'The answer must be a JSON object with the fields the question asks for, e.g. {"name": "Ada"}.' };
  return { value: parsed };
}
