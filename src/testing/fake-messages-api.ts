/**
 * A fake Anthropic Messages API on loopback. It speaks the real HTTP protocol (JSON and server-sent
 * events), so the real @anthropic-ai/sdk is exercised end to end: scripted or computed assistant
 * turns, thinking blocks with signatures it can verify, slow or cut streams, and on demand the
 * failures the real API produces (429 with retry-after, 529, 500, 400 "prompt is too long", 401, a
 * dropped connection, a truncated body).
 *
 * Strict by default: a request the real API would refuse (see messages-api-rules.ts) is answered
 * with the API's 400 invalid_request_error and does not consume a queued reply.
 * `new FakeMessagesApi({ strict: false })` accepts anything, for a test that needs it and says why.
 */
import type http from 'node:http';
import { LoopbackHttpServer } from '../net/loopback-http-server';
import type { StopReason, TextBlock, ToolUseBlock } from '../protocol/messages';
import { DOCUMENTED_MODELS } from './documented-models';
import { checkMessagesHeaders, checkMessagesRequest, type MessagesApiRuleOptions } from './messages-api-rules';
import { pause, writeMessageStream, type StreamPacing, type StreamProgress, type WireBlock, type WireMessage } from './sse-writer';
import { ThinkingSigner } from './thinking-signature';
import { PromptCache, type PromptCacheOptions } from './prompt-cache';
import { betasOf, effectiveMessages } from './compaction-wire';
import { compactionFor, type FakeCompaction } from './fake-compaction';

export type { StreamPacing, StreamProgress } from './sse-writer';

/** A block the fake answers with. Thinking is signed by the fake; redacted data is made up by it. */
export type FakeBlock = TextBlock | ToolUseBlock | { type: 'thinking'; thinking: string } | { type: 'redacted_thinking' };

export interface FakeUsage {
  input: number;
  /** Thinking included, as the API bills it. */
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
}

export type FakeReply =
  | {
      kind: 'turn';
      content: FakeBlock[];
      /** Default: tool_use when the content has one, else end_turn. `max_tokens` for an answer cut short. */
      stopReason?: StopReason;
      usage?: FakeUsage;
      /** How to stream it when the request asked for a stream (ignored otherwise). */
      stream?: StreamPacing;
    }
  | { kind: 'error'; status: number; errorType: string; message: string; headers?: Record<string, string> }
  | { kind: 'drop_connection' }
  | { kind: 'truncated' }
  | { kind: 'slow'; delayMs: number; then: FakeReply }
  /** Computed from the request when it arrives. */
  | { kind: 'respond'; respond: Responder };

export type ErrorReply = Extract<FakeReply, { kind: 'error' }>;

export type Responder = (request: RecordedRequest) => FakeReply | Promise<FakeReply>;

export const fakeErrors = {
  rateLimited: (retryAfterSeconds = 1): ErrorReply => ({
    kind: 'error',
    status: 429,
    errorType: 'rate_limit_error',
    message: 'Number of request tokens has exceeded your per-minute rate limit',
    headers: { 'retry-after': String(retryAfterSeconds) },
  }),
  overloaded: (): ErrorReply => ({ kind: 'error', status: 529, errorType: 'overloaded_error', message: 'Overloaded' }),
  internal: (): ErrorReply => ({ kind: 'error', status: 500, errorType: 'api_error', message: 'Internal server error' }),
  promptTooLong: (): ErrorReply => ({
    kind: 'error',
    status: 400,
    errorType: 'invalid_request_error',
    message: 'prompt is too long: 210000 tokens > 200000 maximum',
  }),
  unauthorized: (): ErrorReply => ({ kind: 'error', status: 401, errorType: 'authentication_error', message: 'invalid x-api-key' }),
  invalidRequest: (message: string): ErrorReply => ({ kind: 'error', status: 400, errorType: 'invalid_request_error', message }),
  modelNotFound: (model: string): ErrorReply => ({ kind: 'error', status: 404, errorType: 'not_found_error', message: `model: ${model}` }),
};

