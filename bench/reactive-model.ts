/**
 * The model used by the cost-of-failure benchmark, for the naive loop and the engine alike. It
 * behaves like a typical LLM agent: follows a hint it can read (allowed values, next page, "don't
 * retry"), and otherwise retries the same call, up to the 17 repeats of the seed's trace. With
 * `ignoresHints` it retries whatever it is told, the worst case the guards exist for.
 */
import type { Model, ModelRequest } from '../src/models/model';
import type { ModelTurn, ToolResultBlock } from '../src/protocol/messages';

export interface Call {
  name: string;
  input: Record<string, unknown>;
}

export interface ReactiveModelOptions {
  firstCall: Call;
  /** Call the same read once more after it succeeds (a "let me double-check"). */
  doubleCheck?: boolean;
  ignoresHints?: boolean;
  maxRepeats?: number;
}

export class ReactiveModel implements Model {
  readonly id = 'reactive-benchmark-model';
  calls = 0;
  constructor(private readonly options: ReactiveModelOptions) {}

  async complete({ messages }: ModelRequest): Promise<ModelTurn> {
    this.calls += 1;
    const assistantTurns = messages.filter((m) => m.role === 'assistant');
    const lastCall = lastToolCall(assistantTurns.at(-1)?.content);
    const last = messages.at(-1);
    const result = last?.role === 'user' && Array.isArray(last.content) ? (last.content.find((b) => b.type === 'tool_result') as ToolResultBlock | undefined) : undefined;
    const next = !lastCall ? this.options.firstCall : this.next(lastCall, result?.content ?? '', assistantTurns.length);
    if (!next) return turn([{ type: 'text', text: 'Here is what I found.' }]);
    return turn([{ type: 'tool_use', id: `toolu_b${assistantTurns.length + 1}`, name: next.name, input: next.input }]);
  }

  private next(call: Call, content: string, turnsSoFar: number): Call | undefined {
    const repeat = turnsSoFar < (this.options.maxRepeats ?? 17) ? call : undefined;
    let parsed: Record<string, any> | undefined;
    try {
      parsed = JSON.parse(content);
    } catch {
      return repeat; // Unreadable output (truncated, a raw error): "let me try that again".
    }
    if (this.options.ignoresHints && (parsed?.error || content.startsWith('Error'))) return repeat;
    const error = parsed?.error;
    if (error) {
      const allowed = /expected one of (.*)$/.exec(String(error.detail ?? ''));
      if (allowed) {
        const values = [...allowed[1]!.matchAll(/"([^"]+)"/g)].map((m) => m[1]!);
        const wrong = String(call.input.status ?? '');
        const fixed = values.find((v) => v.slice(0, 4) === wrong.slice(0, 4)) ?? values[0];
        return { ...call, input: { ...call.input, status: fixed } };
      }
      return undefined; // A classified error with a hint: stop and report.
    }
    const page = parsed?.data ?? parsed;
    if (parsed?.note?.error_class === 'semantic') return undefined;
    if (page?.has_more) return { ...call, input: { ...call.input, page: Number(call.input.page ?? 1) + 1 } };
    if (this.options.doubleCheck && !parsed?.ledger && turnsSoFar === 1) return call;
    return undefined;
  }
}

function lastToolCall(content: unknown): Call | undefined {
  if (!Array.isArray(content)) return undefined;
  const use = content.find((b: { type: string }) => b.type === 'tool_use');
  return use ? { name: use.name, input: use.input } : undefined;
}

function turn(content: ModelTurn['content']): ModelTurn {
  const stopReason = content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn';
  return { content, stopReason, usage: { inputTokens: 0, outputTokens: 0 }, model: 'reactive-benchmark-model' };
}
