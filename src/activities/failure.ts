/**
 * Turns a classified error into the ApplicationFailure Temporal acts on: `type` is the error class
 * (what retry policies match), the ToolError rides along in `details` for the workflow to read.
 */
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import type { ErrorClass } from '../protocol/tool-error';
import type { Classified } from '../errors/classify';

const MODELS_BUSINESS = new Set<ErrorClass>(['model', 'schema_mismatch', 'partial_data', 'semantic', 'policy']);
const BASE_DELAY_MS = 1_000;
const MAX_DELAY_MS = 30_000;

export function toApplicationFailure(classified: Classified, attempt: number, random: () => number = Math.random): ApplicationFailure {
  const error = { ...classified.error, attempts: attempt };
  if (error.error_class !== 'transient') {
    return ApplicationFailure.create({
      message: error.detail,
      type: error.error_class,
      nonRetryable: true,
      details: [error],
      // The model's mistakes and a tool's broken output are handled (the model is told): they
      // log at DEBUG, not as worker warnings with a stack trace. Outages and permanent errors still warn.
      ...(MODELS_BUSINESS.has(error.error_class) ? { category: ApplicationFailureCategory.BENIGN } : {}),
    });
  }
  return ApplicationFailure.create({
    message: error.detail,
    type: 'transient',
    nonRetryable: false,
    details: [error],
    nextRetryDelay: retryDelayMs(attempt, classified.retryAfterMs, random),
  });
}

/**
 * Exponential backoff with jitter, since Temporal's own backoff has none: many tasks failing
 * against one service must not come back in lockstep. A server's Retry-After is a floor.
 */
export function retryDelayMs(attempt: number, retryAfterMs: number | undefined, random: () => number = Math.random): number {
  if (retryAfterMs !== undefined) return Math.round(retryAfterMs + random() * Math.min(1_000, retryAfterMs * 0.2));
  const ceiling = Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** (attempt - 1));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/**
 * A transient failure this attempt ends for good, class and code kept: the task has a next model
 * to try (docs/model-fallback.md), which waiting out this one's retry budget would only delay.
 */
export function finalFailure(classified: Classified, attempt: number): ApplicationFailure {
  const error = { ...classified.error, attempts: attempt, retryable: false };
  return ApplicationFailure.create({ message: error.detail, type: error.error_class, nonRetryable: true, details: [error] });
}