/** Shorthands for replies. */
export const fakeTurns = {
  text: (text: string, extra: Partial<Extract<FakeReply, { kind: 'turn' }>> = {}): FakeReply => ({ kind: 'turn', content: [{ type: 'text', text }], ...extra }),
  toolUse: (id: string, name: string, input: Record<string, unknown>, text?: string): FakeReply => ({
    kind: 'turn',
    content: [...(text ? [{ type: 'text' as const, text }] : []), { type: 'tool_use', id, name, input }],
  }),
  /** An answer cut at max_tokens (the caller must continue it). */
  cutAtMaxTokens: (text: string): FakeReply => ({ kind: 'turn', content: [{ type: 'text', text }], stopReason: 'max_tokens' }),
  /** The same reply with a thinking block first (signed by the fake), as a model with thinking on answers. */
  thinking: (thinking: string, reply: FakeReply, redacted = false): FakeReply => {
    if (reply.kind !== 'turn') throw new TypeError('fakeTurns.thinking wraps a turn');
    const block: FakeBlock = redacted ? { type: 'redacted_thinking' } : { type: 'thinking', thinking };
    return { ...reply, content: [block, ...reply.content] };
  },
};

export interface RecordedRequest {
  body: {
    model: string;
    system?: unknown;
    messages: unknown[];
    tools?: { name: string; cache_control?: unknown }[];
    tool_choice?: { type: string; name?: string };
    max_tokens: number;
    thinking?: { type: string; budget_tokens?: number };
    stream?: boolean;
    [key: string]: unknown;
  };
  headers: http.IncomingHttpHeaders;
  /** Date.now() when the request arrived. */
  at: number;
  /** Set when the strict rules refused the request: the API's message. */
  rejected?: string;
  /** Set when the answer is streamed: deltas sent so far, and how the stream ended. */
  stream?: StreamProgress;
  /** Set when the request's input reached its compaction trigger: the block the answer opened with. */
  compaction?: FakeCompaction;
  /**
   * What the API bills for this request, in its usage fields, once the answer has begun: a whole
   * answer its usage (compaction iterations included); a stream the client left or that was cut,
   * its prompt (message_start's input fields) and the output sent so far (characters / 4, as the
   * fake counts output). Unset: nothing was generated (refused, an error reply, the client gone first).
   */
  billed?: BilledUsage;
}

/** The usage fields the API bills by, as the Messages API names them. */
export interface BilledUsage {
  model: string;
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

export interface FakeMessagesApiOptions {
  /** Enforce the real API's request rules. Default true. */
  strict?: boolean;
  /** Prefill support, output limits, context window (see MessagesApiRuleOptions). */
  rules?: MessagesApiRuleOptions;
  /**
   * Any model id not listed is answered 404 not_found_error, as the API does for an unknown model.
   * Default: the documented models (documented-models.ts), so a made-up or retired default fails.
   */
  models?: readonly string[];
  /** Answers a request when no queued reply is left. */
  responder?: Responder;
  /** Secret for thinking signatures (default random), so two fakes can share signatures. */
  thinkingSecret?: string;
  /**
   * The prompt cache behind the usage of a reply that does not script its own (see prompt-cache.ts):
   * input, cache write and cache read tokens as the API would bill them. Default: on, 5-minute TTL.
   */
  promptCache?: PromptCacheOptions;
}

export class FakeMessagesApi extends LoopbackHttpServer {
  private readonly replies: FakeReply[] = [];
  readonly requests: RecordedRequest[] = [];
  readonly signer: ThinkingSigner;
  strict: boolean;
  rules: MessagesApiRuleOptions;
  models: readonly string[];
  responder?: Responder;
  readonly promptCache: PromptCache;
  private ids = 0;

  constructor(options: FakeMessagesApiOptions = {}) {
    super();
    this.strict = options.strict ?? true;
    this.rules = options.rules ?? {};
    this.models = options.models ?? DOCUMENTED_MODELS;
    if (options.responder) this.responder = options.responder;
    this.signer = new ThinkingSigner(options.thinkingSecret);
    this.promptCache = new PromptCache(options.promptCache);
  }

