/**
 * Model errors are classified by the SDK's error class, the status, and the headers the API sends
 * to steer clients. Errors are the SDK's own (built by APIError.generate, as the SDK does for a
 * response), plus real responses from the fake over HTTP for the header paths.
 */
import Anthropic from '@anthropic-ai/sdk';
import { classifyModelError } from '../../src/models/classify-model-error';
import { ToolFailure } from '../../src/errors/tool-failure';
import { FakeMessagesApi } from '../../src/testing/fake-messages-api';

function apiError(status: number, type: string, message: string, headers: Record<string, string> = {}) {
  return Anthropic.APIError.generate(status, { type: 'error', error: { type, message } }, undefined, new Headers(headers));
}
const classified = (status: number, type: string, message: string, headers?: Record<string, string>) => classifyModelError(apiError(status, type, message, headers));

describe('by status', () => {
  test.each([
    [408, 'timeout_error', 'http_408'],
    [409, 'conflict_error', 'http_409'],
    [429, 'rate_limit_error', 'rate_limited'],
    [500, 'api_error', 'http_500'],
    [502, 'api_error', 'http_502'],
    [503, 'api_error', 'http_503'],
    [504, 'timeout_error', 'http_504'],
    [529, 'overloaded_error', 'overloaded'],
  ])('%i is transient (%s)', (status, type, code) => {
    expect(classified(status, type, 'x').error).toMatchObject({ error_class: 'transient', code, retryable: true });
  });

  test("400 invalid_request_error is its own permanent code with the API's own message and an unblock hint, not the tool-argument class", () => {
    const { error } = classified(400, 'invalid_request_error', 'Requests which include `tool_use` or `tool_result` blocks must define tools.');
    expect(error).toMatchObject({
      error_class: 'permanent',
      code: 'invalid_request',
      detail: 'Requests which include `tool_use` or `tool_result` blocks must define tools.',
      retryable: false,
    });
    expect(error.hint).toMatch(/setting or a durable-agent bug/);
    expect(error.hint).toMatch(/unblock .*--max-tokens N/);
    expect(error.hint).toMatch(/--model ID/);
  });

  test('400 "prompt is too long" stays resource/context_too_long', () => {
    expect(classified(400, 'invalid_request_error', 'prompt is too long: 210000 tokens > 200000 maximum').error).toMatchObject({ error_class: 'resource', code: 'context_too_long' });
  });

  test('404 on the model is permanent model_not_found with the unblock hint', () => {
    expect(classified(404, 'not_found_error', 'model: claude-nonesuch').error).toMatchObject({
      error_class: 'permanent',
      code: 'model_not_found',
      detail: 'model: claude-nonesuch',
      hint: expect.stringContaining('--model ID'),
    });
  });

  test('413 is resource/request_too_large', () => {
    expect(classified(413, 'request_too_large', 'Request exceeds the maximum size').error).toMatchObject({ error_class: 'resource', code: 'request_too_large' });
  });

  test('401 and 403 are permanent and point at the API key; a spend limit 429 is resource', () => {
    expect(classified(401, 'authentication_error', 'invalid x-api-key').error).toMatchObject({ error_class: 'permanent', code: 'authentication_failed' });
    expect(classified(403, 'permission_error', 'no').error).toMatchObject({ error_class: 'permanent', code: 'permission_denied' });
    expect(classified(429, 'rate_limit_error', 'Your credit balance is too low to access the API').error).toMatchObject({ error_class: 'resource', code: 'spend_limit' });
  });

  test('another 4xx is permanent', () => {
    expect(classified(422, 'invalid_request_error', 'nope').error).toMatchObject({ error_class: 'permanent', code: 'http_422' });
  });
});

