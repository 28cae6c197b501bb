/**
 * What a span says about a failure: the ToolError class and code the activity boundary already
 * decided (carried as the ApplicationFailure's type and first detail), so a trace, the retry policy
 * and the model all name the same class. Sandbox-safe: used by the workflow interceptors and the
 * activity interceptor alike.
 */
import { ActivityFailure, ApplicationFailure, CancelledFailure, TimeoutFailure } from '@temporalio/common';
import { isErrorClass, isToolError, type ToolError } from '../protocol/tool-error';
import { ATTR } from './attributes';

export interface FailureFacts {
  errorClass?: string;
  code?: string;
  retryable?: boolean;
  message: string;
}

export function failureFacts(err: unknown): FailureFacts {
  const cause = err instanceof ActivityFailure && err.cause ? err.cause : err;
  const message = cause instanceof Error ? cause.message : String(cause);
  if (cause instanceof ApplicationFailure) {
    const carried = cause.details?.[0];
    if (isToolError(carried)) return { ...toolErrorFacts(carried), message };
    return {
      ...(isErrorClass(cause.type) ? { errorClass: cause.type } : {}),
      ...(cause.type ? { code: cause.type } : {}),
      retryable: !cause.nonRetryable,
      message,
    };
  }
  // The activity never answered (its worker died, or it ran past its timeout): transient by the taxonomy.
  if (cause instanceof TimeoutFailure) return { errorClass: 'transient', code: 'timeout', message };
  if (cause instanceof CancelledFailure) return { code: 'cancelled', message };
  return { message };
}

export function toolErrorFacts(error: ToolError): Omit<FailureFacts, 'message'> & { message: string } {
  return { errorClass: error.error_class, code: error.code, retryable: error.retryable, message: error.detail };
}

/** The attributes of a failure, for Span.setAttributes. */
export function failureAttributes(facts: FailureFacts): Record<string, string | boolean> {
  return {
    ...(facts.errorClass ? { [ATTR.errorClass]: facts.errorClass, [ATTR.errorType]: facts.errorClass } : {}),
    ...(facts.code ? { [ATTR.errorCode]: facts.code } : {}),
    ...(facts.retryable !== undefined ? { [ATTR.retryable]: facts.retryable } : {}),
  };
}
