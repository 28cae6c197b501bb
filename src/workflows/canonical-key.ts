/**
 * The ledger's key for a call: tool name plus a hash of its arguments in canonical form (object keys
 * sorted), so `{a:1,b:2}` and `{b:2,a:1}` are the same call. Pure: runs in the workflow sandbox.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

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
 * The ledger key: omitted arguments take their schema defaults first, so `{id: 1}` and
 * `{id: 1, page: 1}` (page defaulting to 1) are the same call.
 */
export function callKey(tool: string, input: unknown, inputSchema?: Record<string, unknown>): string {
  return `${tool}#${hash53(canonicalJson(withDefaults(input, inputSchema)))}`;
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
