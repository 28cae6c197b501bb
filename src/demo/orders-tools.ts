/**
 * The orders tools: `search_orders` (a paginated read with the seed's semantic checks), its archive
 * fallback, and two writes that send the task's idempotency key, so a retry after a crash is safe.
 */
import { z } from 'zod';
import { HttpStatusError } from '../errors/tool-failure';
import { defineTool, type SemanticIssue, type ToolContext, type ToolDefinition } from '../tools/define-tool';
import { ORDER_STATUSES } from '../testing/orders-service';

const order = z.object({
  id: z.string(),
  customer_id: z.string(),
  total_cents: z.number().int(),
  status: z.enum(ORDER_STATUSES),
});

export const searchOrdersOutput = z.object({
  orders: z.array(order),
  page: z.number().int(),
  has_more: z.boolean(),
  source: z.literal('archive').optional(),
});

const searchInput = z.object({
  customer_id: z.string().regex(/^C-\d+$/, 'a customer id like "C-9921"'),
  status: z.enum(ORDER_STATUSES).optional(),
  include_cancelled: z.boolean().default(true),
  page: z.number().int().min(1).default(1),
});
type SearchInput = z.infer<typeof searchInput>;

const orderId = z.string().regex(/^O-\d+$/, 'an order id like "O-0007"');
const refundInput = z.object({ order_id: orderId, amount_cents: z.number().int().min(1), reason: z.string().min(1) });
const refundOutput = z.object({ refund_id: z.string(), order_id: z.string(), amount_cents: z.number().int(), refunded_total_cents: z.number().int() });
const cancelInput = z.object({ order_id: orderId, reason: z.string().min(1) });
const cancelOutput = z.object({ order_id: z.string(), status: z.literal('cancelled') });
type SearchOutput = z.infer<typeof searchOrdersOutput>;

/**
 * One HTTP call to the orders service: the body as raw text, on purpose (the guard parses and
 * validates it, so a truncated body is caught there), or an HttpStatusError the classifier reads.
 */
export async function requestText(url: URL, init: RequestInit): Promise<string> {
  const res = await fetch(url, init);
  const body = await res.text();
  if (!res.ok) throw new HttpStatusError(res.status, body, Object.fromEntries(res.headers), url.pathname);
  return body;
}

export function createOrdersTools(baseUrl: string, options: { timeoutMs?: number } = {}): ToolDefinition<any, any>[] {
  const search = (path: string) => async (input: SearchInput, ctx: ToolContext) => {
    const url = new URL(path, baseUrl);
    url.searchParams.set('customer_id', input.customer_id);
    if (input.status) url.searchParams.set('status', input.status);
    url.searchParams.set('include_cancelled', String(input.include_cancelled));
    url.searchParams.set('page', String(input.page));
    return requestText(url, { signal: ctx.signal });
  };
  const write = (action: 'refund' | 'cancel') => async (input: { order_id: string }, ctx: ToolContext) => {
    const url = new URL(`/orders/${encodeURIComponent(input.order_id)}/${action}`, baseUrl);
    return requestText(url, {
      method: 'POST',
      // The same key on every attempt of this call, across workers: the service answers a repeat
      // with its first answer instead of refunding twice. A key it first saw with other arguments
      // is refused with 422 idempotency_key_reused, which classify() makes a permanent error, so a
      // repeated key can never pass off the first refund's answer as this one's.
      // The body is the whole validated input, so the service compares every parameter.
      headers: { 'content-type': 'application/json', 'idempotency-key': ctx.idempotencyKey },
      body: JSON.stringify(input),
      signal: ctx.signal,
    });
  };
  return [
    defineTool({
      name: 'refund_order',
      description: 'Refund part or all of an order to the customer. Amount in cents; the reason is shown to the customer.',
      input: refundInput,
      output: refundOutput,
      effect: 'write',
      idempotent: true,
      timeoutMs: options.timeoutMs ?? 10_000,
      run: write('refund'),
    }),
    defineTool({
      name: 'cancel_order',
      description: 'Cancel an order that has not shipped yet (status "placed"). This cannot be undone.',
      input: cancelInput,
      output: cancelOutput,
      effect: 'destructive',
      idempotent: true,
      timeoutMs: options.timeoutMs ?? 10_000,
      run: write('cancel'),
    }),
    defineTool({
      name: 'search_orders',
      description: "Search a customer's orders, one page at a time. When has_more is true, call again with the next page.",
      input: searchInput,
      output: searchOrdersOutput,
      effect: 'read',
      idempotent: true,
      timeoutMs: options.timeoutMs ?? 10_000,
      fallbacks: ['search_orders_archive'],
      run: search('/orders'),
      check: checkPage,
    }),
    defineTool({
      name: 'search_orders_archive',
      description: 'Search the orders archive (a read replica, up to a day behind). Use it when search_orders is unavailable.',
      input: searchInput,
      output: searchOrdersOutput,
      effect: 'read',
      idempotent: true,
      timeoutMs: options.timeoutMs ?? 10_000,
      run: search('/archive/orders'),
      check: checkPage,
    }),
  ];
}

function checkPage(out: SearchOutput, input: SearchInput): SemanticIssue | undefined {
  if (out.has_more && out.page === 1 && out.orders.length === 0) {
    return {
      errorClass: 'semantic',
      code: 'empty_first_page',
      detail: 'has_more=true but page 1 returned 0 orders.',
      hint: `The query matched nothing on its first page; check the customer_id format (got "${input.customer_id}") or drop the status filter.`,
    };
  }
  if (out.has_more) {
    return {
      errorClass: 'partial_data',
      code: 'more_pages_available',
      detail: `Page ${out.page} returned ${out.orders.length} orders; more exist.`,
      hint: `Call again with page=${out.page + 1} to continue.`,
    };
  }
  return undefined;
}
