/**
 * Agents for the prompt-cache resume checks (test/support/cache-resumes.ts): `pager` asks for two
 * pages per turn in parallel (the first answers last, so results arrive out of order), and `lead`
 * reads the same way and hands one part to `pager` as a sub-agent. Both are Claude through the
 * worker's model settings (the strict fake). Loaded in-process and by `durable-agent worker --agents`
 * (which reads CACHE_AGENT_PAGE_CHARS).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { defineAgent, type AgentDefinition } from '../../src/agents/define-agent';
import { defineTool } from '../../src/tools/define-tool';
import { pageText } from './long-agents';

export const PAGER_SYSTEM = 'Reads a document two pages at a time and reports what it found.';
export const LEAD_SYSTEM = 'Reads a document two pages at a time, hands a part to the pager, and reports.';

export function createCacheAgents(pageChars = 6_000): AgentDefinition[] {
  const tools = [
    defineTool({
      name: 'read_page',
      description: 'Reads one page of the document.',
      input: z.object({ offset: z.number().int().min(0) }),
      output: z.object({ offset: z.number(), text: z.string() }),
      effect: 'read',
      idempotent: true,
      timeoutMs: 30_000,
      // Slower than read_note: the turn's second call finishes first, so the order results arrive in
      // is not the order the model asked for them (the conversation must keep the model's order).
      run: async ({ offset }) => {
        await sleep(40);
        return { offset, text: pageText(offset, pageChars) };
      },
    }),
    defineTool({
      name: 'read_note',
      description: 'Reads the margin note of one page.',
      input: z.object({ offset: z.number().int().min(0) }),
      output: z.object({ offset: z.number(), text: z.string() }),
      effect: 'read',
      idempotent: true,
      timeoutMs: 30_000,
      run: async ({ offset }) => ({ offset, text: pageText(offset + 10_000, pageChars / 2) }),
    }),
  ];
  const pager = defineAgent({ name: 'pager', description: 'reads pages of a document', system: PAGER_SYSTEM, tools, maxTurns: 500, model: { provider: 'anthropic' } });
  const lead = defineAgent({ name: 'lead', system: LEAD_SYSTEM, tools, subagents: [pager], maxTurns: 500, model: { provider: 'anthropic' } });
  return [pager, lead];
}

export default function cacheAgents(): AgentDefinition[] {
  return createCacheAgents(Number(process.env.CACHE_AGENT_PAGE_CHARS ?? 6_000));
}
