/**
 * A fake Anthropic Messages API on loopback. It speaks the real HTTP protocol, so the real
 * @anthropic-ai/sdk is exercised end to end: scripted assistant turns, and on demand the failures the
 * real API produces (429 with retry-after, 529, 500, 400 "prompt is too long", 401, a dropped
 * connection, a truncated body, a slow answer).
 */
import type http from 'node:http';
import { LoopbackHttpServer } from '../net/loopback-http-server';
import type { AssistantBlock, StopReason } from '../protocol/messages';

export type FakeReply =
  | { kind: 'turn'; content: AssistantBlock[]; stopReason?: StopReason; usage?: { input: number; output: number } }
  | { kind: 'error'; status: number; errorType: string; message: string; headers?: Record<string, string> }
  | { kind: 'drop_connection' }
  | { kind: 'truncated' }
  | { kind: 'slow'; delayMs: number; then: FakeReply };

export const fakeErrors = {
  rateLimited: (retryAfterSeconds = 1): FakeReply => ({
    kind: 'error',
    status: 429,
    errorType: 'rate_limit_error',
    message: 'Number of request tokens has exceeded your per-minute rate limit',
    headers: { 'retry-after': String(retryAfterSeconds) },
  }),
  overloaded: (): FakeReply => ({ kind: 'error', status: 529, errorType: 'overloaded_error', message: 'Overloaded' }),
  internal: (): FakeReply => ({ kind: 'error', status: 500, errorType: 'api_error', message: 'Internal server error' }),
  promptTooLong: (): FakeReply => ({
    kind: 'error',
    status: 400,
    errorType: 'invalid_request_error',
    message: 'prompt is too long: 210000 tokens > 200000 maximum',
  }),
  unauthorized: (): FakeReply => ({ kind: 'error', status: 401, errorType: 'authentication_error', message: 'invalid x-api-key' }),
};

export interface RecordedRequest {
  body: {
    model: string;
    system?: unknown;
    messages: unknown[];
    tools?: { name: string }[];
    max_tokens: number;
  };
  headers: http.IncomingHttpHeaders;
  /** Date.now() when the request arrived. */
  at: number;
}

export class FakeMessagesApi extends LoopbackHttpServer {
  private readonly replies: FakeReply[] = [];
  readonly requests: RecordedRequest[] = [];
  private ids = 0;

  /** Queue replies; each request takes the next one. With none left the server answers 500 and says why. */
  enqueue(...replies: FakeReply[]): this {
    this.replies.push(...replies);
    return this;
  }

  get pending(): number {
    return this.replies.length;
  }

  protected async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (req.method !== 'POST' || !req.url?.startsWith('/v1/messages')) {
      return this.sendError(res, { kind: 'error', status: 404, errorType: 'not_found_error', message: `no route ${req.url}` });
    }
    let raw = '';
    for await (const chunk of req) raw += chunk;
    this.requests.push({ body: JSON.parse(raw), headers: req.headers, at: Date.now() });
    const reply = this.replies.shift();
    if (!reply) {
      return this.sendError(res, { kind: 'error', status: 500, errorType: 'api_error', message: 'FakeMessagesApi: no scripted reply left' });
    }
    await this.answer(req, res, reply);
  }

  private async answer(req: http.IncomingMessage, res: http.ServerResponse, reply: FakeReply): Promise<void> {
    switch (reply.kind) {
      case 'slow':
        await new Promise((r) => setTimeout(r, reply.delayMs));
        return this.answer(req, res, reply.then);
      case 'drop_connection':
        req.socket.destroy();
        return;
      case 'error':
        return this.sendError(res, reply);
      case 'truncated': {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"id":"msg_x","type":"message","content":[{"type":"te');
        return;
      }
      case 'turn': {
        const hasTools = reply.content.some((b) => b.type === 'tool_use');
        const body = {
          id: `msg_fake_${++this.ids}`,
          type: 'message',
          role: 'assistant',
          model: this.requests.at(-1)?.body.model ?? 'fake',
          content: reply.content,
          stop_reason: reply.stopReason ?? (hasTools ? 'tool_use' : 'end_turn'),
          stop_sequence: null,
          usage: { input_tokens: reply.usage?.input ?? 100, output_tokens: reply.usage?.output ?? 20 },
        };
        res.writeHead(200, { 'content-type': 'application/json', 'request-id': `req_fake_${this.ids}` });
        res.end(JSON.stringify(body));
        return;
      }
    }
  }

  private sendError(res: http.ServerResponse, reply: Extract<FakeReply, { kind: 'error' }>): void {
    res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
    res.end(JSON.stringify({ type: 'error', error: { type: reply.errorType, message: reply.message } }));
  }
}
