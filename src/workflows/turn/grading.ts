/**
 * A graded outcome in the turn loop (docs/outcomes.md): the task's answer goes to a grader activity
 * with the prompt and the evidence its rubric names, never the whole conversation. A pass ends the
 * task `answered`; a failing grade goes back to the task as guidance (a user message with the
 * grader's reasons) while attempts remain; the last failing grade ends it `outcome_failed`. Every
 * grade is kept in state, carried across continue-as-new and shown in status and the result.
 */
import { isCancellation, proxyActivities } from '@temporalio/workflow';
import type { AgentActivities } from '../../protocol/activity-contracts';
import type { Message } from '../../protocol/messages';
import { evidenceTools, GRADER_MAX_TOKENS, type EvidenceItem, type OutcomeSpec } from '../../protocol/outcome';
import type { ModelChoice } from '../../protocol/task';
import { gradeCallOptions } from '../base/activity-options';
import { taskErrorFrom } from '../base/activity-failures';
import { spendBudgetAllows, spentSpendBudget } from '../state/budget-meter';
import { gradeGuidance, notGraded, recordGrade } from '../state/grades';
import type { People } from '../people/people';
import { forkPromptOf, withFork } from './fork-prompt';
import type { Run } from '../run/run-setup';

const { gradeAnswer } = proxyActivities<AgentActivities>(gradeCallOptions);

/**
 * What the loop does with an answer: end the task answered, answer again, end it outcome_failed, or
 * end it budget_exhausted without a grade (the task's token or cost budget was spent before it).
 */
export type GradeVerdict = 'passed' | 'retry' | 'failed' | 'not_graded';

/**
 * Grades the answer the task just gave. A grader call that fails for good (after the model's retry
 * classes) blocks the task for a person; an unblock grades the same answer again. The grader is a
 * call billed to the task, so its cap is checked first: a spent token or cost budget blocks the task
 * as for a turn, and unless a person raises it the grader is not called and the answer is not graded.
 */
export async function gradeTheAnswer(run: Run, people: People, spec: OutcomeSpec, taskModel: ModelChoice): Promise<GradeVerdict> {
  const { state } = run;
  const answer = state.conversation.answerText();
  const evidence = evidenceIn(state.messages, evidenceTools(spec));
  for (;;) {
    if (!(await spendBudgetAllows(state, people))) {
      notGraded(state, spentSpendBudget(state)?.reason ?? "the task's budget is spent");
      return 'not_graded';
    }
    state.phase = 'grading';
    try {
      const result = await gradeAnswer({
        model: spec.grader ?? taskModel,
        // A person's model override applies to the task's model, so to a grader that is the task's model.
        ...(!spec.grader && state.modelOverride.model ? { modelId: state.modelOverride.model } : {}),
        ...(run.scope ? { scope: run.scope } : {}),
        rubric: spec.rubric,
        prompt: state.input.prompt,
        // A fork's prompt only names it: the grader reads its origin's prompt and its message, labelled.
        ...withFork(forkPromptOf(state.input, state.lineage, state.messages)),
        answer,
        evidence,
        maxTokens: GRADER_MAX_TOKENS,
      });
      const grade = recordGrade(state, result, spec.maxAttempts);
      if (grade.pass) return 'passed';
      if (grade.attempt >= spec.maxAttempts) return 'failed';
      state.conversation.pendingGuidance.push(gradeGuidance(grade, spec.maxAttempts));
      // The next answer is a new one: a continued answer's parts do not carry over.
      state.conversation.clearAnswerParts();
      return 'retry';
    } catch (err) {
      if (isCancellation(err)) throw err;
      const error = taskErrorFrom(err);
      state.lastError = error;
      await people.block(`grader_${error.code}`, `The grader call failed: ${error.error_class}/${error.code}: ${error.detail}`, () => 1);
    }
  }
}

/**
 * The results of the named tools' calls in the live conversation, in order: each tool_use of a named
 * tool with the tool_result that answered it. Turns that left the conversation (compaction, trimming)
 * are no longer evidence (docs/outcomes.md).
 */
export function evidenceIn(messages: readonly Message[], tools: readonly string[]): EvidenceItem[] {
  if (tools.length === 0) return [];
  const named = new Set(tools);
  const calls = new Map<string, { tool: string; input: unknown }>();
  const out: EvidenceItem[] = [];
  for (const message of messages) {
    if (typeof message.content === 'string') continue;
    for (const block of message.content) {
      if (block.type === 'tool_use' && named.has(block.name)) calls.set(block.id, { tool: block.name, input: block.input });
      if (block.type === 'tool_result') {
        const call = calls.get(block.tool_use_id);
        if (call) out.push({ ...call, result: block.content, ...(block.is_error ? { isError: true } : {}) });
      }
    }
  }
  return out;
}
