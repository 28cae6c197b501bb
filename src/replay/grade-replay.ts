/**
 * `eval`'s `grade` expectation (docs/outcomes.md, docs/replay.md): a replay's answer graded against a
 * rubric, the agent's own outcome or one the expectation gives, by the same grader request a task
 * makes (graderRequest: the prompt, the answer and the named evidence only). The
 * grade runs in the eval's process, after the replay: a replay itself never grades, so its
 * trajectory stays the recorded agent's.
 */
import { z } from 'zod';
import { createModel, type ModelEnvironment } from '../models/create-model';
import type { Model } from '../models/model';
import { textOf } from '../protocol/messages';
import { evidenceTools, GRADER_MAX_TOKENS, graderRequest, readGrade, type EvidenceItem, type OutcomeSpec } from '../protocol/outcome';
import type { ModelChoice } from '../protocol/agent-settings';
import { modelChoiceSchema } from '../protocol/wire-shapes';
import { callsOf, type RecordingBody } from './recording';

/** `"grade": {}` grades by the agent's outcome; `rubric` (and `evidence`, `grader`) by one of its own. */
export const gradeExpectationSchema = z
  .object({
    rubric: z.string().min(1).optional(),
    evidence: z.array(z.string().regex(/^tool:.+/, 'evidence entries are "tool:NAME"')).optional(),
    grader: modelChoiceSchema.optional(),
  })
  .strict();
export type GradeExpectation = z.infer<typeof gradeExpectationSchema>;

export interface GradeReplayOptions {
  /** The agent's outcome (the current agent's, else the recorded manifest's), for `"grade": {}`. */
  agentOutcome?: OutcomeSpec;
  /** The replay's model: the grader when neither the expectation nor the outcome names one. */
  replayModel: ModelChoice;
  modelEnv?: ModelEnvironment;
  /** A Model to grade with instead of one made from a choice (tests, a custom model). */
  model?: Model;
}

/** The failures of a `grade` expectation: empty when the replay's answer passed. A grader that cannot answer throws (the case cannot run). */
export async function gradeReplay(replayed: RecordingBody, expectation: GradeExpectation, options: GradeReplayOptions): Promise<string[]> {
  const spec = expectation.rubric ? { rubric: expectation.rubric, evidence: expectation.evidence, grader: expectation.grader } : options.agentOutcome;
  if (!spec) return ['grade: the agent has no outcome rubric; give the expectation a "rubric"'];
  const choice = expectation.grader ?? spec.grader ?? options.replayModel;
  const model = options.model ?? createModel(choice, options.modelEnv ?? {});
  const answer = replayed.outcome.text ?? '';
  const turn = await model.complete(graderRequest({ rubric: spec.rubric, prompt: replayed.prompt, answer, evidence: replayEvidence(replayed, evidenceTools(spec)) }, GRADER_MAX_TOKENS));
  const grade = readGrade(textOf(turn.content));
  if (!grade) throw new Error('the grader answered without a JSON grade ({"pass": ..., "reasons": ...})');
  return grade.pass ? [] : [`grade failed${grade.score !== undefined ? ` (score ${grade.score})` : ''}: ${grade.reasons}`];
}

/** The named tools' calls in the replay, with the results the model read. */
export function replayEvidence(replayed: Pick<RecordingBody, 'turns'>, tools: readonly string[]): EvidenceItem[] {
  const named = new Set(tools);
  return callsOf(replayed)
    .filter((c) => named.has(c.tool) && c.result)
    .map((c) => ({ tool: c.tool, input: c.input, result: c.result!.content, ...(c.result!.isError ? { isError: true } : {}) }));
}
