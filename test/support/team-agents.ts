/**
 * A lead agent with sub-agents, for the sub-agent tests: `researcher` has the demo's tools (orders and
 * workspace; deleting and cancelling wait for a person) and plays its own scripted model. Loaded
 * in-process and by `durable-agent worker --agents` (which reads ORDERS_URL and RESEARCHER_SCRIPT).
 */
import { createDemoAgent } from '../../src/demo/demo-agent';
import { defineAgent, type AgentDefinition } from '../../src/agents/define-agent';
import type { AgentsModuleEnvironment } from '../../src/cli/load-agents';

export interface TeamOptions {
  ordersUrl?: string | undefined;
  /** The researcher's scripted model. */
  researcherScript?: string | undefined;
  maxConcurrentSubagents?: number;
}

export default function teamAgents({ workspaceDir }: AgentsModuleEnvironment, options: TeamOptions = {}): AgentDefinition[] {
  const ordersUrl = options.ordersUrl ?? process.env.ORDERS_URL;
  const script = options.researcherScript ?? process.env.RESEARCHER_SCRIPT;
  if (!ordersUrl || !script) throw new Error('team-agents: ORDERS_URL and RESEARCHER_SCRIPT must be set');
  const demo = createDemoAgent({ workspaceDir, ordersUrl });
  const researcher = defineAgent({
    name: 'researcher',
    description: 'looks up orders and files',
    system: 'You look things up and report back.',
    tools: demo.tools,
    ...(demo.policy ? { policy: demo.policy } : {}),
    model: { provider: 'scripted', script },
  });
  const lead = defineAgent({
    name: 'lead',
    system: 'You split work between sub-agents and report the result.',
    tools: [],
    subagents: [researcher],
    ...(options.maxConcurrentSubagents ? { maxConcurrentSubagents: options.maxConcurrentSubagents } : {}),
  });
  return [lead, researcher];
}
