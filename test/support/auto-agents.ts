/**
 * The demo agent in `auto` mode (docs/auto-permissions.md): writes and destructive calls go to the
 * model classifier. Loaded by `durable-agent worker --agents` in the worker a test kills, and in
 * process by the worker that replaces it.
 */
import { createDemoAgent } from '../../src/demo/demo-agent';
import type { AgentDefinition } from '../../src/agents/define-agent';
import type { AgentsModuleEnvironment } from '../../src/cli/load-agents';

/** `ordersUrl`: given in-process; a worker process reads it from ORDERS_URL, set by the test that spawns it. */
export default function autoAgents({ workspaceDir }: AgentsModuleEnvironment, ordersUrl = process.env.ORDERS_URL): AgentDefinition[] {
  if (!ordersUrl) throw new Error('auto-agents: ORDERS_URL is not set');
  return [createDemoAgent({ workspaceDir, ordersUrl, policy: { write: 'auto', destructive: 'auto', autoRules: ['Files under private/ are never deleted.'] } })];
}
