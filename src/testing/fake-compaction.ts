/**
 * Server-side compaction in the fake Messages API, as documented for `compact_20260112`: a request
 * whose input reaches the trigger is summarised into a signed `compaction` block that opens the
 * answer; a passed-back block makes the API ignore everything before it; the compaction's own
 * usage is an entry of `usage.iterations`, left out of the top-level usage. The summary is
 * extractive and deterministic (the start of every block, in order), so a test can tell which facts
 * a later call was sent.
 */
import { COMPACTION_BETA, COMPACTION_DEFAULT_TRIGGER_TOKENS, COMPACTION_EDIT_TYPE } from '../protocol/compaction';
import { effectiveMessages, signCompaction } from './compaction-wire';
import { estimateTokens } from './messages-api-rules';
import type { ThinkingSigner } from './thinking-signature';

/** Characters kept from each block of the compacted conversation, and of the whole summary. */
export const SUMMARY_CHARS_PER_BLOCK = 240;
export const SUMMARY_MAX_CHARS = 12_000;

type Json = Record<string, unknown>;

export interface WireCompaction {
  type: 'compaction';
  content: string;
  encrypted_content: null;
  signature: string;
}

export interface CompactionIteration {
  type: 'compaction';
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: 0;
  cache_read_input_tokens: 0;
  cache_creation: null;
}

export interface FakeCompaction {
  block: WireCompaction;
  iteration: CompactionIteration;
  /** pause_after_compaction: the answer is the block alone, stop_reason `compaction`. */
  pause: boolean;
  /** What the sampling after the block reads, in tokens (system, tools and the summary). */
  promptAfter: number;
}

/** The compact edit of a request, when it has one and the compaction beta is on. */
function compactEdit(body: Json, betas: readonly string[]): Json | undefined {
  if (!betas.includes(COMPACTION_BETA)) return undefined;
  const edits = (body.context_management as Json | undefined)?.edits;
  if (!Array.isArray(edits)) return undefined;
  return (edits as Json[]).find((e) => e?.type === COMPACTION_EDIT_TYPE);
}

/** The compaction this request triggers, or undefined when its input is below the trigger (or compaction is off). */
export function compactionFor(body: Json, betas: readonly string[], signer: ThinkingSigner): FakeCompaction | undefined {
  const edit = compactEdit(body, betas);
  if (!edit) return undefined;
  const messages = effectiveMessages(body.messages as unknown[]);
  const tokens = estimateTokens({ ...body, messages });
  const trigger = ((edit.trigger as Json | null | undefined)?.value as number | undefined) ?? COMPACTION_DEFAULT_TRIGGER_TOKENS;
  if (tokens < trigger) return undefined;
  const content = summaryOf(messages, typeof edit.instructions === 'string' ? edit.instructions : undefined);
  const block: WireCompaction = { type: 'compaction', content, encrypted_content: null, signature: signCompaction(signer, content) };
  return {
    block,
    iteration: {
      type: 'compaction',
      input_tokens: tokens,
      output_tokens: Math.ceil(content.length / 4),
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      cache_creation: null,
    },
    pause: edit.pause_after_compaction === true,
    promptAfter: estimateTokens({ system: body.system, tools: body.tools, messages: [{ role: 'assistant', content: [block] }] }),
  };
}

/**
 * The summary: a previous summary first (it is re-summarised, so it stays bounded), then the
 * start of every block in order. Instructions, when given, open it, as they steer the real summary.
 */
export function summaryOf(messages: unknown[], instructions?: string): string {
  const lines: string[] = [];
  if (instructions) lines.push(`[instructions] ${clip(instructions)}`);
  for (const message of messages as Json[]) {
    const role = message?.role;
    const content = typeof message?.content === 'string' ? [{ type: 'text', text: message.content }] : ((message?.content as Json[] | undefined) ?? []);
    for (const block of content) {
      if (block.type === 'compaction' && typeof block.content === 'string') lines.push(block.content);
      else if (block.type === 'text') lines.push(`${role}: ${clip(String(block.text))}`);
      else if (block.type === 'tool_use') lines.push(`${role} called ${String(block.name)} ${clip(JSON.stringify(block.input))}`);
      else if (block.type === 'tool_result') lines.push(`result: ${clip(resultText(block.content))}`);
    }
  }
  const summary = lines.join('\n');
  // Bounded like a real summary: the oldest part stays (it holds the earliest facts), then the latest.
  if (summary.length <= SUMMARY_MAX_CHARS) return summary;
  const head = Math.floor(SUMMARY_MAX_CHARS / 2);
  return `${summary.slice(0, head)}\n[...]\n${summary.slice(summary.length - (SUMMARY_MAX_CHARS - head - 7))}`;
}

function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return (content as Json[]).map((b) => (b.type === 'text' ? String(b.text) : '')).join(' ');
  return '';
}

function clip(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > SUMMARY_CHARS_PER_BLOCK ? `${flat.slice(0, SUMMARY_CHARS_PER_BLOCK)}…` : flat;
}
