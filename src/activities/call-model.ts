/**
 * callModel: one model call. The input carries the whole conversation or only its change (built on
 * the run's latest copy, conversation-copies.ts); stored content is resolved before the call and long
 * output stored after it. The model gets only what it declared it does (model-capabilities.ts); the
 * activity heartbeats with the streamed progress, an interrupt aborts the call and reports what it
 * cost, and every other failure is classified before Temporal sees it.
 */
import { Context } from '@temporalio/activity';
import { CancelledFailure } from '@temporalio/common';
import { resolveMessages, storeLargeBlocks } from '../blobs/claim-check';
import { checkByLastCall, fitMaxTokens } from '../models/call-budget';
import { classifyModelError } from '../models/classify-model-error';
import { ModelCallAborted, type ModelRequest } from '../models/model';
import type { DeclaredCapabilities } from '../models/model-capabilities';
import { costOf, type PriceTable } from '../models/pricing';
import type { AgentActivities, CancelledModelCall } from '../protocol/activity-contracts';
import type { ModelProgress, ModelTurn } from '../protocol/messages';
import { LiveOutputWriter } from './live-output-writer';
import type { LiveOutputLog } from '../live-output/live-output-log';
import type { OutputDelta } from '../protocol/live-output';
import { conversationOf } from './conversation-copies';
import { finalFailure, toApplicationFailure } from './failure';
import { fallbackReasonOf } from '../protocol/model-fallback';
import { withHeartbeats } from './heartbeat';
import { modelCallRecovery } from './attempt-recovery';
import type { ModelSource } from './model-source';
import type { WorkerResources } from './worker-resources';

export function createCallModel(worker: WorkerResources, models: ModelSource): AgentActivities['callModel'] {
  const { store, withBlobs, prices, inlineChars, conversations, liveOutput } = worker;
  return async ({ model, system, messages: whole, conversation, tools, scope, toolChoice, maxTokens, modelId, thinking, droppedTurns, compaction, spendLeft, fallbackAfterAttempts }) => {
    const ctx = Context.current();
    const attempt = ctx.info.attempt;
    // The call beats throughout: asking the task for its conversation may wait on its worker, reading
    // the store may be slow, and the model's streamed progress rides in the heartbeats (`watch` shows it).
    return withHeartbeats(
      ctx,
      async (_beat, previous, { note }) => {
        const messages = whole ?? (await conversationOf(ctx, conversation, conversations));
        const resolved = scope ? await withBlobs(() => resolveMessages(store(), scope, messages)) : messages;
        const abort = abortOnCancellation(ctx);
        let live: LiveOutputWriter | undefined;
        try {
          const chosen = models.modelFor(model);
          // What the model declared it does itself; the engine does the rest (model-capabilities.ts).
          const can = models.capabilitiesOf(chosen);
          live = can.streaming ? liveWriter(ctx, liveOutput(), modelId ?? chosen.id, scope) : undefined;
          const native = compaction !== undefined && can.nativeCompaction;
          const request: ModelRequest = {
            system,
            messages: resolved,
            tools,
            ...(toolChoice ? { toolChoice } : {}),
            ...(maxTokens ? { maxTokens } : {}),
            ...(modelId ? { model: modelId } : {}),
            ...(thinking && can.thinking ? { thinking } : {}),
            ...(droppedTurns ? { droppedTurns } : {}),
            ...(native ? { compaction } : {}),
            // The heartbeat carries how far the answer is, not its text: a heartbeat's details can
            // land in history (an attempt that times out), and no token goes there. Text goes to
            // the live output log instead, which `watch` reads.
            ...(can.streaming ? { onProgress: (p: ModelProgress) => note({ ...p, tail: '' }) } : {}),
            ...(live ? { onOutput: (d: OutputDelta) => live!.delta(d) } : {}),
            signal: abort.signal,
          };
          // A budget that is a hard cap: the call goes with a max_tokens its maximum fits in, or not at all.
          if (spendLeft && chosen.plan) request.maxTokens = fitMaxTokens(chosen.plan(request), spendLeft, prices);
          else if (spendLeft) checkByLastCall(spendLeft);
          const answered = await chosen.complete(request);
          await live?.end({ stopReason: answered.stopReason });
          // The task asked for native compaction and the model has none: the task is told so (its own
          // answer for the model), and keeps a durable summary from then on.
          const turn = compaction && !native ? { ...withoutCacheTokens(answered, can), nativeCompaction: 'unsupported' as const } : withoutCacheTokens(answered, can);
          // A compaction is billed apart from the turn (its own usage iteration), at the same model's prices.
          const compactionCost = turn.compaction ? costOf(turn.model, turn.compaction.usage, prices) : undefined;
          const turnCost = costOf(turn.model, turn.usage, prices);
          const costUsd = turnCost === undefined ? undefined : turnCost + (compactionCost ?? 0);
          if (turn.compaction && compactionCost !== undefined) turn.compaction = { ...turn.compaction, costUsd: compactionCost };
          // Long output is stored now, so later requests carry a reference instead of the text.
          const content = scope ? await withBlobs(() => storeLargeBlocks(store(), scope, turn.content, inlineChars * 4)) : turn.content;
          const recovery = modelCallRecovery(ctx.info, previous, () => chosen.plan?.(request).inputTokens, turn.model, prices);
          return { ...turn, content, ...(costUsd !== undefined ? { costUsd } : {}), ...(recovery ? { recovery } : {}) };
        } catch (err) {
          if (err instanceof ModelCallAborted) {
            await live?.end({ error: 'cancelled' });
            // Cancelled (an interrupt): what the aborted call cost goes to the task in the failure's details.
            throw cancelledCallFailure(err, prices);
          }
          const classified = classifyModelError(err);
          await live?.end({ error: classified.error.error_class });
          // The task has a next model: an overload or a rate limit that lasted this long goes to it now.
          if (fallbackAfterAttempts !== undefined && attempt >= fallbackAfterAttempts && fallbackReasonOf(classified.error)) throw finalFailure(classified, attempt);
          throw toApplicationFailure(classified, attempt);
        } finally {
          abort.dispose();
        }
      },
      // A retried call streams afresh: the last attempt's progress is not shown as this one's.
      { keepPrevious: false },
    );
  };
}

