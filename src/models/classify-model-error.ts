/**
 * Classifies a Messages API failure into the same taxonomy as tool errors: by the SDK's error class
 * and HTTP status first, then the headers the API sends to steer clients (`retry-after-ms`,
 * `retry-after`, `x-should-retry`), the way Temporal's own model-activity classifiers do.
 */
import Anthropic from '@anthropic-ai/sdk';
import { classify, isNamed, messageOf, type Classified } from '../errors/classify';
import { headerValue, retryAfterMs } from '../errors/retry-after';
import { ToolFailure } from '../errors/tool-failure';
import { toolError, type ErrorClass, type ToolError } from '../protocol/tool-error';

const UNBLOCK_HINT =
  'This is a setting or a durable-agent bug, not something the model can fix: a person can unblock the task ' +
  'with a different max_tokens or model (`durable-agent unblock TASK --max-tokens N` or `--model ID`).';

/** Statuses worth asking again, as the SDK's own retry loop and Temporal's contrib classifiers treat them. */
function retryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** An `error` event mid-stream carries no status; its type says what it would have been. */
const STATUS_OF_TYPE: Record<string, number> = {
  overloaded_error: 529,
  api_error: 500,
  rate_limit_error: 429,
  timeout_error: 504,
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  billing_error: 402,
};

export function classifyModelError(err: unknown): Classified {
  if (err instanceof ToolFailure) return classify(err);
  if (err instanceof Anthropic.APIConnectionTimeoutError) {
    return { error: toolError('transient', 'api_timeout', err.message, 'The model API did not answer in time.') };
  }
  if (err instanceof Anthropic.APIUserAbortError) {
    return { error: toolError('transient', 'aborted', err.message, 'The call was aborted before the answer was complete.') };
  }
  if (err instanceof Anthropic.APIConnectionError) {
    return { error: toolError('transient', 'api_connection', err.message, 'The model API could not be reached.') };
  }
  if (err instanceof Anthropic.APIError) {
    if (typeof err.status === 'number') return withHeaders(byStatus(err, err.status), err.headers);
    const status = STATUS_OF_TYPE[err.type ?? ''];
    if (status !== undefined) {
      const { error } = byStatus(err, status);
      return { error: { ...error, code: `stream_${err.type}`, detail: `Mid-stream: ${error.detail}` } };
    }
    return { error: toolError('transient', 'stream_error', detailOf(err), 'The answer broke off mid-stream.') };
  }
  // The stream ended before message_stop, or its events came out of order: asking again helps.
  if (err instanceof Anthropic.AnthropicError && /stream ended|without producing|event order|request ended/i.test(err.message)) {
    return { error: toolError('transient', 'stream_cut', err.message, 'The answer broke off mid-stream.') };
  }
  // A body cut off mid-JSON is a network problem here, not a broken contract: asking again helps.
  if (isNamed(err, 'SyntaxError')) {
    return { error: toolError('transient', 'truncated_response', `The model API's answer was cut off: ${messageOf(err)}`) };
  }
  return classify(err);
}

/** The API's own words when it gave them, not the SDK's "400 {json}". */
function detailOf(err: InstanceType<typeof Anthropic.APIError>): string {
  return err.apiMessage ?? err.message;
}

function byStatus(err: InstanceType<typeof Anthropic.APIError>, status: number): Classified {
  const detail = detailOf(err);
  const error = (cls: ErrorClass, code: string, hint?: string): Classified => ({ error: toolError(cls, code, detail, hint) });
  switch (status) {
    case 400:
      if (/prompt is too long|context window|too many tokens|input length/i.test(detail)) {
        return error('resource', 'context_too_long', 'The conversation no longer fits the model.');
      }
      return error('permanent', 'invalid_request', `The model API refused the request. ${UNBLOCK_HINT}`);
    case 401:
      return error('permanent', 'authentication_failed', 'Check ANTHROPIC_API_KEY: the model API refused it.');
    case 402:
      return error('resource', 'billing', 'A person must settle the API account (billing).');
    case 403:
      return error('permanent', 'permission_denied', 'Check ANTHROPIC_API_KEY: the model API refused it.');
    case 404:
      return error('permanent', 'model_not_found', `The model API does not know this model. ${UNBLOCK_HINT}`);
    case 413:
      return error('resource', 'request_too_large', 'The request is larger than the API accepts; the conversation must shrink.');
    case 429:
      // A spend or quota limit will not lift by waiting a few seconds.
      if (/spend|credit balance|billing|quota/i.test(detail)) return error('resource', 'spend_limit', 'A person must raise the API spend limit.');
      return error('transient', 'rate_limited', 'Rate limited by the model API.');
  }
  if (status === 529) return error('transient', 'overloaded', 'The model API is overloaded.');
  if (retryableStatus(status)) return error('transient', `http_${status}`, 'The model API is temporarily unavailable.');
  return error('permanent', `http_${status}`);
}

/** `x-should-retry` overrides the status's default; a retry honours `retry-after-ms` / `retry-after`. */
function withHeaders(classified: Classified, headers: unknown): Classified {
  let error: ToolError = classified.error;
  const shouldRetry = headerValue(headers, 'x-should-retry')?.trim().toLowerCase();
  if (shouldRetry === 'true' && error.error_class !== 'transient') {
    error = { ...error, error_class: 'transient', retryable: true, hint: 'The model API asked for this request to be retried (x-should-retry).' };
  } else if (shouldRetry === 'false' && error.error_class === 'transient') {
    error = { ...error, error_class: 'permanent', retryable: false, hint: 'The model API said retrying this request will not help (x-should-retry: false).' };
  }
  if (error.error_class !== 'transient') return { error };
  const wait = retryAfterMs(headers);
  return wait === undefined ? { error } : { error, retryAfterMs: wait };
}
