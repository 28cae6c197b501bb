/**
 * What a long Claude task costs with the conversation's prompt caching and without it: the real SDK
 * against the strict fake Messages API, whose usage follows the API's documented prompt cache, priced
 * at list prices (models/pricing.ts). Same tasks as the issue that asked for it: 10 KB results over
 * 100 and 200 turns, 40 KB results over 40 turns.
 */
import type { PromptCaching } from '../src/models/anthropic-model';
import { cacheTotals, runCachedConversation } from '../test/support/cached-conversation';
import type { Harness } from '../test/support/harness';

export const CACHE_WORKLOADS = [
  { turns: 100, resultChars: 10_000 },
  { turns: 200, resultChars: 10_000 },
  { turns: 40, resultChars: 40_000 },
];
const MODES: PromptCaching[] = ['conversation', 'static', 'off'];

export type CacheRow = ReturnType<typeof cacheTotals> & { turns: number; resultChars: number };

export async function measureConversationCache(h: Harness): Promise<CacheRow[]> {
  const rows: CacheRow[] = [];
  for (const workload of CACHE_WORKLOADS) {
    for (const caching of MODES) {
      const run = await runCachedConversation(h, { ...workload, caching });
      if (run.rejected.length) throw new Error(`the strict fake refused ${run.rejected.length} requests: ${run.rejected[0]}`);
      rows.push({ ...workload, ...cacheTotals(run) });
    }
  }
  return rows;
}

export function cacheTable(rows: CacheRow[]): string {
  const label: Record<PromptCaching, string> = {
    conversation: 'conversation (default)',
    static: 'system + tools only',
    off: 'off',
  };
  const m = (n: number) => `${(n / 1e6).toFixed(2)}M`;
  return [
    '| task | caching | input tokens | cache writes | cache reads | calls reading the cache | cost (USD, list price) |',
    '|---|---|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.turns} turns x ${r.resultChars / 1000} KB | ${label[r.caching]} | ${m(r.inputTokens)} | ${m(r.cacheWriteTokens)} | ${m(r.cacheReadTokens)} | ${r.callsReadingCache} of ${r.calls} | $${r.costUsd.toFixed(2)} |`,
    ),
  ].join('\n');
}
