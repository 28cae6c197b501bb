/**
 * A task's spend, added one call at a time: every model call the engine makes for a task (its
 * turns, a native compaction, the summary, the auto classifier, the grader, a cancelled call) goes
 * through addCallSpend, so every token class the API bills (input, output, cache writes, cache
 * reads) counts against the token budget, and a call without a price names its model. Plain and
 * deterministic (unit-tested without Temporal).
 */
import type { Usage } from '../../protocol/messages';
import type { CallRecovery } from '../../protocol/recovery';

/** What a task has spent, as TaskState holds it. */
export interface TaskSpend {
  readonly usage: { inputTokens: number; outputTokens: number; cacheWriteTokens: number; cacheReadTokens: number };
  costUsd: number;
  readonly unpricedModels: string[];
}

/** One call's spend, as its activity reported it. */
export interface CallSpend {
  usage: Usage;
  /** USD for the whole call (a compaction's included), absent when the worker has no price for its model. */
  costUsd?: number;
  /** The model that answered; a call without a price names it as unpriced (a script costs nothing, so it never is). */
  model?: string;
  /** A native compaction during the call: the API bills its usage apart from the top level. */
  compaction?: { usage: Usage };
  /** Attempts lost before this call answered (TaskState adds them to its recovery bill, not to its usage). */
  recovery?: CallRecovery;
}

/** Every token the API bills for this usage: input, output, cache writes and cache reads. */
export function tokensOf(usage: Usage): number {
  return usage.inputTokens + usage.outputTokens + (usage.cacheWriteTokens ?? 0) + (usage.cacheReadTokens ?? 0);
}

/** Adds one call's tokens (every class, its compaction's included) and USD to the task's spend; returns the tokens added. */
export function addCallSpend(spend: TaskSpend, call: CallSpend): number {
  const parts = call.compaction ? [call.usage, call.compaction.usage] : [call.usage];
  let tokens = 0;
  for (const usage of parts) {
    spend.usage.inputTokens += usage.inputTokens;
    spend.usage.outputTokens += usage.outputTokens;
    spend.usage.cacheWriteTokens += usage.cacheWriteTokens ?? 0;
    spend.usage.cacheReadTokens += usage.cacheReadTokens ?? 0;
    tokens += tokensOf(usage);
  }
  if (call.costUsd !== undefined) spend.costUsd += call.costUsd;
  else if (call.model !== undefined && !call.model.startsWith('scripted:') && !spend.unpricedModels.includes(call.model)) spend.unpricedModels.push(call.model);
  return tokens;
}
