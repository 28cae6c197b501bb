/**
 * Claude through @anthropic-ai/sdk, streamed. `maxRetries: 0`: Temporal owns retries, so a retry is
 * visible in history and follows the error's class instead of the SDK's own loop. Streaming keeps a
 * long answer clear of the SDK's non-streaming limits and lets the activity heartbeat as tokens
 * arrive.
 */
import Anthropic from '@anthropic-ai/sdk';
import { ToolFailure } from '../errors/tool-failure';
import type { AssistantBlock, Message, ModelProgress, ModelTurn, StopReason, Usage } from '../protocol/messages';
import { COMPACTION_BETA, COMPACTION_EDIT_TYPE, supportsNativeCompaction } from '../protocol/compaction';
import type { OutputDelta } from '../protocol/live-output';
import { toolTurnLacksThinking } from '../protocol/model-fallback';
import type { ThinkingSetting } from '../protocol/task';
import { abortedCallUsage, estimateInputTokens, type CallPlan } from './call-budget';
import { ModelCallAborted, type Model, type ModelCapabilities, type ModelRequest } from './model';

/** A current model from the SDK's list (claude-sonnet-4-5 reaches end of life on 2026-11-30). */
export const DEFAULT_ANTHROPIC_MODEL = 'claude-sonnet-5-5';
export const DEFAULT_MAX_TOKENS = 4_096;
/** How often the answer's progress is reported at most, and after how many new characters at least. */
export const PROGRESS_INTERVAL_MS = 250;
export const PROGRESS_CHARS = 2_048;
const TAIL_CHARS = 300;

export interface AnthropicModelOptions {
  model?: string;
  maxTokens?: number;
  apiKey?: string;
  /** For a proxy or a local fake Messages API server. Default: the SDK's own (ANTHROPIC_BASE_URL or the public API). */
  baseURL?: string;
  /** Until the response starts, and then the longest silence allowed mid-stream, ms. Default 120 000. */
  timeoutMs?: number;
  /** Extended thinking for every call unless the request says otherwise. Default off. */
  thinking?: ThinkingSetting;
  /** Where prompt-cache breakpoints go. Default `conversation` (see PromptCaching). */
  promptCaching?: PromptCaching;
  /** The model's context window in tokens, declared in its capabilities. Default: the engine's (200 000). */
  contextWindowTokens?: number;
}

/**
 * `conversation`: the system prompt, the last tool and the latest user message, so each call reads
 * the previous call's whole prompt from the cache. `static`: the system prompt and tools only (the
 * conversation is billed in full on every call). `off`: no breakpoints.
 */
export type PromptCaching = 'conversation' | 'static' | 'off';
export const PROMPT_CACHING_MODES: readonly PromptCaching[] = ['conversation', 'static', 'off'];

type Params = Anthropic.MessageStreamParams;

export class AnthropicModel implements Model {
  readonly id: string;
  private readonly client: Anthropic;
  private readonly maxTokens: number;
  private readonly thinking: ThinkingSetting | undefined;
  private readonly timeoutMs: number;
  private readonly promptCaching: PromptCaching;
  /**
   * Declared once: native compaction where the model has it (supportsNativeCompaction; a call an
   * `unblock --model` sends to a model without it still answers `nativeCompaction: 'unsupported'`),
   * cache breakpoints unless caching is off, thinking and streaming always.
   */
  readonly capabilities: ModelCapabilities;

  constructor(options: AnthropicModelOptions = {}) {
    this.id = options.model ?? DEFAULT_ANTHROPIC_MODEL;
    this.maxTokens = options.maxTokens ?? DEFAULT_MAX_TOKENS;
    this.thinking = options.thinking;
    this.timeoutMs = options.timeoutMs ?? 120_000;
    this.promptCaching = options.promptCaching ?? 'conversation';
    this.capabilities = {
      nativeCompaction: supportsNativeCompaction(this.id),
      promptCaching: this.promptCaching !== 'off',
      thinking: true,
      streaming: true,
      ...(options.contextWindowTokens ? { contextWindowTokens: options.contextWindowTokens } : {}),
    };
    this.client = new Anthropic({
      ...(options.apiKey ? { apiKey: options.apiKey } : {}),
      ...(options.baseURL ? { baseURL: options.baseURL } : {}),
      maxRetries: 0,
      timeout: this.timeoutMs,
    });
  }

  /** The exact request body sent for `request` (without `stream`). */
  paramsFor(request: ModelRequest): Params {
    return buildParams(request, { model: this.id, maxTokens: this.maxTokens, thinking: this.thinking, promptCaching: this.promptCaching });
  }

