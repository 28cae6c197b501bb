/**
 * The store agents on durable-agent: `store`, the sub-agent `store_clerk`, and `store_lead`, which
 * may delegate to the clerk. Written as a user of the package would: each store tool a defineTool
 * whose run sends one HTTP request (its idempotency key on writes) and returns the raw body, which
 * the engine's guard parses and validates against the tool's output schema.
 * Loaded in-process and by `durable-agent worker --agents` (STORE_URL says where the store is).
 */
import type { z } from 'zod';
import { defineAgent, type AgentDefinition } from '../../../src/agents/define-agent';
import type { AgentsModuleEnvironment } from '../../../src/cli/load-agents';
import { HttpStatusError } from '../../../src/errors/tool-failure';
import { defineTool, type ToolDefinition } from '../../../src/tools/define-tool';
import {
  APPROVAL_TOOLS,
  callStore,
  CLERK_AGENT,
  CLERK_SYSTEM,
  LEAD_SYSTEM,
  STORE_SYSTEM,
  STORE_TOOL_DESCRIPTIONS,
  STORE_TOOL_INPUTS,
  STORE_TOOL_NAMES,
  STORE_TOOL_OUTPUTS,
  WRITE_TOOLS,
} from '../store-tools';

/** Per call, for every engine alike. */
export const TOOL_TIMEOUT_MS = 3_000;

export const STORE_AGENT = 'store';
export const LEAD_AGENT = 'store_lead';

function storeTools(storeUrl: string): ToolDefinition<any, any>[] {
  return STORE_TOOL_NAMES.map((name) =>
    defineTool({
      name,
      description: STORE_TOOL_DESCRIPTIONS[name],
      input: STORE_TOOL_INPUTS[name] as z.ZodType<any>,
      output: STORE_TOOL_OUTPUTS[name] as z.ZodType<any>,
      effect: APPROVAL_TOOLS.includes(name) ? 'destructive' : WRITE_TOOLS.includes(name) ? 'write' : 'read',
      idempotent: true,
      timeoutMs: TOOL_TIMEOUT_MS,
      run: async (input: Record<string, unknown>, ctx) => {
        const answer = await callStore(storeUrl, name, input, { idempotencyKey: ctx.idempotencyKey, signal: ctx.signal });
        if (answer.status >= 400) throw new HttpStatusError(answer.status, answer.body, answer.headers, name);
        return answer.body;
      },
    }),
  );
}

export function durableStoreAgents(storeUrl: string): AgentDefinition[] {
  const tools = storeTools(storeUrl);
  const limits = { maxTurns: 400, budgets: { toolCalls: 400 } };
  // Writes run freely; cancelling (destructive) waits for a person.
  const policy = { write: 'allow', destructive: 'confirm' } as const;
  const clerk = defineAgent({ name: CLERK_AGENT, description: 'The store clerk: does one piece of store work with the store tools.', system: CLERK_SYSTEM, tools, policy, ...limits });
  return [
    defineAgent({ name: STORE_AGENT, system: STORE_SYSTEM, tools, policy, ...limits }),
    clerk,
    defineAgent({ name: LEAD_AGENT, system: LEAD_SYSTEM, tools, policy, subagents: [clerk], ...limits }),
  ];
}

export default function durableAgentsModule(_env: AgentsModuleEnvironment): AgentDefinition[] {
  const storeUrl = process.env.STORE_URL;
  if (!storeUrl) throw new Error('durable-agents: STORE_URL is not set');
  return durableStoreAgents(storeUrl);
}
