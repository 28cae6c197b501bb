/**
 * Conversation types in Anthropic's Messages format. Plain data only: these travel through
 * Temporal payloads and are read by workflow code, so nothing here may touch Node or the SDK.
 */
import type { CallRecovery } from './recovery';

export interface TextBlock {
  type: 'text';
  text: string;
}

export interface ToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: unknown;
}

export interface ToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content: string;
  is_error?: boolean;
}

/** Extended thinking: passed back to the API unchanged (signature included) within a tool loop. */
export interface ThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature: string;
}

/** Thinking the API encrypted; passed back unchanged like ThinkingBlock. */
export interface RedactedThinkingBlock {
  type: 'redacted_thinking';
  data: string;
}

/**
 * Server-side compaction (beta `compact-2026-01-12`): the API's summary of everything before it in
 * the conversation. Passed back unchanged (signature included); the API ignores what precedes it.
 * `content` null is a compaction that failed, which the API treats as a no-op.
 */
export interface CompactionBlock {
  type: 'compaction';
  content: string | null;
  signature?: string;
  encrypted_content?: string | null;
}

export type AssistantBlock = TextBlock | ToolUseBlock | ThinkingBlock | RedactedThinkingBlock | CompactionBlock;
export type UserBlock = TextBlock | ToolResultBlock;

export type Message = { role: 'user'; content: string | UserBlock[] } | { role: 'assistant'; content: AssistantBlock[] };

export type StopReason = 'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence' | 'pause_turn' | 'refusal' | 'model_context_window_exceeded' | 'compaction';

export interface Usage {
  inputTokens: number;
  /** Includes thinking tokens (the API bills them as output). */
  outputTokens: number;
  /** Prompt-cache writes and reads, where the model reports them. */
  cacheWriteTokens?: number;
  cacheReadTokens?: number;
}

/** What one model call returns to the workflow. */
export interface ModelTurn {
  content: AssistantBlock[];
  stopReason: StopReason;
  usage: Usage;
  /** The model that answered, e.g. `claude-sonnet-5-5` or `scripted:demo.json`. */
  model: string;
  /** USD for this call from the worker's price table; absent when the model has no price. */
  costUsd?: number;
  /**
   * The API compacted the conversation during this call: the compaction iterations' usage (the API
   * leaves them out of the top-level usage) and their USD, included in `costUsd`.
   */
  compaction?: { usage: Usage; costUsd?: number };
  /** The request asked for native compaction and this model has none (the workflow summarises instead). */
  nativeCompaction?: 'unsupported';
  /** The call answered after attempts were lost (a crash, a timeout, an outage): what they cost. */
  recovery?: CallRecovery;
}

/** Progress of a model call while its answer streams in: heartbeat details, shown by `watch`. */
export interface ModelProgress {
  /** Characters of text (and tool input JSON) received so far. */
  outputChars: number;
  /** Characters of thinking received so far. */
  thinkingChars: number;
  /** The last few hundred characters of answer text, for a live view. */
  tail: string;
}

/** The model-facing description of a tool (Anthropic's `tools` entry). */
export interface ToolSpec {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
  /**
   * A tool the Messages API defines itself (`memory_20250818`): Claude is sent `{ type, name }`
   * only; input_schema stays for validation on the worker and for models that need a schema.
   */
  type?: string;
}

export function textOf(blocks: AssistantBlock[]): string {
  return blocks
    .filter((b): b is TextBlock => b.type === 'text')
    .map((b) => b.text)
    .join('\n')
    .trim();
}

export function toolUsesOf(blocks: AssistantBlock[]): ToolUseBlock[] {
  return blocks.filter((b): b is ToolUseBlock => b.type === 'tool_use');
}