  /**
   * The beta Messages endpoint with server-side compaction: the `compact_20260112` edit at the
   * task's trigger, paused after the summary so the block is recorded (an activity result) before
   * the turn is sampled; a retry or a killed worker after that never pays for the same compaction
   * again. Its events and final message are the regular stream's plus the compaction block and
   * usage iterations.
   */
  private compactingStream(params: Params, triggerTokens: number, options: Anthropic.RequestOptions): ReturnType<Anthropic['messages']['stream']> {
    return this.client.beta.messages.stream(
      {
        ...(params as unknown as Anthropic.Beta.Messages.MessageCreateParamsStreaming),
        betas: [COMPACTION_BETA],
        context_management: { edits: [{ type: COMPACTION_EDIT_TYPE, trigger: { type: 'input_tokens', value: triggerTokens }, pause_after_compaction: true }] },
      },
      options,
    ) as unknown as ReturnType<Anthropic['messages']['stream']>;
  }

  /** The model, input estimate and max_tokens `request` is sent with (call-budget.ts). */
  plan(request: ModelRequest): CallPlan {
    return planOf(this.paramsFor(request));
  }

  async complete(request: ModelRequest): Promise<ModelTurn> {
    const params = this.paramsFor(request);
    const { signal } = request;
    // Aborted before anything was sent: it cost nothing.
    if (signal?.aborted) throw new ModelCallAborted(params.model, { inputTokens: 0, outputTokens: 0 }, true);
    const native = request.compaction !== undefined && supportsNativeCompaction(params.model);
    const options: Anthropic.RequestOptions = signal ? { signal } : {};
    const stream = native ? this.compactingStream(params, request.compaction!.triggerTokens, options) : this.client.messages.stream(params, options);
    const progress = new ProgressMeter(request.onProgress);
    // Live output is advisory: a subscriber's trouble must not fail the call.
    const output = (delta: OutputDelta) => {
      try {
        request.onOutput?.(delta);
      } catch {}
    };
    // What the stream says the call has cost so far, for a call aborted mid-way (an interrupt).
    const streamed: { usage?: Usage; outputChars: number } = { outputChars: 0 };
    // The SDK's timeout covers only the wait for response headers: a stream that goes silent
    // mid-answer would hang, and the activity's own heartbeats would keep it looking alive.
    let stalled = false;
    let idle: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(idle);
      idle = setTimeout(() => {
        stalled = true;
        stream.abort();
      }, this.timeoutMs);
    };
    arm();
    stream.on('streamEvent', (event: Anthropic.MessageStreamEvent) => {
      arm();
      if (event.type === 'message_start') streamed.usage = usageOf(event.message.usage);
      else if (event.type === 'message_delta') streamed.usage = deltaUsage(streamed.usage, event.usage);
      if (event.type === 'content_block_start' && event.content_block.type === 'tool_use') {
        output({ type: 'tool_use', block: event.index, name: event.content_block.name, toolUseId: event.content_block.id });
      }
      if (event.type !== 'content_block_delta') return;
      const delta = event.delta;
      if (delta.type === 'text_delta') {
        progress.text(delta.text);
        output({ type: 'text', block: event.index, text: delta.text });
        streamed.outputChars += delta.text.length;
      } else if (delta.type === 'input_json_delta') {
        progress.output(delta.partial_json.length);
        output({ type: 'tool_input', block: event.index, json: delta.partial_json });
        streamed.outputChars += delta.partial_json.length;
      } else if (delta.type === 'thinking_delta') {
        progress.thought(delta.thinking.length);
        streamed.outputChars += delta.thinking.length;
      }
    });
    try {
      const message = await stream.finalMessage();
      progress.flush();
      const turn = toTurn(message);
      return request.compaction && !native ? { ...turn, nativeCompaction: 'unsupported' } : turn;
    } catch (err) {
      if (stalled) {
        throw new ToolFailure('transient', 'stream_stalled', `The model's answer stopped arriving for ${this.timeoutMs} ms.`, 'The call is retried.');
      }
      if (signal?.aborted) {
        const { usage, measured } = abortedCallUsage(planOf(params), streamed);
        throw new ModelCallAborted(params.model, usage, measured);
      }
      throw err;
    } finally {
      clearTimeout(idle);
    }
  }
}

function planOf(params: Params): CallPlan {
  const thinking = params.thinking?.type === 'enabled' ? params.thinking.budget_tokens : undefined;
  return { model: params.model, inputTokens: estimateInputTokens(params), maxTokens: params.max_tokens, ...(thinking !== undefined ? { thinkingBudget: thinking } : {}) };
}

/** The usage a stream's message_start reports (output so far: a token or so). */
function usageOf(usage: Anthropic.Usage): Usage {
  return {
    inputTokens: usage.input_tokens,
    outputTokens: usage.output_tokens,
    ...(usage.cache_creation_input_tokens ? { cacheWriteTokens: usage.cache_creation_input_tokens } : {}),
    ...(usage.cache_read_input_tokens ? { cacheReadTokens: usage.cache_read_input_tokens } : {}),
  };
}

