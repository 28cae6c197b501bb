/**
 * What each recorded call answered, keyed by tool and canonical arguments, turned back into what a
 * tool returns: an output, a flagged output, or a classified failure. The tool_result text the
 * model read is parsed back through the wrappers the workflow adds (an approval note, a ledger
 * note, a fallback's answer), so a replayed call gets the tool's own answer and the replay's
 * workflow adds its own notes again.
 */
import { canonicalJson } from '../protocol/canonical-json';
import { isToolError, type ToolError } from '../protocol/tool-error';
import { callsOf, type RecordingBody } from './recording';

export type RecordedAnswer = { kind: 'ok'; output: unknown } | { kind: 'flagged'; output: unknown; issue: ToolError } | { kind: 'failed'; error: ToolError };

export const answerKey = (tool: string, input: unknown): string => `${tool}\u0000${canonicalJson(input ?? {}, { strict: false })}`;

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The tool's own answer inside a tool_result text, with the answers of fallbacks it names. */
export function answersIn(tool: string, content: string, isError: boolean): { tool: string; answer: RecordedAnswer }[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(content);
  } catch {
    // Not JSON: a tool that returned text the guard did not parse (never, today); keep it as said.
    return [{ tool, answer: { kind: 'ok', output: content } }];
  }
  if (isObject(parsed) && isToolError(parsed.error) && Object.keys(parsed).length === 1) {
    const { budget_left: _left, ...error } = parsed.error as ToolError & { budget_left?: unknown };
    return [{ tool, answer: { kind: 'failed', error } }];
  }
  if (isObject(parsed) && ('approval' in parsed || 'ledger' in parsed) && 'result' in parsed && Object.keys(parsed).length === 2) {
    return answersIn(tool, JSON.stringify(parsed.result), isError);
  }
  if (isObject(parsed) && typeof parsed.used_fallback === 'string' && isToolError(parsed.primary_error) && 'result' in parsed) {
    return [{ tool, answer: { kind: 'failed', error: parsed.primary_error } }, ...answersIn(parsed.used_fallback, JSON.stringify(parsed.result), false)];
  }
  if (isObject(parsed) && 'data' in parsed && isToolError(parsed.note) && Object.keys(parsed).length === 2) {
    return [{ tool, answer: { kind: 'flagged', output: parsed.data, issue: parsed.note } }];
  }
  return [{ tool, answer: { kind: 'ok', output: parsed } }];
}

/** Answers per key, in the order the task got them: a call repeated with the same arguments gets the next one, then the last again. */
export class RecordedAnswers {
  private readonly byKey = new Map<string, RecordedAnswer[]>();
  private readonly served = new Map<string, number>();
  /** The argument lists each tool was called with, for a not_recorded error that says what the recording holds. */
  private readonly inputsByTool = new Map<string, unknown[]>();

  constructor(recording: Pick<RecordingBody, 'turns'>, alsoKeyedBy: (tool: string, input: unknown) => unknown = (_t, i) => i) {
    for (const call of callsOf(recording)) {
      if (!call.result) continue;
      // A call refused before it ran (a denial, an expired approval) holds no answer of the tool.
      if (call.approval && call.approval.decision !== 'approved') continue;
      for (const { tool, answer } of answersIn(call.tool, call.result.content, call.result.isError)) {
        const keys = new Set([answerKey(tool, call.input), answerKey(tool, alsoKeyedBy(tool, call.input))]);
        for (const key of keys) {
          if (!this.byKey.has(key)) this.byKey.set(key, []);
          this.byKey.get(key)!.push(answer);
        }
        if (!this.inputsByTool.has(tool)) this.inputsByTool.set(tool, []);
        this.inputsByTool.get(tool)!.push(call.input);
      }
    }
  }

  /**
   * The answer for a call, or undefined when the recording holds none. The same toolUseId always
   * gets the same answer (a retried activity must not advance to the next one).
   */
  private readonly byUse = new Map<string, RecordedAnswer>();
  answer(tool: string, input: unknown, toolUseId: string): RecordedAnswer | undefined {
    const known = this.byUse.get(toolUseId);
    if (known) return known;
    const key = answerKey(tool, input);
    const list = this.byKey.get(key);
    if (!list?.length) return undefined;
    const n = this.served.get(key) ?? 0;
    this.served.set(key, n + 1);
    const answer = list[Math.min(n, list.length - 1)]!;
    this.byUse.set(toolUseId, answer);
    return answer;
  }

  recordedInputs(tool: string): unknown[] {
    return this.inputsByTool.get(tool) ?? [];
  }
}
