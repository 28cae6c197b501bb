/**
 * What delegation costs per turn (issue 26): a lead task that hands 10 parts to a sub-agent at once
 * (10 child tasks of 20 turns, one zero-latency tool call each) beside a single 20-turn task of the
 * same agent, and beside the same 10 tasks started by hand at once (no parent). The model and the
 * tool answer at once, so a turn's time is the engine's and the server's own.
 */
import { defineAgent } from '../src/agents/define-agent';
import type { Model, ModelRequest } from '../src/models/model';
import type { ModelTurn } from '../src/protocol/messages';
import { createBenchAgent, EchoModel } from './bench-agent';
import type { Harness } from '../test/support/harness';
import { summarize, type Summary } from './stats';

export const CHILDREN = 10;
export const CHILD_TURNS = 20;
const ROUNDS = 3;

/** The echo model, with each task's model-call times kept apart (keyed by the task's prompt). */
class TimedEcho implements Model {
  readonly id = 'bench:echo';
  readonly times = new Map<string, number[]>();
  private readonly echo = new EchoModel(CHILD_TURNS);
  async complete(request: ModelRequest): Promise<ModelTurn> {
    const first = request.messages[0]?.content;
    const key = typeof first === 'string' ? first : '?';
    this.times.set(key, [...(this.times.get(key) ?? []), performance.now()]);
    return this.echo.complete(request);
  }
  /** Each task's turns: model call i to model call i+1. */
  turnDurations(): number[] {
    return [...this.times.values()].flatMap((t) => t.slice(1).map((at, i) => at - t[i]!));
  }
}

/** The lead's model: turn 0 hands CHILDREN parts to the sub-agent in one turn, then it answers. */
class LeadModel implements Model {
  readonly id = 'bench:lead';
  async complete(request: ModelRequest): Promise<ModelTurn> {
    const first = request.messages.length === 1;
    const content: ModelTurn['content'] = first
      ? Array.from({ length: CHILDREN }, (_, k) => ({
          type: 'tool_use' as const,
          id: `toolu_lead_${k}`,
          name: 'delegate_to_bench',
          input: { task: `part ${k}`, budget: { turns: CHILD_TURNS + 1, toolCalls: CHILD_TURNS + 1 } },
        }))
      : [{ type: 'text', text: 'all parts done' }];
    return { content, stopReason: first ? 'tool_use' : 'end_turn', usage: { inputTokens: 0, outputTokens: 0 }, model: this.id };
  }
}

export interface SubagentsCost {
  children: number;
  childTurns: number;
  rounds: number;
  /** The load average (1, 5, 15 min) before and after. */
  loadAverage: { before: number[]; after: number[] };
  /** One 20-turn task alone: the time of each of its turns. */
  singleTurnMs: Summary;
  /** The lead's 10 children: the time of each of their turns (10 tasks at once). */
  childTurnMs: Summary;
  /** The same 10 tasks started by hand at once, no parent: the time of each of their turns. */
  independentTurnMs: Summary;
  /** Wall time of the whole team task / its children's turns, beside a single task's wall time / its turns. */
  wallPerTurnMs: { single: Summary; team: Summary; independent: Summary };
}

