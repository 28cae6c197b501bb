/**
 * A small orders service on loopback that the orders tools call over real HTTP. It can be told to
 * misbehave the way the seeds describe (truncated JSON, 503s, 429 with Retry-After, 403, an empty
 * first page, slow answers, dropped connections), so the guard meets real failures.
 *
 * Its writes (refund, cancel) honour an `Idempotency-Key` header the way payment APIs do: a repeated
 * key with the same request gets the first answer back and changes nothing, so a write retried after
 * a crash is safe; the same key with another request is refused with 422 (Stripe's rule), so a key
 * that repeats by mistake can never answer a different refund with the first one's result.
 * `effects` is the log of what really changed: what tests count as "done exactly once".
 *
 * For the reliability benchmark (bench/reliability/) it also changes shipping addresses, answers one
 * order by id and pages of a long ledger (about 10 KB each), can drift its answers' schema or answer
 * 529, lets a `gate` choose a fault per request by its arrival number (a fault plan that does not
 * depend on timing), and gives `snapshot()`: the store's own final state, which the benchmark compares.
 */
import type http from 'node:http';
import { LoopbackHttpServer } from '../net/loopback-http-server';
import { canonicalJson } from '../protocol/canonical-json';

export const ORDER_STATUSES = ['placed', 'shipped', 'delivered', 'cancelled'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

export interface Address {
  line1: string;
  city: string;
  zip: string;
}

export interface Order {
  id: string;
  customer_id: string;
  total_cents: number;
  status: OrderStatus;
  /** Where a placed order ships; changeable until it ships. */
  address?: Address;
}

export type WriteRoute = 'refund' | 'cancel' | 'address';

export type OrdersFault =
  | { kind: 'unavailable' }
  | { kind: 'rate_limited'; retryAfterSeconds?: number }
  | { kind: 'forbidden' }
  | { kind: 'truncate'; keepBytes?: number }
  | { kind: 'empty_first_page' }
  /** The request is held `delayMs` before it is handled, or until the caller hangs up (then a write does nothing). */
  | { kind: 'slow'; delayMs: number }
  /** Writes only: the change is committed at once, the answer comes `delayMs` later (or never, if the caller hangs up first). */
  | { kind: 'slow_reply'; delayMs: number }
  | { kind: 'drop_connection' }
  /** Writes only: the change is committed, then the connection is reset before any answer. */
  | { kind: 'reset_after_commit' }
  /** 529 with Retry-After, as an overloaded upstream answers. */
  | { kind: 'overloaded'; retryAfterSeconds?: number }
  /**
   * A 200 whose fields were renamed or moved, as an upstream that changed its API answers: a page's
   * `orders` become `results` and each `total_cents` a nested `total.cents`; one order's `status`
   * becomes `state`; a write's answer (committed as usual) renames its id and status fields.
   */
  | { kind: 'schema_drift' };

export const FAULT_KINDS = [
  'unavailable',
  'rate_limited',
  'forbidden',
  'truncate',
  'empty_first_page',
  'slow',
  'slow_reply',
  'drop_connection',
  'reset_after_commit',
  'overloaded',
  'schema_drift',
] as const;

/** One request as a `gate` sees it: its arrival number (from 1, every route counted) and what it is. */
export interface GateRequest {
  n: number;
  kind: 'read' | 'write';
  route: 'live' | 'archive' | 'order' | 'ledger' | WriteRoute;
  order_id?: string;
}

/** The store's final state as the reliability benchmark compares it. */
export interface StoreSnapshot {
  orders: { id: string; status: OrderStatus; address: Address | null; refunded_cents: number }[];
}

export interface WriteRequest {
  route: WriteRoute;
  order_id: string;
  idempotency_key: string | null;
  /** True when the key had been seen: the stored answer was sent and nothing changed. */
  replayed: boolean;
  /** True when the key had been used for another request: refused with 422, nothing changed. */
  key_reused?: boolean;
  at: number;
}

export interface Effect {
  kind: WriteRoute;
  order_id: string;
  amount_cents?: number;
  /** The new address of an `address` effect. */
  address?: Address;
  idempotency_key: string | null;
  at: number;
}

interface StoredAnswer {
  status: number;
  body: unknown;
}

interface QueuedFault {
  fault: OrdersFault;
  remaining: number;
}

export interface OrdersServiceOptions {
  /** Default 5. */
  pageSize?: number;
  orders?: Order[];
  /** Default 110: pages of /ledger (about 10 KB each), for long tasks. */
  ledgerPages?: number;
}

export class OrdersService extends LoopbackHttpServer {
  private readonly faults: QueuedFault[] = [];
  private readonly pageSize: number;
  private readonly orders: Order[];
  private readonly ledgerPages: number;
  /**
   * Chooses a fault for each request by its arrival number, ahead of the queued ones (`inject`):
   * a fault plan that does not depend on timing. Unset: only the queue.
   */
  gate?: (request: GateRequest) => OrdersFault | undefined;
  /** Requests that arrived, every route counted: the `n` the gate is given. */
  arrivals = 0;
  /** Every request to /orders, in order: what tests count as "tool executions". */
  readonly requests: { route: 'live' | 'archive'; customer_id: string | null; status: string | null; page: number; at: number }[] = [];
  /** Every write request that arrived, replayed or not. */
  readonly writes: WriteRequest[] = [];
  /** Every change the service actually made. */
  readonly effects: Effect[] = [];
  private readonly answered = new Map<string, StoredAnswer>();
  /** The request each key was first used with, kept even when that request failed: a key binds its parameters. */
  private readonly firstRequest = new Map<string, string>();
  /** Keys whose first request is still being handled: a repeat must not run the write a second time. */
  private readonly inFlight = new Set<string>();
  private refunds = 0;
  // A request held for a test ends with its caller or on releaseHeld(), so a test that kills the
  // caller, or answers in between, needs no window of seconds.
  private readonly held = new Set<() => void>();

  constructor(options: OrdersServiceOptions = {}) {
    super();
    this.pageSize = options.pageSize ?? 5;
    this.orders = options.orders ?? sampleOrders();
    this.ledgerPages = options.ledgerPages ?? 110;
  }

  /** The store's own state: each order's status, address and refunded total. */
  snapshot(): StoreSnapshot {
    return {
      orders: this.orders.map((o) => ({ id: o.id, status: o.status, address: o.address ?? null, refunded_cents: this.refundedOn(o.id) })),
    };
  }

  private refundedOn(orderId: string): number {
    return this.effects.filter((e) => e.kind === 'refund' && e.order_id === orderId).reduce((sum, e) => sum + (e.amount_cents ?? 0), 0);
  }

  /** The gate's fault for this request, else the queue's. */
  private faultFor(request: Omit<GateRequest, 'n'>, fromQueue: boolean): OrdersFault | undefined {
    const n = ++this.arrivals;
    const gated = this.gate?.({ n, ...request });
    if (gated) return gated;
    return fromQueue ? this.takeFault() : undefined;
  }

  /** Queue a fault for the next `times` requests (default 1; Infinity for every request). */
  inject(fault: OrdersFault, times = 1): this {
    this.faults.push({ fault, remaining: times });
    return this;
  }

  clearFaults(): void {
    this.faults.length = 0;
  }

  /** Ends every `slow`/`slow_reply` hold now: a test lets a held request go once the event it waited for happened. */
  releaseHeld(): void {
    for (const release of [...this.held]) release();
  }

  /** Waits `ms`, or less when the caller hangs up or releaseHeld() is called. */
  private hold(res: http.ServerResponse, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        res.off('close', done);
        this.held.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      res.once('close', done);
      this.held.add(done);
    });
  }

  protected async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const write = /^\/orders\/([^/]+)\/(refund|cancel|address)$/.exec(url.pathname);
    if (write && req.method === 'POST') return this.handleWrite(req, res, decodeURIComponent(write[1]!), write[2] as WriteRoute);
    const one = /^\/orders\/([^/]+)$/.exec(url.pathname);
    if (one && req.method === 'GET') return this.handleOne(req, res, decodeURIComponent(one[1]!));
    if (url.pathname === '/ledger' && req.method === 'GET') return this.handleLedger(req, res, Number(url.searchParams.get('page') ?? '1'));
    const route = url.pathname === '/orders' ? 'live' : url.pathname === '/archive/orders' ? 'archive' : undefined;
    if (req.method !== 'GET' || !route) {
      return send(res, 404, { error: 'not_found', detail: `No route ${req.method} ${url.pathname}` });
    }
    const page = Number(url.searchParams.get('page') ?? '1');
    const customer = url.searchParams.get('customer_id');
    const status = url.searchParams.get('status');
    const includeCancelled = url.searchParams.get('include_cancelled') !== 'false';
    this.requests.push({ route, customer_id: customer, status, page, at: Date.now() });

    // The archive is a read replica: slower to update, but it does not share the live API's faults.
    const fault = this.faultFor({ kind: 'read', route }, route === 'live');
    if (fault && answeredByFault(fault, req, res, 'read')) return;
    switch (fault?.kind) {
      case 'slow':
        await this.hold(res, fault.delayMs);
        break;
      case 'empty_first_page':
        return send(res, 200, { orders: [], page: 1, has_more: true });
    }

    if (!Number.isInteger(page) || page < 1) {
      return send(res, 400, { error: 'bad_request', detail: `page must be a positive integer, got ${url.searchParams.get('page')}` });
    }
    if (status && !(ORDER_STATUSES as readonly string[]).includes(status)) {
      return send(res, 400, { error: 'bad_request', detail: `unknown status "${status}"` });
    }
    const matching = this.orders.filter((o) => (!customer || o.customer_id === customer) && (!status || o.status === status) && (includeCancelled || o.status !== 'cancelled'));
    const start = (page - 1) * this.pageSize;
    const orders = matching.slice(start, start + this.pageSize);
    const drifted = fault?.kind === 'schema_drift';
    sendBody(
      res,
      {
        [drifted ? 'results' : 'orders']: drifted ? orders.map(({ total_cents, ...rest }) => ({ ...rest, total: { cents: total_cents } })) : orders,
        page,
        has_more: start + this.pageSize < matching.length,
        ...(route === 'archive' ? { source: 'archive' } : {}),
      },
      fault,
    );
  }

  /** GET /orders/:id: one order with its refunded total. */
  private async handleOne(req: http.IncomingMessage, res: http.ServerResponse, orderId: string): Promise<void> {
    const fault = this.faultFor({ kind: 'read', route: 'order', order_id: orderId }, true);
    if (fault && answeredByFault(fault, req, res, 'read')) return;
    if (fault?.kind === 'slow') await this.hold(res, fault.delayMs);
    const order = this.orders.find((o) => o.id === orderId);
    if (!order) return send(res, 404, { error: 'not_found', detail: `No order ${orderId}` });
    const { status, ...rest } = order;
    const body = { ...rest, [fault?.kind === 'schema_drift' ? 'state' : 'status']: status, address: order.address ?? null, refunded_cents: this.refundedOn(orderId) };
    sendBody(res, body, fault);
  }

  /** GET /ledger?page=N: one page of about 10 KB of the store's ledger, the same on every call. */
  private async handleLedger(req: http.IncomingMessage, res: http.ServerResponse, page: number): Promise<void> {
    const fault = this.faultFor({ kind: 'read', route: 'ledger' }, true);
    if (fault && answeredByFault(fault, req, res, 'read')) return;
    if (fault?.kind === 'slow') await this.hold(res, fault.delayMs);
    if (!Number.isInteger(page) || page < 1 || page > this.ledgerPages) {
      return send(res, 400, { error: 'bad_request', detail: `page must be 1..${this.ledgerPages}, got ${page}` });
    }
    const entries = Array.from({ length: 80 }, (_, i) => {
      const n = (page - 1) * 80 + i;
      const order = this.orders[n % this.orders.length]!;
      return { entry: n + 1, order_id: order.id, memo: `ledger line ${n + 1} for ${order.id}: settled ${(n * 7_919) % 10_000} cents, batch ${(n * 31) % 977}` };
    });
    sendBody(res, { page, pages: this.ledgerPages, [fault?.kind === 'schema_drift' ? 'lines' : 'entries']: entries }, fault);
  }

  private async handleWrite(req: http.IncomingMessage, res: http.ServerResponse, orderId: string, route: WriteRoute): Promise<void> {
    const key = headerValue(req.headers['idempotency-key']);
    const body = await readJson(req);
    const slot = key ? `${route}:${key}` : undefined;
    if (slot) {
      const request = fingerprint(orderId, body);
      const first = this.firstRequest.get(slot);
      if (first === undefined) this.firstRequest.set(slot, request);
      else if (first !== request) {
        this.writes.push({ route, order_id: orderId, idempotency_key: key, replayed: false, key_reused: true, at: Date.now() });
        return send(res, 422, {
          error: 'idempotency_key_reused',
          detail: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`,
        });
      }
    }
    const stored = slot ? this.answered.get(slot) : undefined;
    this.writes.push({ route, order_id: orderId, idempotency_key: key, replayed: stored !== undefined, at: Date.now() });
    if (stored) {
      res.setHeader('idempotent-replayed', 'true');
      return send(res, stored.status, stored.body);
    }
    if (slot && this.inFlight.has(slot)) {
      res.setHeader('retry-after', '1');
      return send(res, 409, { error: 'idempotency_key_in_use', detail: 'A request with this Idempotency-Key is still being handled; retry later.' });
    }
    if (slot) this.inFlight.add(slot);
    try {
      await this.runWrite(req, res, orderId, route, body, key);
    } finally {
      if (slot) this.inFlight.delete(slot);
    }
  }

  private async runWrite(req: http.IncomingMessage, res: http.ServerResponse, orderId: string, route: WriteRoute, body: unknown, key: string | null): Promise<void> {
    const fault = this.faultFor({ kind: 'write', route, order_id: orderId }, true);
    if (fault && answeredByFault(fault, req, res, 'change')) return;
    if (fault?.kind === 'slow') {
      await this.hold(res, fault.delayMs);
      // A caller that hung up before the write began gets nothing done, like a cancelled request context.
      if (req.socket.destroyed) return;
    }

    const answer = this.applyWrite(route, orderId, body, key);
    if (key && answer.status < 500) this.answered.set(`${route}:${key}`, answer);
    if (fault?.kind === 'slow_reply') await this.hold(res, fault.delayMs);
    if (fault?.kind === 'reset_after_commit') {
      // The change happened; the caller only sees its connection die (ECONNRESET / "socket hang up").
      req.socket.resetAndDestroy();
      return;
    }
    if (req.socket.destroyed) return;
    if (answer.status === 200 && (fault?.kind === 'truncate' || fault?.kind === 'schema_drift')) return sendBody(res, answer.body, fault);
    send(res, answer.status, answer.body);
  }

  private applyWrite(route: WriteRoute, orderId: string, body: unknown, key: string | null): StoredAnswer {
    const order = this.orders.find((o) => o.id === orderId);
    if (!order) return { status: 404, body: { error: 'not_found', detail: `No order ${orderId}` } };
    if (route === 'address') {
      const address = (body as { address?: unknown } | undefined)?.address as Partial<Address> | undefined;
      if (!address || typeof address.line1 !== 'string' || typeof address.city !== 'string' || typeof address.zip !== 'string') {
        return { status: 422, body: { error: 'invalid', detail: 'address must have line1, city and zip' } };
      }
      if (order.status !== 'placed') {
        return { status: 409, body: { error: 'conflict', detail: `Order ${orderId} is ${order.status}; only placed orders can change address` } };
      }
      order.address = { line1: address.line1, city: address.city, zip: address.zip };
      this.effects.push({ kind: 'address', order_id: orderId, address: order.address, idempotency_key: key, at: Date.now() });
      return { status: 200, body: { order_id: orderId, address: order.address } };
    }
    if (route === 'cancel') {
      if (order.status === 'cancelled') return { status: 409, body: { error: 'conflict', detail: `Order ${orderId} is already cancelled` } };
      if (order.status !== 'placed') {
        return { status: 409, body: { error: 'conflict', detail: `Order ${orderId} is ${order.status}; only placed orders can be cancelled` } };
      }
      order.status = 'cancelled';
      this.effects.push({ kind: 'cancel', order_id: orderId, idempotency_key: key, at: Date.now() });
      return { status: 200, body: { order_id: orderId, status: 'cancelled' } };
    }
    const amount = (body as { amount_cents?: unknown } | undefined)?.amount_cents;
    if (!Number.isInteger(amount) || (amount as number) < 1) {
      return { status: 422, body: { error: 'invalid', detail: 'amount_cents must be a positive integer' } };
    }
    const refunded = this.refundedOn(orderId);
    if (refunded + (amount as number) > order.total_cents) {
      return {
        status: 422,
        body: { error: 'invalid', detail: `Order ${orderId} totals ${order.total_cents} cents; ${refunded} already refunded` },
      };
    }
    this.effects.push({ kind: 'refund', order_id: orderId, amount_cents: amount as number, idempotency_key: key, at: Date.now() });
    const refundId = `R-${String(++this.refunds).padStart(4, '0')}`;
    return { status: 200, body: { refund_id: refundId, order_id: orderId, amount_cents: amount, refunded_total_cents: refunded + (amount as number) } };
  }

  private takeFault(): OrdersFault | undefined {
    const next = this.faults[0];
    if (!next) return undefined;
    next.remaining -= 1;
    if (next.remaining <= 0) this.faults.shift();
    return next.fault;
  }
}

/** The faults that replace the answer, alike for reads and writes; true when one did. */
function answeredByFault(fault: OrdersFault, req: http.IncomingMessage, res: http.ServerResponse, verb: 'read' | 'change'): boolean {
  switch (fault.kind) {
    case 'unavailable':
      send(res, 503, { error: 'unavailable', detail: 'orders backend is restarting' });
      return true;
    case 'rate_limited':
      res.setHeader('retry-after', String(fault.retryAfterSeconds ?? 1));
      send(res, 429, { error: 'rate_limited', detail: 'too many requests' });
      return true;
    case 'overloaded':
      res.setHeader('retry-after', String(fault.retryAfterSeconds ?? 1));
      send(res, 529, { error: 'overloaded', detail: 'the orders backend is overloaded' });
      return true;
    case 'forbidden':
      send(res, 403, { error: 'forbidden', detail: `this API key may not ${verb} orders` });
      return true;
    case 'drop_connection':
      req.socket.destroy();
      return true;
    default:
      return false;
  }
}

/** The order and the body with its keys sorted: the same parameters in another order are the same request. */
function fingerprint(orderId: string, body: unknown): string {
  return canonicalJson([orderId, body], { strict: false });
}

function headerValue(value: string | string[] | undefined): string | null {
  const first = Array.isArray(value) ? value[0] : value;
  return first?.trim() ? first.trim() : null;
}

async function readJson(req: http.IncomingMessage): Promise<unknown> {
  let text = '';
  for await (const chunk of req) text += chunk;
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * A 200 answer, as a fault leaves it: `truncate` sends half the document (the seed's undocumented
 * gateway cap), `schema_drift` renames a write answer's fields (reads drift where they are built).
 */
function sendBody(res: http.ServerResponse, body: unknown, fault: OrdersFault | undefined): void {
  let text = JSON.stringify(fault?.kind === 'schema_drift' ? driftedWriteAnswer(body) : body);
  if (fault?.kind === 'truncate') text = text.slice(0, fault.keepBytes ?? Math.floor(text.length / 2));
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(text);
}

/** A write answer with `refund_id`/`order_id`/`status` renamed, as a changed upstream would send it; other bodies as they are. */
function driftedWriteAnswer(body: unknown): unknown {
  if (!body || typeof body !== 'object' || !('order_id' in body)) return body;
  const renames: Record<string, string> = { refund_id: 'id', order_id: 'order', status: 'state', refunded_total_cents: 'refunded' };
  return Object.fromEntries(Object.entries(body).map(([k, v]) => [renames[k] ?? k, v]));
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** Deterministic sample data: customer C-9921 has 12 orders, a few others have some. */
export function sampleOrders(): Order[] {
  const orders: Order[] = [];
  const customers: [string, number][] = [
    ['C-9921', 12],
    ['C-1001', 3],
    ['C-1002', 7],
  ];
  let n = 1;
  for (const [customer, count] of customers) {
    for (let i = 0; i < count; i++, n++) {
      orders.push({
        id: `O-${String(n).padStart(4, '0')}`,
        customer_id: customer,
        total_cents: 1_000 + ((n * 7_919) % 40_000),
        status: ORDER_STATUSES[(n * 3) % ORDER_STATUSES.length]!,
      });
    }
  }
  return orders;
}

/** Parses `kind[:times]` as given on the command line, e.g. `truncate:17` or `unavailable:2`. */
export function parseFaultSpec(spec: string): { fault: OrdersFault; times: number } {
  const [kind, timesText] = spec.split(':');
  if (!(FAULT_KINDS as readonly string[]).includes(kind ?? '')) {
    throw new Error(`Unknown orders fault "${kind}". Known: ${FAULT_KINDS.join(', ')}`);
  }
  const times = timesText === undefined ? 1 : timesText === 'always' ? Infinity : Number(timesText);
  if (!(times >= 1)) throw new Error(`Fault count in "${spec}" must be a positive integer or "always"`);
  const fault = (kind === 'slow' || kind === 'slow_reply' ? { kind, delayMs: 2_000 } : { kind }) as OrdersFault;
  return { fault, times };
}
