import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { classify } from '../../src/errors/classify';
import { HttpStatusError } from '../../src/errors/tool-failure';
import { outcomeUnknown } from '../../src/protocol/outcome-unknown';
import { toolError } from '../../src/protocol/tool-error';
import { retryAfterMs } from '../../src/errors/retry-after';
import { ToolFailure } from '../../src/errors/tool-failure';

const withCode = (code: string) => Object.assign(new Error(`boom ${code}`), { code });

test.each([
  ['ECONNRESET', 'transient'],
  ['ECONNREFUSED', 'transient'],
  ['ENOTFOUND', 'transient'],
  ['ETIMEDOUT', 'transient'],
  ['ENOENT', 'permanent'],
  ['EACCES', 'permanent'],
  ['ENOSPC', 'resource'],
  ['ENOMEM', 'resource'],
])('Node error code %s is classified %s', (code, errorClass) => {
  expect(classify(withCode(code)).error.error_class).toBe(errorClass);
});

test('a socket error wrapped by fetch ("fetch failed") is classified by its cause', () => {
  const err = new TypeError('fetch failed', { cause: withCode('ECONNREFUSED') });
  expect(classify(err).error).toMatchObject({ error_class: 'transient', code: 'connection_refused' });
});

test.each([
  [429, 'transient'],
  [500, 'transient'],
  [503, 'transient'],
  [529, 'transient'],
  [400, 'model'],
  [401, 'permanent'],
  [404, 'permanent'],
  [413, 'resource'],
])('HTTP %i is classified %s', (status, errorClass) => {
  expect(classify({ status, message: `status ${status}` }).error.error_class).toBe(errorClass);
});

test('typed errors win over message text: a 404 whose body says "rate limit" is still not found', () => {
  expect(classify({ status: 404, message: 'rate limit docs not found' }).error.code).toBe('not_found');
});

test('message text is the last resort', () => {
  expect(classify(new Error('Service temporarily unavailable')).error.error_class).toBe('transient');
  expect(classify(new Error('context length exceeded')).error.error_class).toBe('resource');
  expect(classify(new Error('something odd')).error).toMatchObject({ error_class: 'permanent', code: 'tool_failed' });
});

test('a ToolFailure keeps the class, code, hint and retry-after its author gave', () => {
  const c = classify(new ToolFailure('transient', 'busy', 'busy', 'wait', 1500));
  expect(c).toEqual({ error: expect.objectContaining({ error_class: 'transient', code: 'busy', hint: 'wait' }), retryAfterMs: 1500 });
});

test('Retry-After is read as seconds, as an HTTP date, and from retry-after-ms', () => {
  expect(retryAfterMs({ 'Retry-After': '3' })).toBe(3000);
  expect(retryAfterMs(new Headers({ 'retry-after-ms': '250' }))).toBe(250);
  expect(retryAfterMs({ 'retry-after': new Date(10_000).toUTCString() }, 4_000)).toBe(6_000);
  expect(retryAfterMs({ 'retry-after': 'soon' })).toBeUndefined();
});

describe('a failure after the request was sent is told apart from one before it (outcome unknown)', () => {
  test.each([
    ['ECONNRESET', 'connection_reset'],
    ['EPIPE', 'connection_reset'],
    ['UND_ERR_SOCKET', 'connection_reset'],
    ['UND_ERR_HEADERS_TIMEOUT', 'response_timeout'],
    ['ETIMEDOUT', 'connection_timeout'],
  ])('%s after sending is transient %s, says the request may have reached the service, and its outcome is unknown', (nodeCode, code) => {
    const { error } = classify(new TypeError('fetch failed', { cause: withCode(nodeCode) }));
    expect(error).toMatchObject({ error_class: 'transient', code, detail: expect.stringContaining('may have reached the service') });
    expect(outcomeUnknown(error)).toBe(true);
  });

  test.each([
    ['ECONNREFUSED', 'connection_refused'],
    ['ENOTFOUND', 'dns_failure'],
    ['EAI_AGAIN', 'dns_failure'],
    ['UND_ERR_CONNECT_TIMEOUT', 'connect_timeout'],
    ['EHOSTUNREACH', 'network_unreachable'],
  ])('%s before sending is transient %s and its outcome is known (nothing was done)', (nodeCode, code) => {
    const { error } = classify(new TypeError('fetch failed', { cause: withCode(nodeCode) }));
    expect(error).toMatchObject({ error_class: 'transient', code, detail: expect.stringContaining('never reached') });
    expect(outcomeUnknown(error)).toBe(false);
  });

  test('"socket hang up" without a code is a connection reset with an unknown outcome', () => {
    const { error } = classify(new Error('socket hang up'));
    expect(error).toMatchObject({ error_class: 'transient', code: 'connection_reset' });
    expect(outcomeUnknown(error)).toBe(true);
  });

  test.each([500, 502, 503, 504])('HTTP %i is transient and its outcome is unknown', (status) => {
    const { error } = classify(new HttpStatusError(status, '{"error":"bad gateway"}'));
    expect(error).toMatchObject({ error_class: 'transient', code: `http_${status}`, detail: expect.stringContaining('may have taken effect') });
    expect(outcomeUnknown(error)).toBe(true);
  });

  test.each([400, 404, 409, 422, 429])('HTTP %i leaves no doubt about the outcome', (status) => {
    expect(outcomeUnknown(classify(new HttpStatusError(status, '{}')).error)).toBe(false);
  });

  test('a timeout is outcome unknown whatever its class; other classes are not', () => {
    expect(outcomeUnknown(toolError('transient', 'timeout', 'x'))).toBe(true);
    expect(outcomeUnknown(toolError('permanent', 'http_500', 'a tool author called it permanent'))).toBe(false);
    expect(outcomeUnknown(toolError('transient', 'http_429', 'x'))).toBe(false);
  });
});

describe('real sockets on loopback', () => {
  let server: http.Server;
  let url: string;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      if (req.url === '/gateway') {
        res.writeHead(502, { 'content-type': 'application/json' }).end('{"error":"bad_gateway"}');
        return;
      }
      // Reads the whole request, then drops the connection without answering: the request arrived.
      req.resume();
      req.on('end', () => req.socket.destroy());
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const post = (target: string) => fetch(target, { method: 'POST', body: '{"amount_cents":100}', headers: { 'content-type': 'application/json' } });

  test('a server that took the request and hung up gives connection_reset (outcome unknown)', async () => {
    const err = await post(`${url}/refund`).then(
      () => undefined,
      (e: unknown) => e,
    );
    const { error } = classify(err);
    expect(error).toMatchObject({ error_class: 'transient', code: 'connection_reset' });
    expect(outcomeUnknown(error)).toBe(true);
  });

  test('a port nobody listens on gives connection_refused (nothing was sent)', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const err = await post(`http://127.0.0.1:${port}/refund`).then(
      () => undefined,
      (e: unknown) => e,
    );
    const { error } = classify(err);
    expect(error).toMatchObject({ error_class: 'transient', code: 'connection_refused' });
    expect(outcomeUnknown(error)).toBe(false);
  });

  test('a real 502 answer is http_502 with an unknown outcome', async () => {
    const res = await post(`${url}/gateway`);
    const { error } = classify(new HttpStatusError(res.status, await res.text(), Object.fromEntries(res.headers)));
    expect(error.code).toBe('http_502');
    expect(outcomeUnknown(error)).toBe(true);
  });
});