describe('by headers', () => {
  test('retry-after-ms wins over retry-after, with millisecond precision', () => {
    expect(classified(429, 'rate_limit_error', 'x', { 'retry-after-ms': '1500', 'retry-after': '9' }).retryAfterMs).toBe(1_500);
    expect(classified(529, 'overloaded_error', 'x', { 'retry-after-ms': '250.4' }).retryAfterMs).toBe(250);
  });

  test('retry-after in seconds', () => {
    expect(classified(503, 'api_error', 'x', { 'retry-after': '7' }).retryAfterMs).toBe(7_000);
  });

  test('retry-after as an HTTP date', () => {
    const at = new Date(Date.now() + 30_000).toUTCString();
    const wait = classified(429, 'rate_limit_error', 'x', { 'retry-after': at }).retryAfterMs!;
    expect(wait).toBeGreaterThan(25_000);
    expect(wait).toBeLessThanOrEqual(30_000);
  });

  test("an unreadable retry-after is ignored (Temporal's backoff applies)", () => {
    expect(classified(429, 'rate_limit_error', 'x', { 'retry-after': 'soon' }).retryAfterMs).toBeUndefined();
  });

  test('x-should-retry: true makes a status that is final by default transient', () => {
    expect(classified(400, 'invalid_request_error', 'x', { 'x-should-retry': 'true', 'retry-after': '2' })).toMatchObject({
      error: { error_class: 'transient', code: 'invalid_request', retryable: true },
      retryAfterMs: 2_000,
    });
  });

  test('x-should-retry: false makes a status that is transient by default final, and drops retry-after', () => {
    const result = classified(503, 'api_error', 'x', { 'x-should-retry': 'false', 'retry-after': '2' });
    expect(result.error).toMatchObject({ error_class: 'permanent', code: 'http_503', retryable: false });
    expect(result.retryAfterMs).toBeUndefined();
  });

  test('a real 429 from the fake over HTTP carries retry-after-ms through the SDK', async () => {
    const api = new FakeMessagesApi();
    await api.start();
    try {
      api.enqueue({ kind: 'error', status: 429, errorType: 'rate_limit_error', message: 'slow down', headers: { 'retry-after-ms': '1234', 'x-should-retry': 'true' } });
      const client = new Anthropic({ apiKey: 'k', baseURL: api.url, maxRetries: 0 });
      const err = await client.messages.create({ model: 'claude-sonnet-5-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Anthropic.RateLimitError);
      expect(classifyModelError(err)).toEqual({
        error: expect.objectContaining({ error_class: 'transient', code: 'rate_limited', detail: 'slow down' }),
        retryAfterMs: 1_234,
      });
    } finally {
      await api.stop();
    }
  });
});

describe('without a status', () => {
  test('an error event mid-stream is classified by its type: overloaded_error is transient', () => {
    const err = new Anthropic.APIError(undefined, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, undefined, new Headers(), 'overloaded_error');
    expect(classifyModelError(err).error).toMatchObject({ error_class: 'transient', code: 'stream_overloaded_error', detail: 'Mid-stream: Overloaded' });
  });

  test('connection errors and timeouts are transient', () => {
    expect(classifyModelError(new Anthropic.APIConnectionError({ message: 'Connection error.' })).error).toMatchObject({ error_class: 'transient', code: 'api_connection' });
    expect(classifyModelError(new Anthropic.APIConnectionTimeoutError()).error).toMatchObject({ error_class: 'transient', code: 'api_timeout' });
  });

  test('a stream that ended early is transient', () => {
    expect(classifyModelError(new Anthropic.AnthropicError('stream ended without producing a Message with role=assistant')).error).toMatchObject({ error_class: 'transient', code: 'stream_cut' });
  });

  test('our own ToolFailure keeps its class', () => {
    expect(classifyModelError(new ToolFailure('transient', 'stream_stalled', 'silent')).error).toMatchObject({ error_class: 'transient', code: 'stream_stalled' });
  });

  test('a body cut off mid-JSON is transient', () => {
    let err: unknown;
    try {
      JSON.parse('{"id":"msg_x","type":"message","content":[{"type":"te');
    } catch (e) {
      err = e;
    }
    expect(classifyModelError(err).error).toMatchObject({ error_class: 'transient', code: 'truncated_response' });
  });
});
