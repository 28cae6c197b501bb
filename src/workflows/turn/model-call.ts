/**
 * The model call of a turn. A conversation too long for the model is compacted (old tool results)
 * and tried once more; a failure a person can fix (a revoked key, a spend limit, lost content)
 * blocks the task, and the call is tried again once they unblock it.
 */
import { ApplicationFailure, isCancellation, proxyActivities } from '@temporalio/workflow';
import type { AgentActivities, CallModelInput } from '../../protocol/activity-contracts';
import type { CompactionBlock, ModelTurn } from '../../protocol/messages';
import { toolError } from '../../protocol/tool-error';
import { modelCallOptions } from '../base/activity-options';
import { taskErrorFrom } from '../base/activity-failures';
import { cancelledCallCharge, chargeCancelledCall, spendBudgetAllows, spentSpendBudget } from '../state/budget-meter';
import { escalationLevel } from '../people/escalation-policy';
import type { People } from '../people/people';
import type { Run } from '../run/run-setup';
import { checkpointOf } from '../state/task-snapshot';
import { fallBack, fallbackAfterAttempts, modelIdNow } from '../state/model-fallback';

/** Budgets are hard caps: a cancelled call is aborted on the worker, which says what it cost. */
const { callModel } = proxyActivities<AgentActivities>(modelCallOptions);

export type ModelRequest = Pick<CallModelInput, 'model' | 'system' | 'tools' | 'toolChoice'>;

/**
 * The model's reply, after any compaction or block a failure needed; undefined when the call found
 * the task's token or cost budget spent (after an interrupt, a native compaction or a summary) and a
 * person did not raise it (the task ends, budget_exhausted). Not async itself: the usual
 * call costs one promise on top of the activity's (`then`), where an async function awaiting it
 * costs two, and the SDK captures a stack for each promise the workflow creates, every turn.
 * `nativeCompactions` counts the API's compactions within this call: one is expected; a second
 * means the summary alone passes the trigger, and the next call goes without it.
 */
export function callModelOrBlock(run: Run, people: People, request: ModelRequest, compacted = false, nativeCompactions = 0): Promise<ModelTurn | undefined> {
  const { state } = run;
  // The cap is checked before every call, not only at a turn's start: a call after a native
  // compaction, after a summary, or after an interrupt finds a spent budget and blocks instead.
  if (spentSpendBudget(state)) {
    return spendBudgetAllows(state, people).then((raised) => {
      if (!raised) return undefined;
      state.phase = 'calling_model';
      return callModelOrBlock(run, people, request, compacted, nativeCompactions);
    });
  }
  state.conversation.flushGuidance();
  const context = state.conversation.context;
  const native = context?.strategy === 'auto' && context.native !== false && nativeCompactions < 2;
  let call: Promise<ModelTurn>;
  try {
    // In a scope an interrupt can cancel (steering.ts).
    call = run.steering.run(() =>
      callModel({
        ...request,
        ...(state.manifest?.wholeConversations === true ? { messages: state.messages } : { conversation: run.sent.next(state.messages) }),
        ...modelSettings(run),
        ...(native ? { compaction: { triggerTokens: context.triggerTokens } } : {}),
        // Any completed turn can be forked: each call carries the progress after the previous one.
        checkpoint: checkpointOf(state),
        ...spendLeft(run),
      }),
    );
  } catch (err) {
    return recover(run, people, request, err, compacted);
  }
  // Without a token or cost budget an interrupt does not wait for the call to stop on the worker: it
  // starts the next call at once, and this one's cost is counted when the worker reports it (the
  // task waits for that before it ends or continues as new). No promise unless an interrupt comes.
  let next: Promise<ModelTurn | undefined> | undefined;
  if (!hasSpendBudget(state)) {
    run.steering.onInterrupt = () => {
      next = callModelOrBlock(run, people, request, compacted);
    };
  }
  return call.then(
    (reply) => {
      if (next) return settledLate(run, { answer: reply }, next);
      run.steering.answered();
      if (reply.costUsd !== undefined) run.lastCallCostUsd = reply.costUsd;
      if (reply.stopReason === 'compaction') return callModelOrBlock(run, people, request, compacted, nativeCompactions + (keepCompaction(run, reply) ? 1 : 2));
      if (reply.nativeCompaction === 'unsupported' && context && context.native !== false) {
        context.native = false;
        state.audit.record('informed', `${reply.model} has no native compaction: the conversation is summarised when it must shrink`);
      }
      return reply.stopReason === 'model_context_window_exceeded' ? recover(run, people, request, contextTooLong(), compacted) : reply;
    },
    (err: unknown) => {
      if (next) return settledLate(run, { failure: err }, next);
      run.steering.settled();
      // A cancelled call (an interrupt, the task cancelled) is counted at what the worker said it cost.
      const charge = isCancellation(err) ? cancelledCallCharge(err) : undefined;
      if (charge) chargeCancelledCall(state, charge);
      return recover(run, people, request, err, compacted);
    },
  );
}

function contextTooLong(): ApplicationFailure {
  return ApplicationFailure.create({
    message: 'The conversation no longer fits the model context window.',
    type: 'resource',
    nonRetryable: true,
    details: [toolError('resource', 'context_too_long', 'The conversation no longer fits the model context window.')],
  });
}

