/**
 * Two recordings of the same task side by side (the recorded run and a replay): turn by turn, the
 * tool calls with their arguments, the approvals asked, the outcome, tokens and cost. The structured
 * form is what --json prints and what eval checks; the text form is for a terminal.
 */
import { argumentsLine } from '../client/arguments-view';
import { callsOf, type RecordedToolCall, type RecordingBody } from './recording';

export interface CallView {
  tool: string;
  input: unknown;
  /** approved / denied / expired / undecided when a person was asked. */
  approval?: string;
  /** The error code the model read, when the call failed. */
  error?: string;
}

export interface TrajectorySummary {
  taskId: string;
  model: string;
  outcome: string;
  turns: number;
  toolCalls: number;
  approvalsAsked: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  /** The last assistant text. */
  answer: string;
}

export interface TurnDiff {
  turn: number;
  recorded?: CallView[];
  replayed?: CallView[];
  /** Same tools with the same arguments in the same order. */
  same: boolean;
}

export interface TrajectoryDiff {
  recorded: TrajectorySummary;
  replayed: TrajectorySummary;
  turns: TurnDiff[];
  /** Turns whose calls differ, outcome, counts: empty when the replay did what the recording did. */
  differences: string[];
}

function errorCode(call: RecordedToolCall): string | undefined {
  if (!call.result?.isError) return undefined;
  try {
    const parsed = JSON.parse(call.result.content) as { error?: { code?: unknown } };
    return typeof parsed.error?.code === 'string' ? parsed.error.code : 'error';
  } catch {
    return 'error';
  }
}

const view = (call: RecordedToolCall): CallView => {
  const error = errorCode(call);
  return { tool: call.tool, input: call.input, ...(call.approval ? { approval: call.approval.decision } : {}), ...(error ? { error } : {}) };
};

/** The outcome in one word: the task's own outcome when it completed, else Temporal's status. */
export function outcomeOf(recording: Pick<RecordingBody, 'outcome'>): string {
  const o = recording.outcome;
  if (o.status === 'completed') return o.outcome ?? 'completed';
  return o.error ? `${o.status}: ${o.error.code}` : o.status;
}

export function summarize(recording: RecordingBody): TrajectorySummary {
  const calls = callsOf(recording);
  return {
    taskId: recording.taskId,
    model: recording.turns[0]?.model ?? recording.manifest.model.provider,
    outcome: outcomeOf(recording),
    turns: recording.turns.length,
    toolCalls: calls.length,
    approvalsAsked: calls.filter((c) => c.approval).length,
    inputTokens: recording.usage.inputTokens,
    outputTokens: recording.usage.outputTokens,
    costUsd: recording.costUsd,
    answer: recording.outcome.text ?? recording.turns.at(-1)?.text ?? '',
  };
}

const callKey = (c: CallView) => `${c.tool}(${argumentsLine(c.input, 100_000)})`;

export function diffTrajectories(recorded: RecordingBody, replayed: RecordingBody): TrajectoryDiff {
  const turns: TurnDiff[] = [];
  const count = Math.max(recorded.turns.length, replayed.turns.length);
  for (let i = 0; i < count; i++) {
    const a = recorded.turns[i]?.toolCalls.map(view);
    const b = replayed.turns[i]?.toolCalls.map(view);
    const same = !!a && !!b && a.length === b.length && a.every((c, j) => callKey(c) === callKey(b[j]!));
    turns.push({ turn: i + 1, ...(a ? { recorded: a } : {}), ...(b ? { replayed: b } : {}), same });
  }
  const r = summarize(recorded);
  const p = summarize(replayed);
  const differences: string[] = [];
  for (const t of turns) if (!t.same) differences.push(`turn ${t.turn}: calls differ`);
  for (const field of ['outcome', 'turns', 'toolCalls', 'approvalsAsked'] as const) {
    if (r[field] !== p[field]) differences.push(`${field}: ${r[field]} -> ${p[field]}`);
  }
  return { recorded: r, replayed: p, turns, differences };
}

const LEFT = 50;
/** The right column is the line's end: wider, so a terminal of 160 columns shows it whole. */
const RIGHT = 90;

function cell(text: string, width: number): string {
  const one = text.replace(/\s+/g, ' ');
  return one.length > width ? `${one.slice(0, width - 1)}…` : one.padEnd(width);
}

/** A call in `width` characters: the arguments are shortened first, so the approval and error stay in sight. */
function callsText(calls: CallView[] | undefined, width: number): string[] {
  if (!calls) return ['-'];
  if (!calls.length) return ['(answer, no tools)'];
  return calls.map((c) => {
    const suffix = `${c.approval ? ` [${c.approval}]` : ''}${c.error ? ` !${c.error}` : ''}`;
    const room = Math.max(12, width - c.tool.length - suffix.length - 1);
    const args = argumentsLine(c.input, 1_000).replace(/\s+/g, ' ');
    return `${c.tool} ${args.length > room ? `${args.slice(0, room - 1)}…` : args}${suffix}`;
  });
}

/** The diff as text: one row per turn (a row per call), then the totals, `|` between the two runs. */
export function renderDiff(diff: TrajectoryDiff): string {
  const lines: string[] = [];
  const row = (label: string, left: string, right: string, mark = ' ') => lines.push(`${mark} ${cell(label, 10)} ${cell(left, LEFT)} | ${right.replace(/\s+/g, ' ')}`);
  row('', `recorded ${diff.recorded.taskId} (${diff.recorded.model})`, `replay ${diff.replayed.taskId} (${diff.replayed.model})`);
  for (const t of diff.turns) {
    const left = callsText(t.recorded, LEFT);
    const right = callsText(t.replayed, RIGHT);
    for (let i = 0; i < Math.max(left.length, right.length); i++) row(i === 0 ? `turn ${t.turn}` : '', left[i] ?? '', right[i] ?? '', t.same ? ' ' : '*');
  }
  const r = diff.recorded;
  const p = diff.replayed;
  const total = (label: string, a: string, b: string) => row(label, a, b, a === b ? ' ' : '*');
  total('outcome', r.outcome, p.outcome);
  total('turns', String(r.turns), String(p.turns));
  total('tool calls', String(r.toolCalls), String(p.toolCalls));
  total('approvals', String(r.approvalsAsked), String(p.approvalsAsked));
  total('tokens', `${r.inputTokens} in / ${r.outputTokens} out`, `${p.inputTokens} in / ${p.outputTokens} out`);
  total('cost', `$${r.costUsd.toFixed(4)}`, `$${p.costUsd.toFixed(4)}`);
  total('answer', r.answer, p.answer);
  lines.push(diff.differences.length ? `${diff.differences.length} difference(s): ${diff.differences.join('; ')}` : 'no difference in calls, outcome or counts');
  return lines.join('\n');
}