  /** Queue replies; each accepted request takes the next one. With none left (and no responder) the server answers 500 and says why. */
  enqueue(...replies: FakeReply[]): this {
    this.replies.push(...replies);
    return this;
  }

  /** Drops every queued reply. */
  clearQueue(): this {
    this.replies.length = 0;
    return this;
  }

  get pending(): number {
    return this.replies.length;
  }

  /** What the API billed, request by request (see RecordedRequest.billed). */
  get billed(): BilledUsage[] {
    return this.requests.flatMap((r) => (r.billed ? [r.billed] : []));
  }

  /** The requests the strict rules refused. */
  get rejected(): RecordedRequest[] {
    return this.requests.filter((r) => r.rejected !== undefined);
  }

  protected async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (req.method !== 'POST' || !req.url?.startsWith('/v1/messages')) {
      return sendError(res, { kind: 'error', status: 404, errorType: 'not_found_error', message: `no route ${req.url}` });
    }
    let raw = '';
    for await (const chunk of req) raw += chunk;
    let body: RecordedRequest['body'];
    try {
      body = JSON.parse(raw);
    } catch {
      return sendError(res, fakeErrors.invalidRequest('Request body is not valid JSON.'));
    }
    const record: RecordedRequest = { body, headers: req.headers, at: Date.now() };
    this.requests.push(record);
    const betas = betasOf(req.headers['anthropic-beta']);
    if (this.strict) {
      const problem = checkMessagesHeaders(req.headers) ?? checkMessagesRequest(body, this.signer, { ...this.rules, betas });
      if (problem !== undefined) {
        record.rejected = problem;
        return sendError(res, fakeErrors.invalidRequest(problem));
      }
    }
    if (!this.models.includes(body.model)) {
      record.rejected = `model: ${body.model}`;
      return sendError(res, fakeErrors.modelNotFound(body.model));
    }
    const compaction = compactionFor(body, betas, this.signer);
    if (compaction) {
      record.compaction = compaction;
      // pause_after_compaction: the answer is the block alone, and no scripted reply is used.
      if (compaction.pause) return this.answer(req, res, record, { kind: 'turn', content: [], stopReason: 'compaction' });
    }
    const reply = this.replies.shift() ?? (this.responder ? { kind: 'respond' as const, respond: this.responder } : undefined);
    if (!reply) {
      return sendError(res, { kind: 'error', status: 500, errorType: 'api_error', message: 'FakeMessagesApi: no scripted reply left' });
    }
    await this.answer(req, res, record, reply);
  }

