/** The orders service's writes honour Idempotency-Key the way payment APIs do, so a retried write changes nothing twice. */
import { OrdersService } from '../../src/testing/orders-service';
import { createOrdersTools } from '../../src/demo/orders-tools';
import { guardedCall } from '../../src/tools/guarded-call';
import type { ToolContext } from '../../src/tools/define-tool';
import { waitFor } from '../support/processes';

let orders: OrdersService;
beforeEach(async () => {
  orders = new OrdersService();
  await orders.start();
});
afterEach(() => orders.stop());

const post = (path: string, body: unknown, key?: string) =>
  fetch(new URL(path, orders.url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
    body: JSON.stringify(body),
  });

// The first request is held until the test lets it go (releaseHeld), never for a number of milliseconds.
const HELD = { kind: 'slow' as const, delayMs: 10 * 60_000 };
/** Resolves once the service has taken the write with this key in hand (it is then in flight). */
const inFlight = (key: string) => waitFor(`the write with key ${key} to arrive`, () => orders.writes.some((w) => w.idempotency_key === key) || undefined);

const ctx = (idempotencyKey: string): ToolContext => ({
  idempotencyKey,
  workflowId: 'wf',
  toolUseId: 'toolu_1',
  attempt: 1,
  signal: new AbortController().signal,
  heartbeat: () => undefined,
});

test('a refund repeated with the same key gets the first answer back and refunds once', async () => {
  const first = await post('/orders/O-0001/refund', { amount_cents: 100 }, 'k-1');
  const again = await post('/orders/O-0001/refund', { amount_cents: 100 }, 'k-1');
  expect(again.headers.get('idempotent-replayed')).toBe('true');
  expect(await again.json()).toEqual(await first.json());
  expect(orders.effects).toHaveLength(1);
  expect(orders.writes.map((w) => w.replayed)).toEqual([false, true]);
});

test('a repeat that arrives while the first request is still being handled gets 409 with Retry-After, and the refund happens once', async () => {
  orders.inject(HELD);
  const first = post('/orders/O-0001/refund', { amount_cents: 100 }, 'k-busy');
  await inFlight('k-busy');
  const repeat = await post('/orders/O-0001/refund', { amount_cents: 100 }, 'k-busy');
  expect(repeat.status).toBe(409);
  expect(repeat.headers.get('retry-after')).toBe('1');
  orders.releaseHeld();
  expect((await first).status).toBe(200);
  const later = await post('/orders/O-0001/refund', { amount_cents: 100 }, 'k-busy');
  expect(later.headers.get('idempotent-replayed')).toBe('true');
  expect(orders.effects).toHaveLength(1);
});

test('the refund tool reads that 409 as transient (to be retried), not as a failure for the model', async () => {
  const refund = createOrdersTools(orders.url).find((t) => t.name === 'refund_order')!;
  orders.inject(HELD);
  // The same body the tool sends: with another body the key would be refused as reused.
  const first = post('/orders/O-0002/refund', { order_id: 'O-0002', amount_cents: 100, reason: 'x' }, 'wf:toolu_9');
  await inFlight('wf:toolu_9');
  const repeat = await guardedCall(refund, { order_id: 'O-0002', amount_cents: 100, reason: 'x' }, ctx('wf:toolu_9'));
  expect(repeat).toMatchObject({ kind: 'failed', error: { error_class: 'transient', code: 'conflict_retry_later' } });
  orders.releaseHeld();
  expect((await first).status).toBe(200);
});

test('without a key, each refund is a new refund (what a non-idempotent client gets)', async () => {
  await post('/orders/O-0001/refund', { amount_cents: 100 });
  await post('/orders/O-0001/refund', { amount_cents: 100 });
  expect(orders.effects).toHaveLength(2);
});

test('a refund beyond the order total is refused with 422 and changes nothing', async () => {
  const res = await post('/orders/O-0001/refund', { amount_cents: 10_000_000 }, 'k-2');
  expect(res.status).toBe(422);
  expect(await res.json()).toMatchObject({ detail: expect.stringContaining('totals') });
  expect(orders.effects).toHaveLength(0);
});

test('cancelling twice with different keys conflicts (409); with the same key it is answered as before', async () => {
  expect((await post('/orders/O-0004/cancel', {}, 'a')).status).toBe(200);
  expect((await post('/orders/O-0004/cancel', {}, 'a')).status).toBe(200);
  const other = await post('/orders/O-0004/cancel', {}, 'b');
  expect(other.status).toBe(409);
  expect(orders.effects).toEqual([expect.objectContaining({ kind: 'cancel', order_id: 'O-0004', idempotency_key: 'a' })]);
});

test('a shipped order cannot be cancelled', async () => {
  const res = await post('/orders/O-0003/cancel', {}, 'c');
  expect(res.status).toBe(409);
  expect(await res.json()).toMatchObject({ detail: 'Order O-0003 is shipped; only placed orders can be cancelled' });
});