/**
 * The call's live output writer, when the worker keeps live output. The stream is the task's (its
 * id and first run, read from the call's blob scope `<workflowId>/<firstExecutionRunId>`): a call
 * without a scope (histories from before the claim check) streams nothing.
 */
function liveWriter(ctx: Context, log: LiveOutputLog | undefined, model: string, scope: string | undefined): LiveOutputWriter | undefined {
  const { workflowExecution, activityId, attempt } = ctx.info;
  if (!log || !workflowExecution) return undefined;
  const prefix = `${workflowExecution.workflowId}/`;
  const firstRunId = scope?.startsWith(prefix) ? scope.slice(prefix.length) : undefined;
  if (!firstRunId) return undefined;
  const call = { taskId: workflowExecution.workflowId, firstRunId, runId: workflowExecution.runId, callId: `${workflowExecution.runId}/${activityId}`, attempt, model };
  return new LiveOutputWriter(log, call, (message) => ctx.log.warn(message));
}

/**
 * An abort signal for a model call: aborted when the task cancels the activity (an interrupt, the
 * task cancelled) or the server no longer knows it; a worker shutting down lets the call finish.
 */
function abortOnCancellation(ctx: Context): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const cancelled = () => {
    if (!ctx.cancellationDetails?.workerShutdown) controller.abort(ctx.cancellationSignal.reason);
  };
  if (ctx.cancellationSignal.aborted) cancelled();
  else ctx.cancellationSignal.addEventListener('abort', cancelled, { once: true });
  return { signal: controller.signal, dispose: () => ctx.cancellationSignal.removeEventListener('abort', cancelled) };
}

/** The cancellation the activity reports for an aborted call, carrying what it cost (CancelledModelCall). */
function cancelledCallFailure(err: ModelCallAborted, prices: PriceTable): CancelledFailure {
  const costUsd = costOf(err.model, err.usage, prices);
  const charge: CancelledModelCall = { usage: err.usage, model: err.model, measured: err.measured, ...(costUsd === undefined ? {} : { costUsd }) };
  return new CancelledFailure(err.message, [charge]);
}

/**
 * A model that does not declare prompt caching has its usage read as plain input: cache tokens it
 * reports anyway are added to `inputTokens` (priced at the input rate, never the cache rates).
 */
function withoutCacheTokens(turn: ModelTurn, can: DeclaredCapabilities): ModelTurn {
  const { cacheReadTokens, cacheWriteTokens, ...usage } = turn.usage;
  if (can.promptCaching || (!cacheReadTokens && !cacheWriteTokens)) return turn;
  return { ...turn, usage: { ...usage, inputTokens: usage.inputTokens + (cacheReadTokens ?? 0) + (cacheWriteTokens ?? 0) } };
}
