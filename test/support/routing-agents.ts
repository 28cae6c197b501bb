/**
 * One small agent per worker process, named by ROUTING_AGENT (loaded by `durable-agent worker
 * --agents`): its one read tool answers with the agent's name and the process id, so a test can see
 * which worker served each call.
 */
import { z } from 'zod';
import { defineAgent, type AgentDefinition } from '../../src/agents/define-agent';
import { defineTool } from '../../src/tools/define-tool';

export function routingAgent(name: string): AgentDefinition {
  const whoServes = defineTool({
    name: 'who_serves',
    description: 'Says which agent and which worker process answered.',
    input: z.object({}),
    output: z.object({ agent: z.string(), pid: z.number() }),
    effect: 'read',
    idempotent: true,
    timeoutMs: 10_000,
    run: async () => ({ agent: name, pid: process.pid }),
  });
  return defineAgent({ name, system: `You are ${name}.`, tools: [whoServes] });
}

export default function routingAgents(): AgentDefinition[] {
  const name = process.env.ROUTING_AGENT;
  if (!name) throw new Error('ROUTING_AGENT names the agent this module exports');
  return [routingAgent(name)];
}
