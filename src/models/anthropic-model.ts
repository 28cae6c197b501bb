/**
 * Claude through @anthropic-ai/sdk. `maxRetries: 0`: Temporal owns retries, so a retry is visible
 * in history and follows the error's class instead of the SDK's own loop.
 */
import Anthropic from '@anthropic-ai/sdk';
import type { AssistantBlock, ModelTurn, StopReason } from '../protocol/messages';
import type { Model, ModelRequest } from './model';

/** A current model from the SDK's list (claude-sonnet-4-5 reaches end of life on 2026-11-30). */
export const DEFAULT_ANTHROPIC_MODEL = 'claude-sonnet-5-5';
export const DEFAULT_MAX_TOKENS = 4_096;

export interface AnthropicModelOptions {
  model?: string;
  maxTokens?: number;
  apiKey?: string;
  /** For a proxy or a local fake Messages API server. Default: the SDK's own (ANTHROPIC_BASE_URL or the public API). */
  baseURL?: string;
  /** Per request, ms. Default 120 000. */
  timeoutMs?: number;
}

export class AnthropicModel implements Model {
  readonly id: string;
  private readonly client: Anthropic;
  private readonly maxTokens: number;

  constructor(options: AnthropicModelOptions = {}) {
    this.id = options.model ?? DEFAULT_ANTHROPIC_MODEL;
    this.maxTokens = options.maxTokens ?? DEFAULT_MAX_TOKENS;
    this.client = new Anthropic({
      ...(options.apiKey ? { apiKey: options.apiKey } : {}),
      ...(options.baseURL ? { baseURL: options.baseURL } : {}),
      maxRetries: 0,
      timeout: options.timeoutMs ?? 120_000,
    });
  }

  async complete(request: ModelRequest): Promise<ModelTurn> {
    // Prompt caching: the system prompt and the tool definitions are the same on every turn of a
    // task, so they are marked as a cache breakpoint (the last tool closes the cached prefix).
    const tools = request.tools.map((t, i) =>
      i === request.tools.length - 1 ? { ...t, cache_control: { type: 'ephemeral' as const } } : t,
    ) as Anthropic.Tool[];
    const response = await this.client.messages.create({
      model: this.id,
      max_tokens: this.maxTokens,
      system: request.system ? [{ type: 'text', text: request.system, cache_control: { type: 'ephemeral' } }] : [],
      messages: request.messages as Anthropic.MessageParam[],
      ...(tools.length ? { tools } : {}),
    });
    const content: AssistantBlock[] = [];
    for (const block of response.content) {
      if (block.type === 'text') content.push({ type: 'text', text: block.text });
      else if (block.type === 'tool_use') content.push({ type: 'tool_use', id: block.id, name: block.name, input: block.input });
    }
    return {
      content,
      stopReason: (response.stop_reason ?? 'end_turn') as StopReason,
      usage: {
        inputTokens: response.usage.input_tokens,
        outputTokens: response.usage.output_tokens,
        ...(response.usage.cache_creation_input_tokens ? { cacheWriteTokens: response.usage.cache_creation_input_tokens } : {}),
        ...(response.usage.cache_read_input_tokens ? { cacheReadTokens: response.usage.cache_read_input_tokens } : {}),
      },
      model: response.model,
    };
  }
}
