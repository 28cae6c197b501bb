/**
 * A graded outcome's bookkeeping on TaskState (docs/outcomes.md): a grade recorded with its spend
 * (counted in the task's usage and cost, so the budgets count the grader too), and what status shows.
 */
import type { Grade, GradeAnswerResult, OutcomeStatus } from '../../protocol/outcome';
import type { TaskState } from './task-state';
import { oneLine } from '../base/one-line';

/** Records a grade: kept in order, its tokens and USD added to the task's, one line in the audit trail. */
export function recordGrade(state: TaskState, result: GradeAnswerResult, maxAttempts: number): Grade {
  const grade: Grade = {
    attempt: state.grades.length + 1,
    turn: state.turn,
    pass: result.pass,
    ...(result.score !== undefined ? { score: result.score } : {}),
    reasons: result.reasons,
    model: result.model,
    usage: { ...result.usage },
    ...(result.costUsd !== undefined ? { costUsd: result.costUsd } : {}),
    at: state.now(),
  };
  state.grades.push(grade);
  const tokens = state.addSpend({ usage: grade.usage, ...(grade.costUsd !== undefined ? { costUsd: grade.costUsd } : {}), model: result.model });
  const spend = `[${tokens} tokens${grade.costUsd !== undefined ? `, $${grade.costUsd.toFixed(4)}` : ''}]`;
  state.audit.record(
    'answer_graded',
    `attempt ${grade.attempt} of ${maxAttempts} ${grade.pass ? 'passed' : 'failed'}${grade.score !== undefined ? ` (score ${grade.score})` : ''} ${spend}: ${oneLine(grade.reasons)}`,
  );
  return grade;
}

/**
 * The answer is not graded: the task's token or cost budget was spent before the grader's call and a
 * person did not raise it (the grader is a call billed to the task). Status's outcome says why.
 */
export function notGraded(state: TaskState, reason: string): void {
  state.notGraded = `the budget was spent: ${reason}`;
  state.audit.record('informed', `the answer was not graded (attempt ${state.grades.length + 1}): ${state.notGraded}`);
}

/** The guidance a failing grade sends back to the task: a user-role message with the grader's reasons. */
export function gradeGuidance(grade: Grade, maxAttempts: number): string {
  return `[grader] Your answer did not pass its rubric (attempt ${grade.attempt} of ${maxAttempts}). The grader's reasons: ${grade.reasons}\nRevise your work and answer again.`;
}

/** Status's `outcome`: only for an agent with one. */
export function outcomeStatusOf(state: TaskState): { outcome?: OutcomeStatus } {
  const spec = state.manifest?.outcome;
  if (!spec) return {};
  const usage = { inputTokens: 0, outputTokens: 0, cacheWriteTokens: 0, cacheReadTokens: 0 };
  let costUsd = 0;
  for (const g of state.grades) {
    usage.inputTokens += g.usage.inputTokens;
    usage.outputTokens += g.usage.outputTokens;
    usage.cacheWriteTokens += g.usage.cacheWriteTokens ?? 0;
    usage.cacheReadTokens += g.usage.cacheReadTokens ?? 0;
    costUsd += g.costUsd ?? 0;
  }
  const last = state.grades.at(-1);
  const passed = last?.pass ? true : state.grades.length >= spec.maxAttempts ? false : undefined;
  return {
    outcome: {
      maxAttempts: spec.maxAttempts,
      attempts: state.grades.length,
      grades: state.grades.map((g) => ({ ...g, usage: { ...g.usage } })),
      usage,
      costUsd,
      ...(passed !== undefined ? { passed } : {}),
      ...(state.notGraded !== undefined ? { notGraded: state.notGraded } : {}),
    },
  };
}
