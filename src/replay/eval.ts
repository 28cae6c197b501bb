/**
 * `eval DIR`: every recording in a folder replayed against the recorded model and prompt, the
 * current agents (an agents module's) or the ones given, each checked against its expectations. A recording `NAME.json` takes them from
 * `NAME.expect.json` beside it; without one, the replay must reach the recorded outcome.
 * Each case ends in one verdict: passed, regressed (the replay ran and broke an expectation), or
 * cannot run (the replay could not be run at all: a script a recording names but does not carry,
 * an unreachable model or server). A case that cannot run says nothing about the agent, so it is
 * never counted as a regression.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { canonicalJson } from '../protocol/canonical-json';
import { callsOf, loadRecording, RecordingError, type Recording } from './recording';
import { replayRecording, type ReplayOptions } from './run-replay';
import { outcomeOf } from './trajectory-diff';
import type { AgentDefinition } from '../agents/define-agent';
import { gradeExpectationSchema, gradeReplay } from './grade-replay';

const callPattern = z.union([z.string().min(1), z.object({ tool: z.string().min(1), input: z.record(z.string(), z.unknown()).optional() }).strict()]);

export const expectationsSchema = z
  .object({
    /** The outcome the replay must end with (answered, max_turns, ...; or a status such as blocked). */
    outcome: z.string().min(1).optional(),
    /** Calls that must happen: a tool name, or a tool with the exact arguments. */
    requiredTools: z.array(callPattern).optional(),
    /** Calls that must not happen, in the same form. */
    forbiddenTools: z.array(callPattern).optional(),
    maxTurns: z.number().int().min(1).optional(),
    maxCostUsd: z.number().min(0).optional(),
    /** The replay's answer graded against a rubric: `{}` the agent's outcome, or `{ rubric, evidence?, grader? }` (docs/outcomes.md). */
    grade: gradeExpectationSchema.optional(),
  })
  .strict();
export type Expectations = z.infer<typeof expectationsSchema>;
type CallPattern = z.infer<typeof callPattern>;

export interface EvalCase {
  name: string;
  file: string;
  recording: Recording;
  expectations: Expectations;
}

/** passed and regressed are verdicts on the agent; cannot_run is none (the replay never ran to an end). */
export type EvalVerdict = 'passed' | 'regressed' | 'cannot_run';

export interface EvalRow {
  name: string;
  taskId: string;
  replayId?: string;
  recordedOutcome: string;
  outcome: string;
  turns: number;
  toolCalls: number;
  costUsd: number;
  /** True only for the verdict `passed`. */
  passed: boolean;
  verdict: EvalVerdict;
  /** Each expectation the replay broke, in words; or, for `cannot_run`, why in one line. */
  failures: string[];
}

const matches = (pattern: CallPattern, call: { tool: string; input: unknown }) =>
  typeof pattern === 'string'
    ? call.tool === pattern
    : call.tool === pattern.tool && (pattern.input === undefined || canonicalJson(pattern.input, { strict: false }) === canonicalJson(call.input, { strict: false }));

const named = (pattern: CallPattern) => (typeof pattern === 'string' ? pattern : `${pattern.tool}${pattern.input ? ` ${JSON.stringify(pattern.input)}` : ''}`);

/** The expectations a replay broke, each in a sentence; empty when it met them all. */
export function checkExpectations(replayed: Recording, expectations: Expectations): string[] {
  const failures: string[] = [];
  const outcome = outcomeOf(replayed);
  if (expectations.outcome !== undefined && outcome !== expectations.outcome) failures.push(`outcome ${outcome}, expected ${expectations.outcome}`);
  const calls = callsOf(replayed);
  for (const pattern of expectations.requiredTools ?? []) if (!calls.some((c) => matches(pattern, c))) failures.push(`never called ${named(pattern)}`);
  for (const pattern of expectations.forbiddenTools ?? []) if (calls.some((c) => matches(pattern, c))) failures.push(`called ${named(pattern)}`);
  if (expectations.maxTurns !== undefined && replayed.turns.length > expectations.maxTurns) failures.push(`${replayed.turns.length} turns, at most ${expectations.maxTurns}`);
  if (expectations.maxCostUsd !== undefined && replayed.costUsd > expectations.maxCostUsd) failures.push(`cost $${replayed.costUsd}, at most $${expectations.maxCostUsd}`);
  return failures;
}

