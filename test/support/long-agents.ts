/**
 * An agent whose one read tool returns tens of KB per call, distinct for every offset: the size of
 * results that real tasks reach. Loaded in-process and by `durable-agent worker --agents`.
 */
import { z } from 'zod';
import { defineAgent, type AgentDefinition } from '../../src/agents/define-agent';
import { defineTool } from '../../src/tools/define-tool';

/** Deterministic text of `size` characters for `offset`, different for every offset. */
export function pageText(offset: number, size: number): string {
  const line = `page ${offset}: the quick brown fox jumps over the lazy dog ${offset * 7919}\n`;
  return line.repeat(Math.ceil(size / line.length)).slice(0, size);
}

export function createLongAgent(resultChars = 40_000, options: { name?: string; memory?: boolean } = {}): AgentDefinition {
  const bigRead = defineTool({
    name: 'big_read',
    description: 'Reads one page of a large document.',
    input: z.object({ offset: z.number().int().min(0) }),
    output: z.object({ offset: z.number(), text: z.string() }),
    effect: 'read',
    idempotent: true,
    timeoutMs: 30_000,
    run: async ({ offset }) => ({ offset, text: pageText(offset, resultChars) }),
  });
  return defineAgent({
    name: options.name ?? 'long',
    system: 'Reads a large document page by page.',
    tools: [bigRead],
    maxTurns: 2_000,
    budgets: { toolCalls: 5_000 },
    ...(options.memory ? { memory: true } : {}),
  });
}

export default function longAgents(): AgentDefinition[] {
  return [createLongAgent(Number(process.env.LONG_AGENT_RESULT_CHARS ?? 40_000))];
}