test('the refund_order tool sends the call idempotency key, so the same call twice refunds once', async () => {
  const refund = createOrdersTools(orders.url).find((t) => t.name === 'refund_order')!;
  const input = { order_id: 'O-0002', amount_cents: 250, reason: 'damaged' };
  const first = await guardedCall(refund, input, ctx('wf:toolu_1'));
  const retried = await guardedCall(refund, input, ctx('wf:toolu_1'));
  expect(first).toMatchObject({ kind: 'ok', output: { order_id: 'O-0002', amount_cents: 250 } });
  expect(retried).toEqual(first);
  expect(orders.effects).toHaveLength(1);
  expect(orders.writes.map((w) => w.idempotency_key)).toEqual(['wf:toolu_1', 'wf:toolu_1']);
});

test('cancel_order on an order that is not placed fails as a model error the model can read', async () => {
  const cancel = createOrdersTools(orders.url).find((t) => t.name === 'cancel_order')!;
  const result = await guardedCall(cancel, { order_id: 'O-0003', reason: 'x' }, ctx('wf:toolu_2'));
  expect(result).toMatchObject({ kind: 'failed', error: { detail: expect.stringContaining('only placed orders') } });
});

test('the same key with a different body is refused with 422 idempotency_key_reused and changes nothing', async () => {
  const first = await post('/orders/O-0001/refund', { amount_cents: 100, reason: 'late' }, 'k-reuse');
  expect(first.status).toBe(200);
  const other = await post('/orders/O-0001/refund', { amount_cents: 900, reason: 'late' }, 'k-reuse');
  expect(other.status).toBe(422);
  expect(other.headers.get('idempotent-replayed')).toBeNull();
  expect(await other.json()).toMatchObject({
    error: 'idempotency_key_reused',
    detail: expect.stringContaining('Keys for idempotent requests can only be used with the same parameters they were first used with'),
  });
  const otherOrder = await post('/orders/O-0002/refund', { amount_cents: 100, reason: 'late' }, 'k-reuse');
  expect(otherOrder.status).toBe(422);
  expect(orders.effects).toHaveLength(1);
  expect(orders.writes.map((w) => w.key_reused ?? false)).toEqual([false, true, true]);
});

test('the same key with the same parameters in another key order is the same request: the first answer is replayed', async () => {
  const first = await post('/orders/O-0001/refund', { amount_cents: 100, reason: 'late' }, 'k-order');
  const again = await post('/orders/O-0001/refund', { reason: 'late', amount_cents: 100 }, 'k-order');
  expect(again.status).toBe(200);
  expect(again.headers.get('idempotent-replayed')).toBe('true');
  expect(await again.json()).toEqual(await first.json());
  expect(orders.effects).toHaveLength(1);
});

test('a key binds its parameters even when its first request failed: a retry with other arguments is refused', async () => {
  orders.inject({ kind: 'unavailable' });
  expect((await post('/orders/O-0001/refund', { amount_cents: 100 }, 'k-failed')).status).toBe(503);
  expect((await post('/orders/O-0001/refund', { amount_cents: 200 }, 'k-failed')).status).toBe(422);
  expect((await post('/orders/O-0001/refund', { amount_cents: 100 }, 'k-failed')).status).toBe(200);
  expect(orders.effects).toEqual([expect.objectContaining({ amount_cents: 100 })]);
});

test('a repeat with another body while the first is in flight is refused as reused (422), not told to retry (409)', async () => {
  orders.inject(HELD);
  const first = post('/orders/O-0001/refund', { amount_cents: 100 }, 'k-busy-other');
  await inFlight('k-busy-other');
  expect((await post('/orders/O-0001/refund', { amount_cents: 300 }, 'k-busy-other')).status).toBe(422);
  orders.releaseHeld();
  expect((await first).status).toBe(200);
  expect(orders.effects).toHaveLength(1);
});

test('the refund tool reports a key reused with other arguments as a permanent idempotency_key_reused error, never as the first answer', async () => {
  const refund = createOrdersTools(orders.url).find((t) => t.name === 'refund_order')!;
  const first = await guardedCall(refund, { order_id: 'O-0002', amount_cents: 250, reason: 'damaged' }, ctx('wf:toolu_1'));
  expect(first).toMatchObject({ kind: 'ok' });
  const second = await guardedCall(refund, { order_id: 'O-0002', amount_cents: 400, reason: 'damaged' }, ctx('wf:toolu_1'));
  expect(second).toMatchObject({
    kind: 'failed',
    error: {
      error_class: 'permanent',
      code: 'idempotency_key_reused',
      retryable: false,
      detail: expect.stringContaining('already used for a request with other arguments'),
    },
  });
  expect(orders.effects).toHaveLength(1);
});