/** The recordings of a folder with their expectations; a file edited after export or a malformed sidecar throws a RecordingError naming it. */
export async function loadEvalDir(dir: string): Promise<EvalCase[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    throw new RecordingError(`cannot read folder ${dir} (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`);
  }
  const recordings = names.filter((n) => n.endsWith('.json') && !n.endsWith('.expect.json')).sort();
  if (!recordings.length) throw new RecordingError(`${dir} holds no recordings (*.json from durable-agent export)`);
  const cases: EvalCase[] = [];
  for (const name of recordings) {
    const file = path.join(dir, name);
    const recording = await loadRecording(file);
    const sidecar = path.join(dir, name.replace(/\.json$/, '.expect.json'));
    let expectations: Expectations = { outcome: outcomeOf(recording) };
    if (names.includes(path.basename(sidecar))) {
      let json: unknown;
      try {
        json = JSON.parse(await readFile(sidecar, 'utf8'));
      } catch {
        throw new RecordingError(`${sidecar} is not valid JSON`);
      }
      const parsed = expectationsSchema.safeParse(json);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        throw new RecordingError(`${sidecar}: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
      }
      expectations = parsed.data;
    }
    cases.push({ name: name.replace(/\.json$/, ''), file, recording, expectations });
  }
  return cases;
}

/** Replays each case in turn (one replay worker at a time) and checks it; a replay that cannot run is a `cannot_run` row, never a regression. */
/** What an eval replays its cases through: the server, the model, the agents as defined now. */
export type EvalOptions = Omit<ReplayOptions, 'replayId' | 'current'> & { agents?: AgentDefinition[] };

export async function evalCases(cases: EvalCase[], options: EvalOptions): Promise<EvalRow[]> {
  const rows: EvalRow[] = [];
  const { agents, ...replayOptions } = options;
  for (const c of cases) {
    const base = { name: c.name, taskId: c.recording.taskId, recordedOutcome: outcomeOf(c.recording) };
    try {
      const current = agents?.find((a) => a.name === c.recording.agent);
      if (agents && !current) throw new Error(`no current agent named "${c.recording.agent}"`);
      const { replayed, replayId } = await replayRecording(c.recording, { ...replayOptions, ...(current ? { current } : {}) });
      const failures = checkExpectations(replayed, c.expectations);
      if (c.expectations.grade) {
        const agentOutcome = current ? current.manifest(c.recording.manifest.model).outcome : c.recording.manifest.outcome;
        const replayModel = replayOptions.model ?? current?.model ?? c.recording.modelChoice ?? c.recording.manifest.model;
        failures.push(
          ...(await gradeReplay(replayed, c.expectations.grade, { ...(agentOutcome ? { agentOutcome } : {}), replayModel, ...(replayOptions.modelEnv ? { modelEnv: replayOptions.modelEnv } : {}) })),
        );
      }
      rows.push({
        ...base,
        replayId,
        outcome: outcomeOf(replayed),
        turns: replayed.turns.length,
        toolCalls: callsOf(replayed).length,
        costUsd: replayed.costUsd,
        passed: failures.length === 0,
        verdict: failures.length === 0 ? 'passed' : 'regressed',
        failures,
      });
    } catch (err) {
      rows.push({ ...base, outcome: 'cannot run', turns: 0, toolCalls: 0, costUsd: 0, passed: false, verdict: 'cannot_run', failures: [(err as Error).message.split('\n')[0]!] });
    }
  }
  return rows;
}

/** The exit code of an eval: 0 all passed, 1 any regressed, else 2 when any could not run. */
export function evalExitCode(rows: EvalRow[]): 0 | 1 | 2 {
  if (rows.some((r) => r.verdict === 'regressed')) return 1;
  return rows.some((r) => r.verdict === 'cannot_run') ? 2 : 0;
}

const resultOf = (r: EvalRow) => (r.verdict === 'passed' ? 'pass' : r.verdict === 'regressed' ? `FAIL: ${r.failures.join('; ')}` : `CANNOT RUN: ${r.failures.join('; ')}`);

/** One row per recording: what it did then, what the replay did now, and what it broke or why it could not run. */
export function renderEvalTable(rows: EvalRow[]): string {
  const header = ['recording', 'recorded', 'replay', 'turns', 'calls', 'cost', 'result'];
  const body = rows.map((r) => [r.name, r.recordedOutcome, r.outcome, String(r.turns), String(r.toolCalls), `$${r.costUsd.toFixed(4)}`, resultOf(r)]);
  const widths = header.map((h, i) => Math.min(40, Math.max(h.length, ...body.map((row) => row[i]!.length))));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.slice(0, widths[i]).padEnd(widths[i]!))).join('  ');
  const regressed = rows.filter((r) => r.verdict === 'regressed').length;
  const cannot = rows.filter((r) => r.verdict === 'cannot_run').length;
  const summary = [...(regressed ? [`${regressed} of ${rows.length} regressed`] : []), ...(cannot ? [`${cannot} of ${rows.length} could not run (no verdict)`] : [])];
  return [line(header), ...body.map(line), summary.length ? summary.join('; ') : `all ${rows.length} passed`].join('\n');
}
