/**
 * The ledger's key for a call: tool name plus a hash of its arguments in canonical form (object keys
 * sorted), so `{a:1,b:2}` and `{b:2,a:1}` are the same call. Pure: runs in the workflow sandbox.
 */
import { canonicalJson } from '../../protocol/canonical-json';

/** cyrb53: a fast 53-bit string hash; no crypto is available (or needed) in the sandbox. */
export function hash53(text: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(16).padStart(14, '0');
}

/**
 * The ledger key, of what would run: arguments coerced like validation (`500` and `"500"` are one
 * call) and omitted ones given their schema defaults, so `{id: 1}` and `{id: 1, page: 1}` (page
 * defaulting to 1) are the same call.
 */
export function callKey(tool: string, input: unknown, inputSchema?: Record<string, unknown>): string {
  return `${tool}#${hash53(canonicalJson(withDefaults(coerceLikeValidation(input, inputSchema), inputSchema), { strict: false }))}`;
}

type JsonSchema = { type?: string | string[]; properties?: Record<string, JsonSchema>; items?: JsonSchema };

/**
 * The forgiving coercions the tool activity applies before validation (tools/coerce-input.ts),
 * read from the JSON Schema: "500" for a number, "true" for a boolean, a lone value for an array.
 * The key of a call is then the key of what would actually run, so `500` and `"500"` are one call.
 */
export function coerceLikeValidation(value: unknown, schema?: JsonSchema): unknown {
  if (!schema) return value;
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  if (typeof value === 'string' && !types.includes('string')) {
    const text = value.trim();
    if ((types.includes('number') || types.includes('integer')) && /^-?\d+(\.\d+)?$/.test(text)) return Number(text);
    if (types.includes('boolean') && /^(true|false)$/i.test(text)) return text.toLowerCase() === 'true';
  }
  if (types.includes('array') && !types.includes('object') && value !== undefined && value !== null && !Array.isArray(value)) {
    return [coerceLikeValidation(value, schema.items)];
  }
  if (Array.isArray(value)) return value.map((v) => coerceLikeValidation(v, schema.items));
  if (value && typeof value === 'object' && schema.properties) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = coerceLikeValidation(v, schema.properties[k]);
    return out;
  }
  return value;
}

function withDefaults(input: unknown, schema?: Record<string, unknown>): unknown {
  const properties = schema?.properties as Record<string, { default?: unknown }> | undefined;
  if (!properties || input === null || typeof input !== 'object' || Array.isArray(input)) return input;
  const filled: Record<string, unknown> = { ...(input as Record<string, unknown>) };
  for (const [name, property] of Object.entries(properties)) {
    if (filled[name] === undefined && property && 'default' in property) filled[name] = property.default;
  }
  return filled;
}
