/**
 * The model call of a turn. A conversation too long for the model is compacted (old tool results)
 * and tried once more; a failure a person can fix (a revoked key, a spend limit, lost content)
 * blocks the task, and the call is tried again once they unblock it.
 */
import { ApplicationFailure, isCancellation, proxyActivities } from '@temporalio/workflow';
import type { AgentActivities, CallModelInput } from '../protocol/activity-contracts';
import type { ModelTurn } from '../protocol/messages';
import { toolError } from '../protocol/tool-error';
import { modelCallOptions } from './activity-options';
import { taskErrorFrom } from './activity-failures';
import { escalationLevel } from './escalation-policy';
import type { People } from './people';
import type { Run } from './run-setup';
import { checkpointOf } from './task-snapshot';

const { callModel } = proxyActivities<AgentActivities>(modelCallOptions);

export type ModelRequest = Pick<CallModelInput, 'model' | 'system' | 'tools' | 'toolChoice'>;

export async function callModelOrBlock(run: Run, people: People, request: ModelRequest): Promise<ModelTurn> {
  const { state } = run;
  let compacted = false;
  for (;;) {
    state.conversation.flushGuidance();
    try {
      const reply = await callModel({ ...request, messages: state.messages, ...modelSettings(run), ...(run.later.forkableTurns() ? { checkpoint: checkpointOf(state) } : {}) });
      if (reply.stopReason !== 'model_context_window_exceeded') return reply;
      throw ApplicationFailure.create({
        message: 'The conversation no longer fits the model context window.',
        type: 'resource',
        nonRetryable: true,
        details: [toolError('resource', 'context_too_long', 'The conversation no longer fits the model context window.')],
      });
    } catch (err) {
      if (isCancellation(err) || !run.rules.people) throw err;
      const error = taskErrorFrom(err);
      if (error.code === 'context_too_long' && !compacted && state.conversation.compactOldToolResults() > 0) {
        compacted = true;
        continue;
      }
      if (escalationLevel({ kind: 'model_failed', error }) !== 'block') throw err;
      state.lastError = error;
      await people.block(`model_${error.code}`, `The model call failed: ${error.error_class}/${error.code}: ${error.detail}`, () => 1);
      // A person chose to go on without content the store lost: the model is told it is gone.
      if (error.code === 'blob_missing') state.conversation.forgetMissingBlob(error.detail);
      compacted = false;
    }
  }
}

/** Per-call settings: the task's blob scope and a person's overrides (unblock --model / --max-tokens). */
function modelSettings(run: Run) {
  const { state, scope } = run;
  return {
    ...(scope ? { scope } : {}),
    ...(state.modelOverride.model ? { modelId: state.modelOverride.model } : {}),
    ...(state.modelOverride.maxTokens ? { maxTokens: state.modelOverride.maxTokens } : {}),
    ...(state.droppedTurns ? { droppedTurns: state.droppedTurns } : {}),
  };
}
