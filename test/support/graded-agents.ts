/**
 * The graded-outcome tests' agents (graded-outcomes.test.ts), loaded in process and by a
 * `durable-agent worker --agents` process that is SIGKILLed while its grader call is in flight.
 * Claude through the strict fake: the worker reads ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL.
 */
import { z } from 'zod';
import { defineAgent, type AgentDefinition } from '../../src/agents/define-agent';
import { defineTool } from '../../src/tools/define-tool';

export const GRADED_MODEL = 'claude-opus-4-5';
export const AGENT_SYSTEM = 'SUPPORT-AGENT. You answer questions about orders, citing what the tools return.';
export const RUBRIC = 'The answer must state the order status exactly as lookup_order returned it, and the delivery date.';

const lookupOrder = defineTool({
  name: 'lookup_order',
  description: 'Look up an order by id.',
  input: z.object({ order_id: z.string() }),
  output: z.object({ order_id: z.string(), status: z.string(), delivery: z.string() }),
  effect: 'read',
  idempotent: true,
  run: async ({ order_id }) => ({ order_id, status: 'shipped', delivery: '2026-12-02' }),
});

/** Read by the agent but not named as evidence: the grader must never see it. */
const internalNotes = defineTool({
  name: 'internal_notes',
  description: 'Internal notes about a customer.',
  input: z.object({ order_id: z.string() }),
  output: z.object({ note: z.string() }),
  effect: 'read',
  idempotent: true,
  run: async () => ({ note: 'PRIVATE-NOTE: customer prefers email' }),
});

export function gradedAgent(maxAttempts: number, name = `graded${maxAttempts}`): AgentDefinition {
  return defineAgent({
    name,
    system: AGENT_SYSTEM,
    tools: [lookupOrder, internalNotes],
    model: { provider: 'anthropic', model: GRADED_MODEL },
    outcome: { rubric: RUBRIC, evidence: ['tool:lookup_order'], maxAttempts },
  });
}

export default function gradedAgents(): AgentDefinition[] {
  return [gradedAgent(1), gradedAgent(2), gradedAgent(3)];
}
