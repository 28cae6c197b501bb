/**
 * Searches for secrets where they must never be: every text of a task's history (every run of its
 * chain, byte fields as UTF-8 and gunzipped) and any other texts, for a secret and the forms a leak
 * could take besides the value itself.
 */
import { gunzipSync } from 'node:zlib';
import type { Harness } from './harness';

/**
 * What a leak could look like besides the value itself: its URL encodings (encodeURIComponent, with
 * upper- and lower-case hex, and form encoding), its JSON escape, base64 (padded or not, and its
 * bytes at each alignment inside a longer base64 text, such as a Basic header), base64url, hex in
 * both cases, and a slice of it.
 */
export function forms(secret: string): string[] {
  const bytes = Buffer.from(secret);
  const inBase64 = [0, 1, 2].flatMap((skip) => {
    const whole = Math.floor((bytes.length - skip) / 3) * 3;
    const slice = bytes.subarray(skip, skip + whole);
    return whole >= 9 ? [slice.toString('base64'), slice.toString('base64url')] : [];
  });
  return [
    ...new Set([
      secret,
      encodeURIComponent(secret),
      encodeURIComponent(secret).replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase()),
      new URLSearchParams({ v: secret }).toString().slice(2),
      JSON.stringify(secret).slice(1, -1),
      bytes.toString('base64'),
      bytes.toString('base64').replace(/=+$/, ''),
      bytes.toString('base64url'),
      ...inBase64,
      bytes.toString('hex'),
      bytes.toString('hex').toUpperCase(),
      secret.slice(4, -4),
    ]),
  ];
}

/** Every text a history holds: each byte field read as UTF-8 (gunzipped where it is gzip), and every string. */
export async function historyTexts(h: Harness, taskId: string): Promise<string[]> {
  const texts: string[] = [];
  const runs = new Set<string>();
  let runId: string | undefined;
  // Every run of the chain (continue-as-new): the handle's history follows the latest run only.
  const first = await h.client.history(taskId);
  const events = [...(first.events ?? [])];
  for (const event of events) {
    const next = event.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
    if (next && !runs.has(next)) {
      runs.add(next);
      runId = next;
      events.push(...((await h.client.history(taskId, runId)).events ?? []));
    }
  }
  const walk = (node: unknown, depth: number): void => {
    if (node === null || node === undefined || depth > 200) return;
    if (typeof node === 'string') return void texts.push(node);
    if (node instanceof Uint8Array) {
      const buffer = Buffer.from(node);
      texts.push(buffer.toString('utf8'));
      if (buffer[0] === 0x1f && buffer[1] === 0x8b) texts.push(gunzipSync(buffer).toString('utf8'));
      return;
    }
    if (typeof node !== 'object') return;
    for (const value of Object.values(node)) walk(value, depth + 1);
  };
  walk(events, 0);
  texts.push(JSON.stringify(events));
  return texts;
}

/** Where each of the secrets' forms shows up among `texts`, as `where: form` (the form by its place in forms(), never the form itself). */
export function leaks(where: string, texts: string[], secrets: string[]): string[] {
  const found: string[] = [];
  for (const secret of secrets) for (const [i, form] of forms(secret).entries()) if (texts.some((t) => t.includes(form))) found.push(`${where}: ${form === secret ? 'the value' : `form ${i} of it`}`);
  return found;
}
