/**
 * The agent of the upgrade-at-continue-as-new test, loaded by `durable-agent worker --agents` in the
 * v1 worker that gets killed and by the in-process workers of both builds. Its one tool reads a
 * step; a step asked to hold writes `held-N` into the workspace and waits there until the test
 * writes `release`, so a promote can land while a task is mid-loop.
 */
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { defineAgent, type AgentDefinition } from '../../src/agents/define-agent';
import type { AgentsModuleEnvironment } from '../../src/cli/load-agents';
import { defineTool } from '../../src/tools/define-tool';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export default function upgradeAgents({ workspaceDir }: AgentsModuleEnvironment): AgentDefinition[] {
  const step = defineTool({
    name: 'step',
    description: 'Reads step n; with hold, waits until the operator releases it.',
    input: z.object({ n: z.number().int(), hold: z.boolean().optional() }),
    output: z.object({ n: z.number().int() }),
    effect: 'read',
    idempotent: true,
    cacheTtlMs: 0,
    timeoutMs: 120_000,
    // A held call must outlive its worker's SIGKILL as an activity the next worker retries (a local one would start over).
    local: false,
    run: async ({ n, hold }, ctx) => {
      if (!hold) return { n };
      writeFileSync(path.join(workspaceDir, `held-${n}`), String(ctx.attempt));
      while (!existsSync(path.join(workspaceDir, 'release'))) {
        if (ctx.signal.aborted) throw new Error('step cancelled while held');
        ctx.heartbeat();
        await sleep(50);
      }
      return { n };
    },
  });
  return [defineAgent({ name: 'stepper', system: 'Reads steps.', tools: [step], budgets: { turns: 100, toolCalls: 100 } })];
}
