/**
 * A long Claude task through the real SDK against the strict fake Messages API, whose usage follows
 * the API's prompt cache: what the conversation's caching saves, per call and in dollars. Shared by
 * the conversation-cache test and `npm run bench -- caching`.
 */
import type { PromptCaching } from '../../src/models/anthropic-model';
import { FakeMessagesApi, fakeTurns, type RecordedRequest } from '../../src/testing/fake-messages-api';
import type { TaskResult, TaskStatus } from '../../src/protocol/task';
import type { Harness } from './harness';
import { createLongAgent } from './long-agents';

export interface CachedCall {
  messages: number;
  input: number;
  cacheWrite: number;
  cacheRead: number;
  /** This call's conversation is the previous call's plus the turn in between (no compaction in between). */
  extendsPrevious: boolean;
}

export interface CachedConversationRun {
  caching: PromptCaching;
  turns: number;
  resultChars: number;
  calls: CachedCall[];
  rejected: string[];
  result: TaskResult;
  status: TaskStatus;
}

type Usage = { input_tokens: number; cache_creation_input_tokens: number; cache_read_input_tokens: number };

export async function runCachedConversation(h: Harness, options: { turns: number; resultChars: number; caching: PromptCaching }): Promise<CachedConversationRun> {
  const api = new FakeMessagesApi();
  let toolCalls = 0;
  api.responder = () => (toolCalls < options.turns ? fakeTurns.toolUse(`toolu_${toolCalls}`, 'big_read', { offset: toolCalls++ }) : fakeTurns.text(`Read ${toolCalls} pages.`));
  // The usage each answer carried, in order: read back from the SSE stream would need a parser; the fake knows it.
  const usages: Usage[] = [];
  const use = api.promptCache.use.bind(api.promptCache);
  api.promptCache.use = (body) => {
    const usage = use(body);
    usages.push(usage);
    return usage;
  };
  await api.start();
  try {
    const taskId = h.taskId(`cache-${options.caching}`);
    const worker = await h.worker([createLongAgent(options.resultChars)], {
      modelEnv: { anthropicApiKey: 'sk-ant-test', anthropicBaseURL: api.url, anthropicPromptCaching: options.caching },
    });
    const { result, status } = await worker.runUntil(async () => {
      await h.client.start(
        { agent: 'long', prompt: 'Read the document page by page, one page per turn.', model: { provider: 'anthropic' }, budgets: { turns: options.turns + 10, toolCalls: options.turns + 10 } },
        { taskId },
      );
      const result = await h.client.result(taskId);
      return { result, status: await h.client.status(taskId) };
    });
    // A compaction call (paused after the summary) is billed apart and samples nothing: not a call of the conversation.
    const answered = api.requests.filter((r) => r.rejected === undefined && !r.compaction);
    return {
      ...options,
      calls: answered.map((request, i) => ({
        messages: request.body.messages.length,
        input: usages[i]!.input_tokens,
        cacheWrite: usages[i]!.cache_creation_input_tokens,
        cacheRead: usages[i]!.cache_read_input_tokens,
        extendsPrevious: i > 0 && extendsConversation(answered[i - 1]!, request),
      })),
      rejected: api.rejected.map((r) => r.rejected!),
      result,
      status,
    };
  } finally {
    await api.stop();
  }
}

/** Whether `next` sends `previous`'s messages unchanged (cache markers aside) and then more. */
function extendsConversation(previous: RecordedRequest, next: RecordedRequest): boolean {
  const strip = (messages: unknown[]) => JSON.stringify(messages).replace(/,?"cache_control":\{"type":"ephemeral"\}/g, '');
  const before = previous.body.messages;
  return next.body.messages.length > before.length && strip(next.body.messages.slice(0, before.length)) === strip(before);
}

/** Totals for a README row. */
export function cacheTotals(run: CachedConversationRun) {
  const sum = (pick: (c: CachedCall) => number) => run.calls.reduce((n, c) => n + pick(c), 0);
  return {
    caching: run.caching,
    calls: run.calls.length,
    inputTokens: sum((c) => c.input),
    cacheWriteTokens: sum((c) => c.cacheWrite),
    cacheReadTokens: sum((c) => c.cacheRead),
    callsReadingCache: run.calls.filter((c) => c.cacheRead > 0).length,
    costUsd: Math.round(run.status.costUsd * 100) / 100,
  };
}
