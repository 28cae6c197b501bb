/**
 * A call's recovery as its activity sees it (protocol/recovery.ts): how many attempts came before
 * this one (Temporal's retries, and the engine's own re-reads inside this attempt), how long since
 * the first was scheduled, and for a model call what the lost attempt had already used.
 */
import type { Info } from '@temporalio/activity';
import { costOf, type PriceTable } from '../models/pricing';
import type { ModelProgress, Usage } from '../protocol/messages';
import type { CallRecovery } from '../protocol/recovery';

/** About four characters of text make a token, in English prose and JSON alike. */
const CHARS_PER_TOKEN = 4;

/** Undefined when the call answered at its first try. */
export function attemptRecovery(info: Pick<Info, 'attempt' | 'scheduledTimestampMs' | 'currentAttemptScheduledTimestampMs'>, rereads = 0): CallRecovery | undefined {
  const repeated = info.attempt - 1 + rereads;
  if (repeated <= 0) return undefined;
  return { repeated, waitedMs: Math.max(0, info.currentAttemptScheduledTimestampMs - info.scheduledTimestampMs) };
}

/**
 * What the model call's previous attempt had used when it was lost, from its last heartbeat: the
 * request's input (as planned) once it had streamed anything, and what it streamed. Undefined when
 * that attempt reported no progress (it may not have reached the model at all).
 */
export function lostAttemptUsage(previous: unknown, plannedInputTokens: number | undefined): Usage | undefined {
  const progress = previous as Partial<ModelProgress> | undefined;
  if (!progress || typeof progress !== 'object') return undefined;
  const chars = numberOr0(progress.outputChars) + numberOr0(progress.thinkingChars);
  if (chars === 0) return undefined;
  return { inputTokens: plannedInputTokens ?? 0, outputTokens: Math.ceil(chars / CHARS_PER_TOKEN) };
}

function numberOr0(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;
}

/** A model call's recovery: attemptRecovery, with what the lost attempt had used and its price. */
export function modelCallRecovery(
  info: Pick<Info, 'attempt' | 'scheduledTimestampMs' | 'currentAttemptScheduledTimestampMs'>,
  previous: unknown,
  plannedInputTokens: () => number | undefined,
  model: string,
  prices: PriceTable,
): CallRecovery | undefined {
  const recovery = attemptRecovery(info);
  if (!recovery) return undefined;
  const lost = lostAttemptUsage(previous, plannedInputTokens());
  if (!lost) return recovery;
  const costUsdAgain = costOf(model, lost, prices);
  return { ...recovery, tokensAgain: lost.inputTokens + lost.outputTokens, ...(costUsdAgain !== undefined ? { costUsdAgain } : {}) };
}
