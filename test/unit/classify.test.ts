import { classify } from '../../src/errors/classify';
import { retryAfterMs } from '../../src/errors/retry-after';
import { ToolFailure } from '../../src/errors/tool-failure';

const withCode = (code: string) => Object.assign(new Error(`boom ${code}`), { code });

test.each([
  ['ECONNRESET', 'transient'],
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
  expect(classify(err).error).toMatchObject({ error_class: 'transient', code: 'econnrefused' });
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