  private async answer(req: http.IncomingMessage, res: http.ServerResponse, record: RecordedRequest, reply: FakeReply): Promise<void> {
    switch (reply.kind) {
      case 'respond':
        return this.answer(req, res, record, await reply.respond(record));
      case 'slow':
        await pause(res, reply.delayMs);
        if (res.destroyed) return;
        return this.answer(req, res, record, reply.then);
      case 'drop_connection':
        req.socket.destroy();
        return;
      case 'error':
        return sendError(res, reply);
      case 'truncated': {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"id":"msg_x","type":"message","content":[{"type":"te');
        return;
      }
      case 'turn': {
        const message = this.messageFor(record, reply);
        if (record.body.stream) {
          const progress: StreamProgress = { deltas: 0 };
          const sent = { outputChars: 0 };
          record.stream = progress;
          await writeMessageStream(res, message, reply.stream, progress, sent);
          record.billed = billedFor(message, progress.ended === 'finished' ? undefined : sent.outputChars);
          return;
        }
        if (res.destroyed) return;
        res.writeHead(200, { 'content-type': 'application/json', 'request-id': `req_${message.id}` });
        res.end(JSON.stringify({ ...message, type: 'message', role: 'assistant', stop_sequence: null }));
        record.billed = billedFor(message);
        return;
      }
    }
  }

  private compactedMessage(record: RecordedRequest, compaction: FakeCompaction, sampled: WireBlock[], reply: Extract<FakeReply, { kind: 'turn' }>): WireMessage {
    const hasTools = sampled.some((b) => b.type === 'tool_use');
    return {
      id: `msg_fake_${++this.ids}`,
      model: record.body.model ?? 'fake',
      content: [compaction.block, ...sampled],
      stop_reason: compaction.pause ? 'compaction' : (reply.stopReason ?? (hasTools ? 'tool_use' : 'end_turn')),
      usage: compactedUsage(compaction, sampled),
    };
  }

  private messageFor(record: RecordedRequest, reply: Extract<FakeReply, { kind: 'turn' }>): WireMessage {
    const content: WireBlock[] = reply.content.map((block) => {
      // Signed for the model that answers: another model refuses the block (thinking-signature.ts).
      if (block.type === 'thinking') return { type: 'thinking', thinking: block.thinking, signature: this.signer.sign(block.thinking, record.body.model) };
      if (block.type === 'redacted_thinking') return { type: 'redacted_thinking', data: this.signer.redactedData(record.body.model) };
      return block;
    });
    const hasTools = content.some((b) => b.type === 'tool_use');
    const compaction = record.compaction;
    if (compaction) return this.compactedMessage(record, compaction, content, reply);
    // A scripted usage is what the test wants billed; otherwise what the API would bill for this prompt
    // (from a passed-back compaction block on: the API reads nothing before it).
    const prompt = reply.usage ? undefined : this.promptCache.use({ ...record.body, messages: effectiveMessages(record.body.messages) });
    return {
      id: `msg_fake_${++this.ids}`,
      model: record.body.model ?? 'fake',
      content,
      stop_reason: reply.stopReason ?? (hasTools ? 'tool_use' : 'end_turn'),
      usage: prompt
        ? { ...prompt, output_tokens: Math.ceil(JSON.stringify(content).length / 4) }
        : {
            input_tokens: reply.usage!.input,
            output_tokens: reply.usage!.output,
            cache_creation_input_tokens: reply.usage!.cacheWrite ?? 0,
            cache_read_input_tokens: reply.usage!.cacheRead ?? 0,
          },
    };
  }
}

/**
 * The answer of a request that compacted: the block first, then (unless paused) the sampled turn.
 * The compaction's usage is its own entry of `usage.iterations`, not part of the top-level usage,
 * which bills only the sampling after the block (system, tools and the summary).
 */
function compactedUsage(compaction: FakeCompaction, sampled: WireBlock[]): WireMessage['usage'] {
  const output = sampled.length ? Math.ceil(JSON.stringify(sampled).length / 4) : 0;
  const input = sampled.length ? compaction.promptAfter : 0;
  const message = { type: 'message', input_tokens: input, output_tokens: output, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, cache_creation: null };
  return {
    input_tokens: input,
    output_tokens: output,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    iterations: compaction.pause ? [compaction.iteration] : [compaction.iteration, message],
  };
}

/**
 * What a message is billed: its usage and its compaction iterations' (which the top level leaves
 * out); with `sentChars`, a stream that ended early: the prompt and only the output sent.
 */
function billedFor(message: WireMessage, sentChars?: number): BilledUsage {
  const { usage } = message;
  const iterations = (usage.iterations ?? []) as { type?: string; input_tokens?: number; output_tokens?: number; cache_creation_input_tokens?: number; cache_read_input_tokens?: number }[];
  const compaction = iterations.filter((i) => i.type === 'compaction');
  const sum = (pick: (i: (typeof compaction)[number]) => number | undefined) => compaction.reduce((n, i) => n + (pick(i) ?? 0), 0);
  const output = sentChars === undefined ? usage.output_tokens : Math.min(usage.output_tokens, Math.max(1, Math.ceil(sentChars / 4)));
  return {
    model: message.model,
    input_tokens: usage.input_tokens + sum((i) => i.input_tokens),
    output_tokens: output + sum((i) => i.output_tokens),
    cache_creation_input_tokens: usage.cache_creation_input_tokens + sum((i) => i.cache_creation_input_tokens),
    cache_read_input_tokens: usage.cache_read_input_tokens + sum((i) => i.cache_read_input_tokens),
  };
}

function sendError(res: http.ServerResponse, reply: ErrorReply): void {
  res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
  res.end(JSON.stringify({ type: 'error', error: { type: reply.errorType, message: reply.message } }));
}
