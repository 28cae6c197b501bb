/**
 * The agent every overhead contestant runs: a zero-latency model that calls one zero-latency tool
 * per turn for N turns, then answers. With nothing to wait for, a turn's time is the engine's own.
 */
import { z } from 'zod';
import { defineAgent, type AgentDefinition } from '../src/agents/define-agent';
import type { Model, ModelRequest } from '../src/models/model';
import type { ModelTurn } from '../src/protocol/messages';
import { defineTool } from '../src/tools/define-tool';

export const BENCH_AGENT = 'bench';
/** The same agent with its tool declared `local: true`. */
export const BENCH_AGENT_LOCAL_TOOL = 'bench-local-tool';
/** The same agent with its tool declared `local: false`: every call through the task queue. */
export const BENCH_AGENT_REGULAR_TOOL = 'bench-regular-tool';

/** `local` as the tool declares it; unset (the default) lets the engine run it locally once it proved fast. */
export function createBenchAgent(options: { local?: boolean } = {}): AgentDefinition {
  const echo = defineTool({
    name: 'echo',
    description: 'Returns its argument.',
    input: z.object({ n: z.number().int() }),
    output: z.object({ echoed: z.number().int() }),
    effect: 'read',
    idempotent: true,
    // Every call is new: no ledger answers, so each turn really runs its tool.
    cacheTtlMs: 0,
    ...(options.local !== undefined ? { local: options.local } : {}),
    run: async ({ n }) => ({ echoed: n }),
  });
  const name = options.local === undefined ? BENCH_AGENT : options.local ? BENCH_AGENT_LOCAL_TOOL : BENCH_AGENT_REGULAR_TOOL;
  return defineAgent({ name, system: 'Call echo until told to stop.', tools: [echo], policy: { write: 'allow' } });
}

/**
 * Answers turn i with `callsPerTurn` calls of echo while i < turns, then with text. `callTimes` records
 * performance.now() at each call: a turn is the span between two model calls (model, tool, and
 * whatever the engine does between them), measured the same way for every contestant.
 */
export class EchoModel implements Model {
  readonly id = 'bench:echo';
  readonly callTimes: number[] = [];
  constructor(
    private readonly turns: number,
    /** Tool calls per turn: the difference between 1 and 3 gives the cost of one more tool call. */
    private readonly callsPerTurn = 1,
  ) {}

  async complete(request: ModelRequest): Promise<ModelTurn> {
    this.callTimes.push(performance.now());
    const turn = nextTurn(request);
    const content: ModelTurn['content'] =
      turn < this.turns
        ? Array.from({ length: this.callsPerTurn }, (_, k) => ({
            type: 'tool_use' as const,
            id: `toolu_echo_${turn}_${k}`,
            name: 'echo',
            input: { n: turn * this.callsPerTurn + k },
          }))
        : [{ type: 'text', text: `done after ${this.turns} calls` }];
    return { content, stopReason: turn < this.turns ? 'tool_use' : 'end_turn', usage: { inputTokens: 0, outputTokens: 0 }, model: this.id };
  }

  /** Turn durations in ms: model call i to model call i+1. */
  turnDurations(): number[] {
    return this.callTimes.slice(1).map((t, i) => t - this.callTimes[i]!);
  }
}

/**
 * The turn a request asks for: one past the turn of the last echo result in the conversation (0 when
 * there is none). Read from the tool_use ids, not by counting messages: the engine trims long
 * conversations, and one model may serve many tasks at once (the throughput bench).
 */
function nextTurn(request: ModelRequest): number {
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const content = request.messages[i]!.content;
    if (!Array.isArray(content)) continue;
    for (let j = content.length - 1; j >= 0; j--) {
      const block = content[j] as { type: string; tool_use_id?: string };
      const match = block.type === 'tool_result' ? /^toolu_echo_(\d+)_/.exec(block.tool_use_id ?? '') : null;
      if (match) return Number(match[1]) + 1;
    }
  }
  return 0;
}
