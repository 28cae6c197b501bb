/**
 * The agents of the random families (random-families.ts), in process or in a `durable-agent worker`
 * process (`--agents` this file, FAMILY_* environment) that a test SIGKILLs: a payer, a payer that
 * asks first, and a lead that delegates to a clerk who pays. Their services write every effect to
 * one file, so effects made by a worker that died are counted like the others.
 */
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { defineAgent, type AgentDefinition } from '../../src/agents/define-agent';
import { defineTool, type ToolContext } from '../../src/tools/define-tool';
import { answer, callTool } from './harness';

/** The root a member's id starts with (`fam<seed>-<8 hex>`): forks, rewinds and children extend it. */
export function familyOfTask(taskId: string): string {
  return /^fam\d+-[0-9a-f]{8}/.exec(taskId)?.[0] ?? taskId;
}

interface EffectLine {
  root: string;
  intent: string;
  /** The idempotency key a credit was made under: the service makes one credit per key. */
  key?: string;
}

/** What the services did, per family, in one append-only file: one line per effect. */
export class EffectLog {
  constructor(readonly file: string) {}

  record(line: EffectLine): void {
    // One short line per write with O_APPEND: lines of several processes never interleave.
    appendFileSync(this.file, `${JSON.stringify(line)}\n`);
  }

  private lines(root: string): EffectLine[] {
    if (!existsSync(this.file)) return [];
    return readFileSync(this.file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as EffectLine)
      .filter((l) => l.root === root);
  }

  effectsOf(root: string, intent: string): number {
    const lines = this.lines(root).filter((l) => l.intent === intent);
    // A credit is one effect per key (the service answers a repeated key with its first outcome).
    return intent.startsWith('credit:') ? new Set(lines.map((l) => l.key)).size : lines.length;
  }

  intents(root: string): string[] {
    return [...new Set(this.lines(root).map((l) => l.intent))];
  }
}

export interface FamilyAgentsOptions {
  log: EffectLog;
  /** The clerk's scripted model file. */
  clerkScript: string;
  /**
   * While this file exists, a write that just took effect writes `<file>.holding` and holds its
   * reply: the worst moment for a SIGKILL (the effect is made, its claim is still pending).
   */
  holdFile?: string;
}

export function clerkTurns() {
  return [callTool('pay', { ref: 'P-1' }), answer('paid')];
}

export function familyAgents({ log, clerkScript, holdFile }: FamilyAgentsOptions): AgentDefinition[] {
  const afterEffect = async (ctx: ToolContext) => {
    if (!holdFile || !existsSync(holdFile)) return;
    writeFileSync(`${holdFile}.holding`, ctx.workflowId);
    while (existsSync(holdFile) && !ctx.signal.aborted) await new Promise((r) => setTimeout(r, 50));
  };
  const pay = defineTool({
    name: 'pay',
    description: 'Pay an invoice. Not idempotent: each call pays.',
    input: z.object({ ref: z.string().min(1) }),
    output: z.object({ paid: z.string() }),
    effect: 'write',
    idempotent: false,
    timeoutMs: 60_000,
    run: async ({ ref }, ctx) => {
      log.record({ root: familyOfTask(ctx.workflowId), intent: `pay:${ref}` });
      await afterEffect(ctx);
      return { paid: ref };
    },
  });
  const credit = defineTool({
    name: 'credit',
    description: 'Credit an account. Idempotent: the service answers a repeated key with its first outcome.',
    input: z.object({ ref: z.string().min(1) }),
    output: z.object({ credited: z.string() }),
    effect: 'write',
    idempotent: true,
    timeoutMs: 60_000,
    run: async ({ ref }, ctx) => {
      log.record({ root: familyOfTask(ctx.workflowId), intent: `credit:${ref}`, key: ctx.idempotencyKey });
      await afterEffect(ctx);
      return { credited: ref };
    },
  });
  const clerk = defineAgent({
    name: 'clerk',
    description: 'pays what it is told',
    system: 'You pay.',
    tools: [pay],
    policy: { write: 'allow' },
    model: { provider: 'scripted', script: clerkScript },
  });
  return [
    defineAgent({ name: 'payer', system: 'You pay.', tools: [pay, credit], policy: { write: 'allow' } }),
    defineAgent({ name: 'cautious', system: 'You pay, asking first.', tools: [pay, credit], policy: { write: 'confirm' } }),
    defineAgent({ name: 'lead', system: 'You delegate.', tools: [], subagents: [clerk] }),
    clerk,
  ];
}

/** The agents on a harness: their effect log and the clerk's script in its folder (a worker process is given both). */
export function familyFixture(h: { tmpDir: string; script(turns: ReturnType<typeof clerkTurns>): string }, holdFile?: string) {
  const log = new EffectLog(path.join(h.tmpDir, 'family-effects.jsonl'));
  const clerkScript = h.script(clerkTurns());
  return { log, clerkScript, agents: familyAgents({ log, clerkScript, ...(holdFile ? { holdFile } : {}) }) };
}

/** For `durable-agent worker --agents`: the same agents, from FAMILY_EFFECTS, FAMILY_CLERK_SCRIPT and FAMILY_HOLD. */
export default function familyAgentsFromEnvironment(): AgentDefinition[] {
  const { FAMILY_EFFECTS, FAMILY_CLERK_SCRIPT, FAMILY_HOLD } = process.env;
  if (!FAMILY_EFFECTS || !FAMILY_CLERK_SCRIPT) throw new Error('family-agents: FAMILY_EFFECTS and FAMILY_CLERK_SCRIPT must be set');
  return familyAgents({ log: new EffectLog(FAMILY_EFFECTS), clerkScript: FAMILY_CLERK_SCRIPT, ...(FAMILY_HOLD ? { holdFile: FAMILY_HOLD } : {}) });
}