/** A failed call: compacted and tried once more when too long, else a block for a person and the call again, or the failure. */
async function recover(run: Run, people: People, request: ModelRequest, err: unknown, compacted: boolean): Promise<ModelTurn | undefined> {
  const { state } = run;
  // Interrupted: the message that did it joins the conversation, and the model is called again,
  // unless the calls interrupts cancelled have spent the budget (a person may raise it).
  if (run.steering.interrupted(err)) return callModelOrBlock(run, people, request, compacted);
  if (isCancellation(err)) throw err;
  const error = taskErrorFrom(err);
  if (error.code === 'context_too_long' && !compacted && state.conversation.compactOldToolResults() > 0) return callModelOrBlock(run, people, request, true);
  // Overloaded, rate-limited past its retries or no longer served: the next model, when the task has one.
  if (fallBack(state, error)) return callModelOrBlock(run, people, request, compacted);
  // The worker did not send a call whose maximum would pass what is left of a budget: the task blocks
  // as for a spent one, goes on when a person raises that budget, and ends when they do not.
  if (error.code === 'cost_budget' || error.code === 'token_budget') {
    const limitOf = () => (error.code === 'cost_budget' ? state.budgets.costUsd : state.budgets.tokens) ?? Infinity;
    const before = limitOf();
    const raised = await people.block(error.code, error.detail, () => (limitOf() > before ? 1 : 0));
    return raised ? callModelOrBlock(run, people, request, compacted) : undefined;
  }
  if (escalationLevel({ kind: 'model_failed', error }) !== 'block') throw err;
  state.lastError = error;
  await people.block(`model_${error.code}`, `The model call failed: ${error.error_class}/${error.code}: ${error.detail}`, () => 1);
  // A person chose to go on without content the store lost: the model is told it is gone.
  if (error.code === 'blob_missing') state.conversation.forgetMissingBlob(error.detail);
  return callModelOrBlock(run, people, request);
}

/**
 * The API paused after compacting: its block replaces what it summarised (state shrinks with it),
 * and its cost counts. Recorded as this activity's result, so neither a retry of the next call nor a
 * worker killed during it compacts the same content again. False when the API's summary failed
 * (a block without content): the conversation is kept whole.
 */
function keepCompaction(run: Run, reply: ModelTurn): boolean {
  const { state } = run;
  const usage = reply.compaction?.usage ?? { inputTokens: 0, outputTokens: 0 };
  // Every token class of the paused call and of its compaction; its USD holds the compaction's.
  state.addSpend(reply);
  const block = reply.content.find((b): b is CompactionBlock => b.type === 'compaction');
  if (!block || block.content === null) {
    state.audit.record('informed', 'the API paused for a compaction that produced no summary: the conversation is kept whole');
    return false;
  }
  state.conversation.recordNativeCompaction(block, usage, reply.compaction?.costUsd, state.turn);
  return true;
}

function hasSpendBudget(state: Run['state']): boolean {
  return state.budgets.tokens !== undefined || state.budgets.costUsd !== undefined;
}

/**
 * An interrupted call the task went on without has stopped: its cost (its answer's, or its
 * cancellation's report) is counted now, and the call that replaced it is the answer.
 */
function settledLate(run: Run, late: { answer: ModelTurn } | { failure: unknown }, next: Promise<ModelTurn | undefined>): Promise<ModelTurn | undefined> {
  run.steering.unsettled -= 1;
  chargeLate(run.state, late);
  return next;
}

function chargeLate(state: Run['state'], late: { answer: ModelTurn } | { failure: unknown }): void {
  if ('answer' in late) {
    const { usage, compaction, model, costUsd } = late.answer;
    const extra = compaction?.usage;
    const total = {
      inputTokens: usage.inputTokens + (extra?.inputTokens ?? 0),
      outputTokens: usage.outputTokens + (extra?.outputTokens ?? 0),
      cacheWriteTokens: (usage.cacheWriteTokens ?? 0) + (extra?.cacheWriteTokens ?? 0),
      cacheReadTokens: (usage.cacheReadTokens ?? 0) + (extra?.cacheReadTokens ?? 0),
    };
    chargeCancelledCall(state, { usage: total, model, measured: true, ...(costUsd !== undefined ? { costUsd } : {}) });
    return;
  }
  const charge = cancelledCallCharge(late.failure);
  if (charge) chargeCancelledCall(state, charge);
}

/**
 * Token and cost budgets are hard caps, a top task's as a sub-agent's slice: the worker sends each
 * call with a max_tokens whose maximum fits what is left, or does not send it (the task blocks for
 * a person), so no call crosses the cap (a family never overshoots by one call per child). A model
 * that cannot say its maximum is judged by this run's previous call.
 */
function spendLeft(run: Run): { spendLeft?: { costUsd?: number; tokens?: number; lastCallCostUsd?: number } } {
  const { state } = run;
  const { costUsd, tokens } = state.budgets;
  if (costUsd === undefined && tokens === undefined) return {};
  return {
    spendLeft: {
      ...(costUsd !== undefined ? { costUsd: Math.max(0, costUsd - state.costCommitted) } : {}),
      ...(tokens !== undefined ? { tokens: Math.max(0, tokens - state.tokensCommitted) } : {}),
      ...(costUsd !== undefined && run.lastCallCostUsd !== undefined ? { lastCallCostUsd: run.lastCallCostUsd } : {}),
    },
  };
}

/** Per-call settings: the task's blob scope, a person's overrides (unblock --model / --max-tokens) and the fallback model the task moved to. */
function modelSettings(run: Run) {
  const { state, scope } = run;
  return {
    ...(scope ? { scope } : {}),
    ...(modelIdNow(state) ? { modelId: modelIdNow(state) } : {}),
    ...(state.modelOverride.maxTokens ? { maxTokens: state.modelOverride.maxTokens } : {}),
    ...fallbackAfterAttempts(state),
    ...(state.droppedTurns ? { droppedTurns: state.droppedTurns } : {}),
  };
}
