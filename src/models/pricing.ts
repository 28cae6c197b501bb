/**
 * What a model call costs, from a price table in USD per million tokens. The defaults are list
 * prices as this release knew them; set your own with the worker option `prices` or
 * DURABLE_AGENT_PRICES='{"model-id":{"input":3,"output":15}}'. A model missing from the table
 * costs 0 and says so in status ("unpriced").
 */
import type { Usage } from '../protocol/messages';

export interface ModelPrice {
  /** USD per million input tokens. */
  input: number;
  /** USD per million output tokens. */
  output: number;
  /** USD per million tokens written to the prompt cache. Default: 1.25 x input. */
  cacheWrite?: number;
  /** USD per million tokens read from the prompt cache. Default: 0.1 x input. */
  cacheRead?: number;
}

export type PriceTable = Record<string, ModelPrice>;

export const DEFAULT_PRICES: PriceTable = {
  // Cache rates as the pricing page lists them (Opus 5.5 reads at 0.05 x input, not the usual 0.1 x).
  'claude-opus-5-5': { input: 4, output: 20, cacheWrite: 5, cacheRead: 0.2 },
  'claude-sonnet-5-5': { input: 2, output: 10, cacheWrite: 2.5, cacheRead: 0.2 },
  // Prompts up to 100K tokens; a longer prompt is billed 5x on every token, which this table cannot say.
  'claude-haiku-5-5': { input: 0.1, output: 0.5, cacheWrite: 0.125, cacheRead: 0.01 },
  'claude-opus-5': { input: 5, output: 25 },
  'claude-sonnet-5': { input: 2, output: 10 },
  'claude-opus-4-5': { input: 5, output: 25 },
  'claude-sonnet-4-6': { input: 3, output: 15 },
  'claude-haiku-4-5': { input: 1, output: 5 },
};

export function loadPrices(overrides?: PriceTable): PriceTable {
  const fromEnv = process.env.DURABLE_AGENT_PRICES ? (JSON.parse(process.env.DURABLE_AGENT_PRICES) as PriceTable) : {};
  return { ...DEFAULT_PRICES, ...fromEnv, ...overrides };
}

/** Cost in USD, or undefined when the model has no price (so nobody mistakes 0 for free). */
export function costOf(model: string, usage: Usage, prices: PriceTable): number | undefined {
  const price = prices[model] ?? prices[model.replace(/-\d{8}$/, '')];
  if (!price) return undefined;
  const perToken = (usd: number) => usd / 1_000_000;
  return (
    usage.inputTokens * perToken(price.input) +
    usage.outputTokens * perToken(price.output) +
    (usage.cacheWriteTokens ?? 0) * perToken(price.cacheWrite ?? price.input * 1.25) +
    (usage.cacheReadTokens ?? 0) * perToken(price.cacheRead ?? price.input * 0.1)
  );
}
