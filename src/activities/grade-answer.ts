/**
 * gradeAnswer: a graded outcome's grader (docs/outcomes.md). One model call in its own context: the
 * fixed grader instructions, then one message with the task's prompt (a fork's: its origin's prompt
 * and its message, labelled), the evidence the rubric names,
 * the answer and the rubric; nothing else of the conversation. Failures are classified as the model
 * call's are (same retry classes); a reply that holds no grade is `semantic` (not retried blindly).
 */
import { Context } from '@temporalio/activity';
import { resolveText } from '../blobs/claim-check';
import { ToolFailure } from '../errors/tool-failure';
import { classifyModelError } from '../models/classify-model-error';
import { costOf } from '../models/pricing';
import type { AgentActivities } from '../protocol/activity-contracts';
import { textOf } from '../protocol/messages';
import { graderRequest, readGrade } from '../protocol/outcome';
import { resolvedFork } from './classify-tool-call';
import { toApplicationFailure } from './failure';
import { withHeartbeats } from './heartbeat';
import type { ModelSource } from './model-source';
import type { WorkerResources } from './worker-resources';

export function createGradeAnswer(worker: WorkerResources, models: ModelSource): AgentActivities['gradeAnswer'] {
  const { store, withBlobs, prices } = worker;
  return async ({ model, modelId, scope, rubric, prompt, fork, answer, evidence, maxTokens }) => {
    const ctx = Context.current();
    const attempt = ctx.info.attempt;
    return withHeartbeats(ctx, async () => {
      // A long answer or tool result travels by reference: the grader reads the content itself.
      const resolve = (text: string) => (scope ? withBlobs(() => resolveText(store(), scope, text)) : Promise.resolve(text));
      const resolvedEvidence = await Promise.all(evidence.map(async (e) => ({ ...e, result: await resolve(e.result) })));
      // A fork's prompt only names it: the grader reads its origin's prompt and its message, each labelled.
      const request = graderRequest(
        { rubric, prompt: await resolve(prompt), ...(fork ? { fork: await resolvedFork(fork, resolve) } : {}), answer: await resolve(answer), evidence: resolvedEvidence },
        maxTokens,
      );
      try {
        const turn = await models.modelFor(model).complete({ ...request, ...(modelId ? { model: modelId } : {}) });
        const grade = readGrade(textOf(turn.content));
        if (!grade)
          throw new ToolFailure(
            'semantic',
            'unreadable_grade',
            'The grader answered without a JSON grade ({"pass": ..., "reasons": ...}).',
            'Check the grader model; a person may unblock the task to grade again.',
          );
        const costUsd = costOf(turn.model, turn.usage, prices);
        return { ...grade, model: turn.model, usage: turn.usage, ...(costUsd === undefined ? {} : { costUsd }) };
      } catch (err) {
        throw toApplicationFailure(classifyModelError(err), attempt);
      }
    });
  };
}