/** A message_delta's usage: cumulative output, and the input fields when the API repeats them. */
function deltaUsage(before: Usage | undefined, delta: Anthropic.MessageDeltaUsage): Usage {
  const usage: Usage = { ...(before ?? { inputTokens: 0, outputTokens: 0 }), outputTokens: delta.output_tokens };
  if (delta.input_tokens != null) usage.inputTokens = delta.input_tokens;
  if (delta.cache_creation_input_tokens != null) usage.cacheWriteTokens = delta.cache_creation_input_tokens;
  if (delta.cache_read_input_tokens != null) usage.cacheReadTokens = delta.cache_read_input_tokens;
  return usage;
}

interface Defaults {
  model: string;
  maxTokens: number;
  thinking: ThinkingSetting | undefined;
  promptCaching?: PromptCaching;
}

export function buildParams(request: ModelRequest, defaults: Defaults): Params {
  // Mid tool loop after a fallback, the turn that asked for the tools lost another model's thinking:
  // this one call goes without thinking, which the API accepts (protocol/model-fallback.ts).
  const thinking = toolTurnLacksThinking(request.messages) ? undefined : (request.thinking ?? defaults.thinking);
  const caching = defaults.promptCaching ?? 'conversation';
  const cached = caching === 'off' ? {} : { cache_control: { type: 'ephemeral' as const } };
  const tools = request.tools.map((t, i) =>
    // The tool definitions are the same on every turn of a task: the last one closes a cached prefix.
    i === request.tools.length - 1 ? { ...toolParam(t), ...cached } : toolParam(t),
  ) as Anthropic.Tool[];
  return {
    model: request.model ?? defaults.model,
    max_tokens: request.maxTokens ?? defaults.maxTokens,
    ...(request.system ? { system: [{ type: 'text' as const, text: request.system, ...cached }] } : {}),
    messages: caching === 'conversation' ? withConversationBreakpoint(request.messages) : plainMessages(request.messages),
    // 'none' keeps the definitions: the API requires them whenever the history holds tool blocks.
    ...(tools.length ? { tools } : {}),
    ...(tools.length && request.toolChoice === 'none' ? { tool_choice: { type: 'none' as const } } : {}),
    ...(thinking ? { thinking: thinkingParam(thinking) } : {}),
  };
}

/** A tool the API defines itself (the memory tool) is declared by its type and name alone, as documented. */
function toolParam(t: ModelRequest['tools'][number]): Anthropic.ToolUnion {
  return (t.type ? { type: t.type, name: t.name } : { ...t }) as Anthropic.ToolUnion;
}

function thinkingParam(setting: ThinkingSetting): Anthropic.ThinkingConfigParam {
  return setting.type === 'adaptive' ? { type: 'adaptive' } : { type: 'enabled', budget_tokens: setting.budgetTokens };
}

/**
 * A third cache breakpoint that follows the conversation: the last block of the last user message,
 * so each turn reads the previous turn's prefix from the cache. With the system prompt and the last
 * tool that makes three, under the API's limit of four.
 */
function withConversationBreakpoint(messages: Message[]): Anthropic.MessageParam[] {
  const out = plainMessages(messages);
  // After a compaction the API reads from its block on: the block is the conversation's stable
  // prefix (a breakpoint of its own), and the moving one goes on a user message after it.
  const compacted = lastCompactionAt(out);
  if (compacted >= 0) {
    const message = out[compacted]!;
    const content = (message.content as Anthropic.ContentBlockParam[]).map((b) => (b.type === ('compaction' as string) ? { ...b, cache_control: { type: 'ephemeral' } } : b));
    out[compacted] = { ...message, content } as Anthropic.MessageParam;
  }
  for (let i = out.length - 1; i > compacted; i--) {
    const message = out[i]!;
    if (message.role !== 'user') continue;
    const content: Anthropic.ContentBlockParam[] = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : (message.content as Anthropic.ContentBlockParam[]);
    const last = content.at(-1);
    // The API refuses cache_control on an empty text block.
    if (!last || (last.type === 'text' && last.text === '')) break;
    out[i] = { role: 'user', content: [...content.slice(0, -1), { ...last, cache_control: { type: 'ephemeral' } } as Anthropic.ContentBlockParam] };
    break;
  }
  return out;
}

/** The index of the last message holding a compaction block, or -1. */
function lastCompactionAt(messages: Anthropic.MessageParam[]): number {
  for (let i = messages.length - 1; i >= 0; i--) {
    const content = messages[i]!.content;
    if (Array.isArray(content) && content.some((b) => b.type === ('compaction' as string))) return i;
  }
  return -1;
}

