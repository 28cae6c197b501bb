/**
 * The Messages API's prompt cache as documented, so a fake's usage says what caching would save:
 * - the prompt is read in order (tools, system, messages); a `cache_control` block ends a prefix
 *   that is written to the cache when the request is answered;
 * - a request reads the longest cached prefix that ends at one of its breakpoints or at a block
 *   boundary up to 20 blocks before one;
 * - a prefix shorter than the model's minimum cacheable length (by model, as documented) is
 *   neither written nor read;
 * - an entry lives 5 minutes (1 hour when its breakpoint says `ttl: "1h"`), refreshed each time it
 *   is read; caches are per model;
 * - what invalidates what, as the docs' table says: a change to the tools invalidates everything
 *   after them (they come first); a change to `tool_choice` or to the thinking parameters
 *   invalidates the messages' cache but not the tools' and system's.
 * Usage then splits the prompt: cache_read_input_tokens up to the longest hit,
 * cache_creation_input_tokens from there to the last breakpoint, input_tokens after it.
 * Tokens are estimated as characters / 4, like the fake's context limit.
 */
import { createHash } from 'node:crypto';

export interface PromptCacheOptions {
  /** Minimum cacheable prefix in tokens, by model. Default: defaultMinimumCacheTokens. */
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
/** The documented longer lifetime, `cache_control: {type: "ephemeral", ttl: "1h"}`. */
export const CACHE_TTL_1H_MS = 60 * 60 * 1000;

/**
 * The documented minimum cacheable prompt length: 4 096 tokens for Claude Opus 4.5, 4.6 and 4.7,
 * Haiku 4.5 and Mythos Preview; 2 048 for the Haiku 3.x models; 1 024 for the others (Sonnet 4.x,
 * Opus 4, 4.1 and 4.8; the 5.x models keep it, as no documented figure for them was at hand).
 */
export function defaultMinimumCacheTokens(model: string): number {
  if (/^claude-(opus-4-[567]|haiku-4-5|mythos-preview)/.test(model)) return 4096;
  if (/^claude-3(-5)?-haiku/.test(model)) return 2048;
  return 1024;
}

interface PromptBlock {
  /** The block as the cache sees it: its content without cache_control. */
  text: string;
  tokens: number;
  breakpoint: boolean;
  /** How long a prefix ending at this breakpoint lives once written. */
  ttlMs: number;
  /** A block of a message (not a tool or the system prompt). */
  message: boolean;
}

export class PromptCache {
  private readonly entries = new Map<string, number>();
  /** The lifetime each entry was written with (5 minutes, or 1 hour). */
  private readonly lifetimes = new Map<string, number>();
  private readonly minimumTokens: (model: string) => number;
  private readonly ttlMs: number;
  private readonly now: () => number;

  constructor(options: PromptCacheOptions = {}) {
    this.minimumTokens = options.minimumTokens ?? defaultMinimumCacheTokens;
    this.ttlMs = options.ttlMs ?? CACHE_TTL_MS;
    this.now = options.now ?? Date.now;
  }

  /** Reads and writes the cache for one answered request; returns its input usage. */
  use(body: { model?: unknown; system?: unknown; tools?: unknown; messages?: unknown; tool_choice?: unknown; thinking?: unknown }): PromptUsage {
    const model = String(body.model ?? '');
    const blocks = promptBlocks(body, this.ttlMs);
    const prefixKeys = prefixHashes(model, blocks, messageSettings(body));
    const prefixTokens: number[] = [];
    blocks.reduce((sum, b, i) => (prefixTokens[i] = sum + b.tokens), 0);
    const total = prefixTokens.at(-1) ?? 0;
    const breakpoints = blocks.flatMap((b, i) => (b.breakpoint ? [i] : []));
    const minimum = this.minimumTokens(model);
    const now = this.now();
    for (const [key, expires] of this.entries) {
      if (expires > now) continue;
      this.entries.delete(key);
      this.lifetimes.delete(key);
    }

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
    // A read refreshes the entry for as long as it was written to live.
    if (readEnd >= 0) this.entries.set(prefixKeys[readEnd]!, Math.max(this.entries.get(prefixKeys[readEnd]!) ?? 0, now + (this.lifetimes.get(prefixKeys[readEnd]!) ?? this.ttlMs)));
    for (const bp of breakpoints) {
      if (prefixTokens[bp]! < minimum) continue;
      const key = prefixKeys[bp]!;
      const ttl = Math.max(blocks[bp]!.ttlMs, this.lifetimes.get(key) ?? 0);
      this.lifetimes.set(key, ttl);
      this.entries.set(key, now + ttl);
    }
    const read = readEnd >= 0 ? prefixTokens[readEnd]! : 0;
    const cachedEnd = Math.max(prefixTokens[lastBreakpoint]!, read);
    return { input_tokens: total - cachedEnd, cache_creation_input_tokens: cachedEnd - read, cache_read_input_tokens: read };
  }

  get size(): number {
    return this.entries.size;
  }
}

/** Tools, then system, then each message's content blocks, in the order the API caches them. */
function promptBlocks(body: { system?: unknown; tools?: unknown; messages?: unknown }, defaultTtlMs: number): PromptBlock[] {
  const out: PromptBlock[] = [];
  const add = (value: unknown, role?: string) => {
    const { cache_control: cacheControl, ...content } = isObject(value) ? value : { type: 'text', text: value };
    // The role is part of what is cached: the same block in another role is another prefix.
    const text = JSON.stringify(role ? [role, content] : content);
    const ttlMs = isObject(cacheControl) && cacheControl.ttl === '1h' ? CACHE_TTL_1H_MS : defaultTtlMs;
    out.push({ text, tokens: Math.ceil(text.length / 4), breakpoint: cacheControl != null, ttlMs, message: role !== undefined });
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

/** What the messages' cache depends on besides their content (the docs' invalidation table): tool_choice and thinking. */
function messageSettings(body: { tool_choice?: unknown; thinking?: unknown }): string {
  return JSON.stringify([body.tool_choice ?? null, body.thinking ?? null]);
}

/**
 * A chained hash per block: equal keys mean equal prefixes up to and including that block. The
 * first message block's key also takes the request's message settings, so a changed tool_choice or
 * thinking misses from the messages on while the tools and system still hit.
 */
function prefixHashes(model: string, blocks: PromptBlock[], settings: string): string[] {
  let previous = createHash('sha256').update(model).digest('hex');
  let settled = false;
  return blocks.map((block) => {
    const hash = createHash('sha256').update(previous);
    if (block.message && !settled) {
      hash.update(settings);
      settled = true;
    }
    return (previous = hash.update(block.text).digest('hex'));
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
