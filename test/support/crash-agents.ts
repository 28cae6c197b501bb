/**
 * The agents of the crash matrix, loaded by `durable-agent worker --agents` in the worker that gets
 * killed and by the in-process worker that replaces it. Besides the demo agent there is one whose
 * refund client predates idempotency keys (a write the engine must not retry blindly), one whose
 * search runs as a local activity, and one whose MCP server holds its tool listing while a file exists
 * (the run's describeAgent waits on it).
 */
import path from 'node:path';
import { z } from 'zod';
import { createDemoAgent } from '../../src/demo/demo-agent';
import { defineAgent, type AgentDefinition } from '../../src/agents/define-agent';
import type { AgentsModuleEnvironment } from '../../src/cli/load-agents';
import { requestText } from '../../src/demo/orders-tools';
import { defineTool } from '../../src/tools/define-tool';

/** While `hold` exists, the held-describe agent's MCP server holds its tool listing; it writes `listing` when asked. */
export const heldListingFiles = (workspaceDir: string) => ({ hold: path.join(workspaceDir, 'hold-listing'), listing: path.join(workspaceDir, 'listing-started') });

/** `ordersUrl`: given in-process; a worker process reads it from ORDERS_URL, set by the test that spawns it. */
export default function crashAgents({ workspaceDir }: AgentsModuleEnvironment, ordersUrl = process.env.ORDERS_URL): AgentDefinition[] {
  if (!ordersUrl) throw new Error('crash-agents: ORDERS_URL is not set');
  const demo = createDemoAgent({ workspaceDir, ordersUrl });
  const legacyRefund = defineTool({
    name: 'legacy_refund',
    description: 'Refund an order through the old client, which sends no idempotency key.',
    input: z.object({ order_id: z.string(), amount_cents: z.number().int().min(1) }),
    output: z.object({ refund_id: z.string() }).loose(),
    effect: 'write',
    idempotent: false,
    timeoutMs: 30_000,
    // The same request as refund_order, without the Idempotency-Key header.
    run: (input, ctx) =>
      requestText(new URL(`/orders/${input.order_id}/refund`, ordersUrl), {
        method: 'POST',
        body: JSON.stringify(input),
        headers: { 'content-type': 'application/json' },
        signal: ctx.signal,
      }),
  });
  // The same legacy refund, with a way to look (issue 49): it beats the order's refunded total before
  // it sends, and a later attempt compares the total now with that.
  const orderRefunded = async (orderId: string, signal: AbortSignal): Promise<number> =>
    (JSON.parse(await requestText(new URL(`/orders/${orderId}`, ordersUrl), { signal })) as { refunded_cents: number }).refunded_cents;
  const reconciledRefund = defineTool({
    name: 'reconciled_refund',
    description: 'Refund an order through the old client (no idempotency key); a lost attempt is checked against the order before it is sent again.',
    input: z.object({ order_id: z.string(), amount_cents: z.number().int().min(1) }),
    output: z.object({ refund_id: z.string() }).loose(),
    effect: 'write',
    idempotent: false,
    timeoutMs: 30_000,
    run: async (input, ctx) => {
      ctx.heartbeat({ refundedBefore: await orderRefunded(input.order_id, ctx.signal) });
      return requestText(new URL(`/orders/${input.order_id}/refund`, ordersUrl), {
        method: 'POST',
        body: JSON.stringify(input),
        headers: { 'content-type': 'application/json' },
        signal: ctx.signal,
      });
    },
    reconcile: async (input, ctx) => {
      const before = (ctx.previousHeartbeat as { refundedBefore?: unknown } | undefined)?.refundedBefore;
      if (typeof before !== 'number') return { happened: 'unknown', evidence: `no record of ${input.order_id}'s refunded total before the earlier attempt` };
      const now = await orderRefunded(input.order_id, ctx.signal);
      const seen = `${input.order_id} shows ${now} cents refunded, ${before} before the earlier attempt`;
      if (now >= before + input.amount_cents) return { happened: true, output: { refund_id: 'found by reconcile', refunded_cents: now }, evidence: `${seen}: the refund went through` };
      return { happened: false, evidence: `${seen}: no refund since` };
    },
  });
  const [searchOrders] = demo.tools.filter((t) => t.name === 'search_orders');
  const [refundOrder] = demo.tools.filter((t) => t.name === 'refund_order');
  // The same keyed refund with a single attempt: one dead worker spends its whole retry budget.
  const refundOnce = defineTool({ ...refundOrder!, name: 'refund_once', maxAttempts: 1, fallbacks: [] });
  // The same search, run as a local activity: nothing on the task queue to time out, only the workflow task.
  const localSearch = defineTool({ ...searchOrders!, name: 'search_orders_local', local: true, fallbacks: [] });
  const held = heldListingFiles(workspaceDir);
  return [
    demo,
    defineAgent({ name: 'legacy', system: 'Refunds through an old client.', tools: [legacyRefund, reconciledRefund], policy: { write: 'allow' } }),
    defineAgent({ name: 'local', system: 'Searches orders locally.', tools: [localSearch] }),
    defineAgent({
      name: 'held-describe',
      system: 'Pings.',
      tools: [],
      mcpServers: [
        {
          name: 'held',
          command: process.execPath,
          args: [path.join(__dirname, 'held-listing-mcp-server.mjs')],
          env: { HOLD_FILE: held.hold, LISTING_FILE: held.listing },
          trust: 'trusted',
        },
      ],
    }),
    defineAgent({ name: 'once', system: 'Refunds with one attempt per call.', tools: [refundOnce], policy: { write: 'allow' } }),
  ];
}
