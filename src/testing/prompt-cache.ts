/**
 * The Messages API's prompt cache as documented, so a fake's usage says what caching would save:
 * - the prompt is read in order (tools, system, messages); a `cache_control` block ends a prefix
 *   that is written to the cache when the request is answered;
 * - a request reads the longest cached prefix that ends at one of its breakpoints or at a block
 *   boundary up to 20 blocks before one;
 * - a prefix shorter than the model's minimum cacheable length is neither written nor read;
 * - an entry lives 5 minutes, refreshed each time it is read; caches are per model.
 * Usage then splits the prompt: cache_read_input_tokens up to the longest hit,
 * cache_creation_input_tokens from there to the last breakpoint, input_tokens after it.
 * Tokens are estimated as characters / 4, like the fake's context limit.
 */
import { createHash } from 'node:crypto';

export interface PromptCacheOptions {
  /** Minimum cacheable prefix in tokens, by model. Default: 2 048 for Haiku 3.x models, else 1 024. */
  minimumTokens?: (model: string) => number;
  /** Default 5 minutes. */
  ttlMs?: number;
  /** Default Date.now. */
  now?: () => number;
}

export interface PromptUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

/** How far before a breakpoint the API looks for an earlier cached prefix, in blocks. */
export const CACHE_LOOKBACK_BLOCKS = 20;
export const CACHE_TTL_MS = 5 * 60 * 1000;

export function defaultMinimumCacheTokens(model: string): number {
  return /^claude-3(-5)?-haiku/.test(model) ? 2048 : 1024;
}

interface PromptBlock {
  /** The block as the cache sees it: its content without cache_control. */
  text: string;
  tokens: number;
  breakpoint: boolean;
}

export class PromptCache {
  private readonly entries = new Map<string, number>();
  private readonly minimumTokens: (model: string) => number;
  private readonly ttlMs: number;
  private readonly now: () => number;

  constructor(options: PromptCacheOptions = {}) {
    this.minimumTokens = options.minimumTokens ?? defaultMinimumCacheTokens;
    this.ttlMs = options.ttlMs ?? CACHE_TTL_MS;
    this.now = options.now ?? Date.now;
  }

  /** Reads and writes the cache for one answered request; returns its input usage. */
  use(body: { model?: unknown; system?: unknown; tools?: unknown; messages?: unknown }): PromptUsage {
    const model = String(body.model ?? '');
    const blocks = promptBlocks(body);
    const prefixKeys = prefixHashes(model, blocks);
    const prefixTokens: number[] = [];
    blocks.reduce((sum, b, i) => (prefixTokens[i] = sum + b.tokens), 0);
    const total = prefixTokens.at(-1) ?? 0;
    const breakpoints = blocks.flatMap((b, i) => (b.breakpoint ? [i] : []));
    const minimum = this.minimumTokens(model);
    const now = this.now();
    for (const [key, expires] of this.entries) if (expires <= now) this.entries.delete(key);

    let readEnd = -1;
    for (const bp of breakpoints) {
      for (let i = bp; i >= Math.max(0, bp - CACHE_LOOKBACK_BLOCKS); i--) {
        if (i > readEnd && prefixTokens[i]! >= minimum && this.entries.has(prefixKeys[i]!)) {
          readEnd = i;
          break;
        }
      }
    }
    const lastBreakpoint = breakpoints.at(-1) ?? -1;
    if (lastBreakpoint < 0 || prefixTokens[lastBreakpoint]! < minimum) {
      return { input_tokens: total, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    }
    if (readEnd >= 0) this.entries.set(prefixKeys[readEnd]!, now + this.ttlMs);
    for (const bp of breakpoints) if (prefixTokens[bp]! >= minimum) this.entries.set(prefixKeys[bp]!, now + this.ttlMs);
    const read = readEnd >= 0 ? prefixTokens[readEnd]! : 0;
    const cachedEnd = Math.max(prefixTokens[lastBreakpoint]!, read);
    return { input_tokens: total - cachedEnd, cache_creation_input_tokens: cachedEnd - read, cache_read_input_tokens: read };
  }

  get size(): number {
    return this.entries.size;
  }
}

/** Tools, then system, then each message's content blocks, in the order the API caches them. */
function promptBlocks(body: { system?: unknown; tools?: unknown; messages?: unknown }): PromptBlock[] {
  const out: PromptBlock[] = [];
  const add = (value: unknown, role?: string) => {
    const { cache_control: cacheControl, ...content } = isObject(value) ? value : { type: 'text', text: value };
    // The role is part of what is cached: the same block in another role is another prefix.
    const text = JSON.stringify(role ? [role, content] : content);
    out.push({ text, tokens: Math.ceil(text.length / 4), breakpoint: cacheControl != null });
  };
  if (Array.isArray(body.tools)) for (const tool of body.tools) add(tool);
  if (Array.isArray(body.system)) for (const block of body.system) add(block);
  else if (typeof body.system === 'string' && body.system !== '') add(body.system);
  if (Array.isArray(body.messages)) {
    for (const message of body.messages) {
      if (!isObject(message)) continue;
      const role = String(message.role);
      if (Array.isArray(message.content)) for (const block of message.content) add(block, role);
      else add(message.content, role);
    }
  }
  return out;
}

/** A chained hash per block: equal keys mean equal prefixes up to and including that block. */
function prefixHashes(model: string, blocks: PromptBlock[]): string[] {
  let previous = createHash('sha256').update(model).digest('hex');
  return blocks.map((block) => (previous = createHash('sha256').update(previous).update(block.text).digest('hex')));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
