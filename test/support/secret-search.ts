/**
 * Searches for secrets where they must never be: every text of a task's history (every run of its
 * chain, byte fields as UTF-8 and gunzipped) and any other texts, for a secret and the forms a leak
 * could take besides the value itself.
 */
import { gunzipSync } from 'node:zlib';
import type { Harness } from './harness';

/** What a leak could look like besides the value itself. */
export const forms = (secret: string) => [secret, Buffer.from(secret).toString('base64'), Buffer.from(secret).toString('hex'), secret.slice(4, -4)];

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

/** Where each of the secrets' forms shows up among `texts`, as `where: form`. */
export function leaks(where: string, texts: string[], secrets: string[]): string[] {
  const found: string[] = [];
  for (const secret of secrets) for (const form of forms(secret)) if (texts.some((t) => t.includes(form))) found.push(`${where}: ${form === secret ? 'the value' : 'a form of it'}`);
  return found;
}