function plainMessages(messages: Message[]): Anthropic.MessageParam[] {
  return messages.map((m) => ({ role: m.role, content: typeof m.content === 'string' ? m.content : [...m.content] })) as Anthropic.MessageParam[];
}

function toTurn(message: Anthropic.Message): ModelTurn {
  const content: AssistantBlock[] = [];
  for (const block of message.content) {
    // Thinking goes back to the API unchanged within a tool loop: keep every field as received.
    if (block.type === 'text') content.push({ type: 'text', text: block.text });
    else if (block.type === 'tool_use') content.push({ type: 'tool_use', id: block.id, name: block.name, input: block.input });
    else if (block.type === 'thinking') content.push({ type: 'thinking', thinking: block.thinking, signature: block.signature });
    else if (block.type === 'redacted_thinking') content.push({ type: 'redacted_thinking', data: block.data });
    else if ((block as { type: string }).type === 'compaction') content.push(compactionBlockOf(block as unknown as Anthropic.Beta.Messages.BetaCompactionBlock));
  }
  const usage = message.usage;
  const compaction = compactionUsageOf((usage as Anthropic.Beta.Messages.BetaUsage).iterations);
  return {
    content,
    stopReason: (message.stop_reason ?? 'end_turn') as StopReason,
    usage: {
      inputTokens: usage.input_tokens,
      // The API's output_tokens already includes thinking, billed as output.
      outputTokens: usage.output_tokens,
      ...(usage.cache_creation_input_tokens ? { cacheWriteTokens: usage.cache_creation_input_tokens } : {}),
      ...(usage.cache_read_input_tokens ? { cacheReadTokens: usage.cache_read_input_tokens } : {}),
    },
    model: message.model,
    ...(compaction ? { compaction: { usage: compaction } } : {}),
  };
}

/** The block as returned, to be sent back verbatim (the signature and any opaque content with it). */
function compactionBlockOf(block: Anthropic.Beta.Messages.BetaCompactionBlock): AssistantBlock {
  return {
    type: 'compaction',
    content: block.content,
    ...(block.signature ? { signature: block.signature } : {}),
    ...(block.encrypted_content != null ? { encrypted_content: block.encrypted_content } : {}),
  };
}

/** The compaction iterations' usage, summed: the API leaves them out of the top-level usage. */
function compactionUsageOf(iterations: Anthropic.Beta.Messages.BetaIterationsUsage | null | undefined): Usage | undefined {
  const entries = (iterations ?? []).filter((i): i is Anthropic.Beta.Messages.BetaCompactionIterationUsage => i.type === 'compaction');
  if (entries.length === 0) return undefined;
  const sum = (pick: (i: Anthropic.Beta.Messages.BetaCompactionIterationUsage) => number) => entries.reduce((n, i) => n + (pick(i) ?? 0), 0);
  const write = sum((i) => i.cache_creation_input_tokens);
  const read = sum((i) => i.cache_read_input_tokens);
  return {
    inputTokens: sum((i) => i.input_tokens),
    outputTokens: sum((i) => i.output_tokens),
    ...(write ? { cacheWriteTokens: write } : {}),
    ...(read ? { cacheReadTokens: read } : {}),
  };
}

/** Reports progress at most every PROGRESS_INTERVAL_MS, or sooner after PROGRESS_CHARS new characters. */
class ProgressMeter {
  private outputChars = 0;
  private thinkingChars = 0;
  private tail = '';
  private lastAt = Date.now();
  private lastChars = 0;

  constructor(private readonly report?: (progress: ModelProgress) => void) {}

  text(delta: string): void {
    this.tail = (this.tail + delta).slice(-TAIL_CHARS);
    this.output(delta.length);
  }

  output(chars: number): void {
    this.outputChars += chars;
    this.maybeReport();
  }

  thought(chars: number): void {
    this.thinkingChars += chars;
    this.maybeReport();
  }

  flush(): void {
    if (this.outputChars + this.thinkingChars !== this.lastChars) this.send();
  }

  private maybeReport(): void {
    const chars = this.outputChars + this.thinkingChars;
    if (Date.now() - this.lastAt >= PROGRESS_INTERVAL_MS || chars - this.lastChars >= PROGRESS_CHARS) this.send();
  }

  private send(): void {
    this.lastAt = Date.now();
    this.lastChars = this.outputChars + this.thinkingChars;
    if (!this.report) return;
    try {
      this.report({ outputChars: this.outputChars, thinkingChars: this.thinkingChars, tail: this.tail });
    } catch {
      // Progress is advisory; a failing reporter must not fail the call.
    }
  }
}