export async function measureSubagents(h: Harness, loadAverage: () => number[]): Promise<SubagentsCost> {
  const before = loadAverage();
  const echo = new TimedEcho();
  const bench = defineAgent({ ...createBenchAgent(), model: { provider: 'custom', name: 'bench-echo' } });
  const lead = defineAgent({ name: 'bench-lead', system: 'Split the work.', tools: [], subagents: [bench], maxConcurrentSubagents: CHILDREN, model: { provider: 'custom', name: 'bench-lead' } });
  const worker = await h.worker([lead, bench], { models: { 'bench-echo': echo, 'bench-lead': new LeadModel() } });
  const single: number[] = [];
  const team: number[] = [];
  const independent: number[] = [];
  const singleTurns: number[] = [];
  const childTurns: number[] = [];
  const independentTurns: number[] = [];
  const timed = async (run: () => Promise<unknown>) => {
    echo.times.clear();
    const start = performance.now();
    await run();
    return { wall: performance.now() - start, turns: echo.turnDurations() };
  };
  const runTask = async (agent: string, prompt: string, budgets = { turns: CHILD_TURNS + 1, toolCalls: CHILD_TURNS + 1 }) => {
    const taskId = h.taskId(agent);
    await h.client.start({ agent, prompt, budgets }, { taskId });
    return h.client.result(taskId);
  };
  await worker.runUntil(async () => {
    // One warm-up of each, unmeasured (the bundle and the connections).
    await runTask('bench', 'warm-up');
    for (let round = 0; round < ROUNDS; round++) {
      const s = await timed(() => runTask('bench', `single ${round}`));
      single.push(s.wall / CHILD_TURNS);
      singleTurns.push(...s.turns);
      const teamId = h.taskId('bench-lead');
      const t = await timed(async () => {
        const budgets = { turns: (CHILD_TURNS + 2) * (CHILDREN + 1), toolCalls: (CHILD_TURNS + 2) * (CHILDREN + 1), toolCallsPerTurn: CHILDREN };
        await h.client.start({ agent: 'bench-lead', prompt: `team ${round}`, budgets }, { taskId: teamId });
        return h.client.result(teamId);
      });
      // Every child ran its 20 turns: a refused call would make the team's per-turn figure a lie.
      const children = (await h.client.status(teamId)).children ?? [];
      if (children.length !== CHILDREN || children.some((c) => c.state !== 'completed' || c.spent?.turns !== CHILD_TURNS + 1)) {
        throw new Error(`the team's children did not all run ${CHILD_TURNS} turns: ${JSON.stringify(children.map((c) => [c.state, c.spent?.turns]))}`);
      }
      team.push(t.wall / (CHILDREN * CHILD_TURNS));
      childTurns.push(...t.turns);
      const i = await timed(() => Promise.all(Array.from({ length: CHILDREN }, (_, k) => runTask('bench', `independent ${round}.${k}`))));
      independent.push(i.wall / (CHILDREN * CHILD_TURNS));
      independentTurns.push(...i.turns);
    }
  });
  return {
    children: CHILDREN,
    childTurns: CHILD_TURNS,
    rounds: ROUNDS,
    loadAverage: { before, after: loadAverage() },
    singleTurnMs: summarize(singleTurns),
    childTurnMs: summarize(childTurns),
    independentTurnMs: summarize(independentTurns),
    wallPerTurnMs: { single: summarize(single), team: summarize(team), independent: summarize(independent) },
  };
}

export function subagentsTable(r: SubagentsCost): string {
  const ratio = (a: number, b: number) => (a / b).toFixed(2);
  return [
    `| per turn (ms) | median | p95 | wall time / turns (median) | vs a single task |`,
    `|---|---|---|---|---|`,
    `| a single ${r.childTurns}-turn task | ${r.singleTurnMs.median} | ${r.singleTurnMs.p95} | ${r.wallPerTurnMs.single.median} | 1.00 |`,
    `| a lead's ${r.children} children at once (${r.childTurns} turns each) | ${r.childTurnMs.median} | ${r.childTurnMs.p95} | ${r.wallPerTurnMs.team.median} | ${ratio(r.wallPerTurnMs.team.median, r.wallPerTurnMs.single.median)} |`,
    `| the same ${r.children} tasks started by hand at once | ${r.independentTurnMs.median} | ${r.independentTurnMs.p95} | ${r.wallPerTurnMs.independent.median} | ${ratio(r.wallPerTurnMs.independent.median, r.wallPerTurnMs.single.median)} |`,
    '',
    `${r.rounds} rounds; load average before ${r.loadAverage.before.map((l) => l.toFixed(2)).join(' / ')}, after ${r.loadAverage.after.map((l) => l.toFixed(2)).join(' / ')} (1 / 5 / 15 min).`,
  ].join('\n');
}
