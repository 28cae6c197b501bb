/**
 * Reads how long a service asked us to wait: `retry-after-ms` (the Anthropic and OpenAI APIs send
 * it, with millisecond precision) before `retry-after` (seconds or an HTTP date), in milliseconds.
 */
export function retryAfterMs(headers: unknown, now: number = Date.now()): number | undefined {
  const ms = headerValue(headers, 'retry-after-ms')?.trim();
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms)) return Math.round(Number(ms));
  const value = headerValue(headers, 'retry-after')?.trim();
  if (value === undefined || value === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** A header from a fetch Headers object or a plain record, case-insensitively. */
export function headerValue(headers: unknown, name: string): string | undefined {
  if (!headers || typeof headers !== 'object') return undefined;
  const h = headers as { get?: (n: string) => string | null } & Record<string, unknown>;
  if (typeof h.get === 'function') return h.get(name) ?? undefined;
  for (const [key, value] of Object.entries(h)) {
    if (key.toLowerCase() === name) return Array.isArray(value) ? String(value[0]) : String(value);
  }
  return undefined;
}
