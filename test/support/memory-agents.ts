/**
 * An agent that keeps a memory (agent scope), for `durable-agent worker --agents` processes in the
 * memory crash test and the CLI test.
 */
import { defineAgent, type AgentDefinition } from '../../src/agents/define-agent';

export default function memoryAgents(): AgentDefinition[] {
  return [defineAgent({ name: 'rememberer', system: 'You keep notes in /memories.', tools: [], memory: true })];
}
