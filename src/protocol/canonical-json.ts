/**
 * Deterministic JSON, the one encoding for everything compared or hashed by content: object keys
 * sorted by UTF-16 code units, undefined members left out, no whitespace. Sandbox-safe.
 *
 * Strict (the default: signed decisions) throws on what JSON cannot say exactly (NaN, Infinity,
 * functions, bigint, nesting deeper than 64), so a signer and a verifier never hash two different
 * readings. Lenient (`strict: false`: ledger keys, which are computed inside the workflow and must
 * never throw there) reads those as JSON.stringify does. Both give the same text for any JSON value.
 */
const MAX_STRICT_DEPTH = 64;

export function canonicalJson(value: unknown, options: { strict?: boolean } = {}): string {
  return write(value, 0, options.strict ?? true);
}

function write(value: unknown, depth: number, strict: boolean): string {
  if (strict && depth > MAX_STRICT_DEPTH) throw new TypeError('value nested too deeply for canonical JSON');
  if (value === null) return 'null';
  if (typeof value === 'object') {
    if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : write(v, depth + 1, strict))).join(',')}]`;
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record)
      .filter((k) => record[k] !== undefined)
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${keys.map((k) => `${JSON.stringify(k)}:${write(record[k], depth + 1, strict)}`).join(',')}}`;
  }
  if (!strict) return JSON.stringify(value) ?? 'null';
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`canonical JSON cannot hold ${value}`);
      return JSON.stringify(value);
    default:
      throw new TypeError(`canonical JSON cannot hold a ${typeof value}`);
  }
}
