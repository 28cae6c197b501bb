/**
 * Forgives what models really send: "5" for 5, "true" for true, a lone value for a one-element
 * array. Driven by the schema's own complaints, so only fields that failed are touched, and only in
 * these unambiguous ways; anything else is left for validation to report.
 */
import type { z } from 'zod';

export function parseWithCoercion<T>(schema: z.ZodType<T>, input: unknown): z.ZodSafeParseResult<T> {
  const first = schema.safeParse(input, { reportInput: true });
  if (first.success) return first;
  let patched = structuredClone(input);
  let changed = false;
  for (const issue of first.error.issues) {
    if (issue.code !== 'invalid_type') continue;
    const value = getAt(patched, issue.path);
    const coerced = coerce(value, issue.expected);
    if (coerced === NO_CHANGE) continue;
    patched = setAt(patched, issue.path, coerced);
    changed = true;
  }
  return changed ? schema.safeParse(patched, { reportInput: true }) : first;
}

const NO_CHANGE = Symbol('no change');

function coerce(value: unknown, expected: string): unknown {
  if (typeof value === 'string') {
    const text = value.trim();
    if ((expected === 'number' || expected === 'int') && /^-?\d+(\.\d+)?$/.test(text)) return Number(text);
    if (expected === 'boolean' && /^(true|false)$/i.test(text)) return text.toLowerCase() === 'true';
  }
  if (expected === 'array' && value !== undefined && value !== null && !Array.isArray(value)) return [value];
  return NO_CHANGE;
}

function getAt(root: unknown, path: PropertyKey[]): unknown {
  let node = root;
  for (const key of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return node;
}

function setAt(root: unknown, path: PropertyKey[], value: unknown): unknown {
  if (path.length === 0) return value;
  let node = root as Record<PropertyKey, unknown>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<PropertyKey, unknown>;
  node[path[path.length - 1]!] = value;
  return root;
}
