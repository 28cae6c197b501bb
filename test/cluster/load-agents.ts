/**
 * The agents the cluster tests and benchmarks load into `durable-agent worker --agents` processes:
 * - `bench`: one zero-latency echo tool (bench/bench-agent.ts), driven by a scripted model, for
 *   throughput: what is measured is the engine and the server, not a tool;
 * - `refunds`: the demo agent's search_orders and refund_order with writes allowed (no person in the
 *   loop), for the SIGKILL-under-load check: refund_order sends the workflow's idempotency key, so a
 *   refund retried on the surviving worker must not take effect twice.
 */
import { createDemoAgent } from '../../src/demo/demo-agent';
import { defineAgent, type AgentDefinition } from '../../src/agents/define-agent';
import type { AgentsModuleEnvironment } from '../../src/cli/load-agents';
import { createBenchAgent } from '../../bench/bench-agent';

export const REFUNDS_AGENT = 'refunds';

/** The cluster's orders service arrives as ORDERS_URL (scripts/cluster/cluster.ts sets it): --agents takes no demo settings. */
export default function loadAgents({ workspaceDir }: AgentsModuleEnvironment, ordersUrl = process.env.ORDERS_URL): AgentDefinition[] {
  if (!ordersUrl) throw new Error('test/cluster/load-agents.ts: ORDERS_URL is not set');
  const demo = createDemoAgent({ workspaceDir, ordersUrl });
  // search_orders falls back to search_orders_archive: the agent needs both.
  const tools = demo.tools.filter((t) => ['search_orders', 'search_orders_archive', 'refund_order'].includes(t.name));
  return [createBenchAgent(), defineAgent({ name: REFUNDS_AGENT, system: 'Look the order up, then refund it.', tools, policy: { write: 'allow' } })];
}
