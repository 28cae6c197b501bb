/**
 * Errors that tool authors throw when they already know the class of a failure. Anything else a
 * tool throws is classified from its type, status or code (see classify.ts).
 */
import type { ErrorClass } from '../protocol/tool-error';
import { DurableAgentError } from './durable-agent-error';

export class ToolFailure extends DurableAgentError {
  constructor(
    readonly errorClass: ErrorClass,
    readonly code: string,
    detail: string,
    readonly hint?: string,
    /** For transient failures: how long the service asked us to wait, in ms. */
    readonly retryAfterMs?: number,
  ) {
    super(detail);
  }
}

/** A non-2xx answer from an HTTP service, with what the classifier needs to read. */
export class HttpStatusError extends DurableAgentError {
  /** The code classify() gives it: `http_503`. */
  readonly code: string;
  constructor(
    readonly status: number,
    readonly body: string,
    readonly headers: Record<string, string> = {},
    readonly url?: string,
  ) {
    super(`HTTP ${status}${url ? ` from ${url}` : ''}: ${body.slice(0, 200)}`);
    this.code = `http_${status}`;
  }
}
