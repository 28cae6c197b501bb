/**
 * summarizeTurns: the durable summary of turns leaving the window (docs/context.md), by the model's
 * own summarize when it has one, else a summary request. Stored content is read, stubbed tool results
 * included, so the summary keeps what the model will no longer see; a long summary is stored.
 */
import { Context } from '@temporalio/activity';
import { resolveMessages, resolveText, storeTextIfLarge } from '../blobs/claim-check';
import type { BlobStore } from '../blobs/blob-store';
import { ToolFailure } from '../errors/tool-failure';
import { classifyModelError } from '../models/classify-model-error';
import { costOf } from '../models/pricing';
import { summaryRequest } from '../models/summary-request';
import type { AgentActivities } from '../protocol/activity-contracts';
import { isBlobId } from '../protocol/blob-marker';
import { textOf, type Message, type UserBlock } from '../protocol/messages';
import { toApplicationFailure } from './failure';
import { withHeartbeats } from './heartbeat';
import type { ModelSource } from './model-source';
import type { WorkerResources } from './worker-resources';

export function createSummarizeTurns(worker: WorkerResources, models: ModelSource): AgentActivities['summarizeTurns'] {
  const { store, withBlobs, prices, inlineChars } = worker;
  return async ({ model, modelId, scope, previousSummary, messages, maxTokens }) => {
    const ctx = Context.current();
    const attempt = ctx.info.attempt;
    return withHeartbeats(ctx, async () => {
      const resolved = scope ? await withBlobs(async () => resolveMessages(store(), scope, await unstubbed(store(), messages, scope))) : messages;
      // The summary so far travels by reference (it rides in every model call's input otherwise).
      const previous = scope && previousSummary ? await withBlobs(() => resolveText(store(), scope, previousSummary)) : previousSummary;
      try {
        const chosen = models.modelFor(model);
        const turn = chosen.summarize
          ? await chosen.summarize({ ...(previous ? { previousSummary: previous } : {}), messages: resolved })
          : await chosen.complete(summaryRequest(previous, resolved, maxTokens, modelId));
        const text = textOf(turn.content);
        const summary = scope && text ? await withBlobs(() => storeTextIfLarge(store(), scope, text, inlineChars)) : text;
        if (!summary) throw new ToolFailure('semantic', 'empty_summary', 'The summary call answered without text.', 'The oldest turns are trimmed instead.');
        const costUsd = costOf(turn.model, turn.usage, prices);
        return { summary, usage: turn.usage, model: turn.model, ...(costUsd === undefined ? {} : { costUsd }) };
      } catch (err) {
        throw toApplicationFailure(classifyModelError(err), attempt);
      }
    });
  };
}

/**
 * Tool results stubbed to fit the window still name their stored content: the summary reads that
 * content, not the stub (what it keeps is all the model will have of them once the turns leave).
 */
async function unstubbed(store: BlobStore, messages: Message[], scope: string): Promise<Message[]> {
  const out: Message[] = [];
  for (const message of messages) {
    if (message.role !== 'user' || typeof message.content === 'string') {
      out.push(message);
      continue;
    }
    const content: UserBlock[] = [];
    for (const block of message.content) {
      const refs = block.type === 'tool_result' ? stubRefs(block.content) : [];
      if (block.type !== 'tool_result' || refs.length === 0) {
        content.push(block);
        continue;
      }
      const bodies = await Promise.all(refs.map((ref) => store.get(scope, ref).catch(() => undefined)));
      content.push(bodies.every((b) => b !== undefined) ? { ...block, content: bodies.join('\n') } : block);
    }
    out.push({ role: 'user', content });
  }
  return out;
}

/** The refs a stubbed tool result names (`{"compacted": ..., "recall": [{ref}]}`), or none. */
function stubRefs(content: string): string[] {
  if (!content.startsWith('{"compacted"')) return [];
  try {
    const recall = (JSON.parse(content) as { recall?: { ref?: unknown }[] }).recall ?? [];
    return recall.map((r) => r.ref).filter(isBlobId);
  } catch {
    return [];
  }
}
