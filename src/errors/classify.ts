/**
 * Classification happens once, at the activity boundary: typed errors first (our own failures,
 * HTTP status, Node error codes, JSON errors), message text last.
 */
import { toolError, type ToolError } from '../protocol/tool-error';
import { retryAfterMs as readRetryAfter } from './retry-after';
import { ToolFailure } from './tool-failure';

export interface Classified {
  error: ToolError;
  /** Set when the failing service said how long to wait. */
  retryAfterMs?: number;
}

const TRANSIENT_STATUS = new Set([408, 425, 429, 500, 502, 503, 504, 529]);

/**
 * Transport failures, split by whether the request could already have left: a write that failed
 * after sending may have taken effect, one that failed before cannot have. Both stay transient
 * (Temporal retries them); `outcomeUnknown` (protocol/outcome-unknown.ts) reads the code.
 */
const SENT_MAYBE = 'The request may have reached the service and taken effect before the connection failed.';
const NOT_SENT = 'The request never reached the service, so nothing was done.';

const TRANSPORT_CODES: Record<string, [code: string, note: string]> = {
  // The connection died while the request or its answer was on the wire.
  ECONNRESET: ['connection_reset', SENT_MAYBE],
  EPIPE: ['connection_reset', SENT_MAYBE],
  ECONNABORTED: ['connection_reset', SENT_MAYBE],
  UND_ERR_SOCKET: ['connection_reset', SENT_MAYBE],
  UND_ERR_CLOSED: ['connection_reset', SENT_MAYBE],
  // Sent, then no (complete) answer in time.
  UND_ERR_HEADERS_TIMEOUT: ['response_timeout', SENT_MAYBE],
  UND_ERR_BODY_TIMEOUT: ['response_timeout', SENT_MAYBE],
  // A socket-level timeout can hit a connection that already carried the request: assume it did.
  ETIMEDOUT: ['connection_timeout', SENT_MAYBE],
  // No connection was ever made.
  ECONNREFUSED: ['connection_refused', NOT_SENT],
  UND_ERR_CONNECT_TIMEOUT: ['connect_timeout', NOT_SENT],
  ENOTFOUND: ['dns_failure', NOT_SENT],
  EAI_AGAIN: ['dns_failure', NOT_SENT],
  EHOSTUNREACH: ['network_unreachable', NOT_SENT],
  ENETUNREACH: ['network_unreachable', NOT_SENT],
  ENETDOWN: ['network_unreachable', NOT_SENT],
  // Local exhaustion, before any socket was written.
  EBUSY: ['local_busy', NOT_SENT],
  EMFILE: ['too_many_open_files', NOT_SENT],
};

const RESOURCE_CODES: Record<string, string> = {
  ENOSPC: 'disk_full',
  EDQUOT: 'disk_full',
  ENOMEM: 'out_of_memory',
};

const PERMANENT_CODES: Record<string, [code: string, hint: string]> = {
  ENOENT: ['not_found', 'Check the path or name; list what exists first.'],
  EACCES: ['permission_denied', 'This is not allowed; do not retry. Choose another approach or ask the user.'],
  EPERM: ['permission_denied', 'This is not allowed; do not retry. Choose another approach or ask the user.'],
  EISDIR: ['is_a_directory', 'The path is a directory; pass a file path.'],
  ENOTDIR: ['not_a_directory', 'A parent of the path is a file, not a directory.'],
  EEXIST: ['already_exists', 'Something already exists there.'],
};

export function classify(err: unknown): Classified {
  if (err instanceof ToolFailure) {
    const error = toolError(err.errorClass, err.code, err.message, err.hint);
    return err.retryAfterMs === undefined ? { error } : { error, retryAfterMs: err.retryAfterMs };
  }
  const status = httpStatusOf(err);
  if (status !== undefined) return classifyHttp(err, status);

  const code = nodeCodeOf(err);
  if (code) {
    const transport = TRANSPORT_CODES[code];
    if (transport) {
      return { error: toolError('transient', transport[0], `${messageOf(err)} (${code}). ${transport[1]}`, 'A temporary network failure.') };
    }
    const resource = RESOURCE_CODES[code];
    if (resource) {
      return { error: toolError('resource', resource, messageOf(err), 'A person has to free resources first.') };
    }
    const permanent = PERMANENT_CODES[code];
    if (permanent) return { error: toolError('permanent', permanent[0], messageOf(err), permanent[1]) };
  }
  if (isTimeout(err)) {
    return { error: toolError('transient', 'timeout', messageOf(err), 'The call timed out.') };
  }
  if (isNamed(err, 'SyntaxError')) {
    return {
      error: toolError('schema_mismatch', 'invalid_json', `Tool output is not valid JSON: ${messageOf(err)}`, "The tool itself is broken; don't retry with the same arguments."),
    };
  }
  return classifyByMessage(messageOf(err));
}

function classifyHttp(err: unknown, status: number): Classified {
  const detail = messageOf(err);
  const headers = (err as { headers?: unknown }).headers;
  if (TRANSIENT_STATUS.has(status)) {
    const wait = readRetryAfter(headers);
    // A 5xx came from a server that had the request: it (or the one behind a gateway) may have acted on it.
    const note = status >= 500 ? ` The request reached the service; it may have taken effect.` : '';
    const error = toolError('transient', `http_${status}`, detail + note, 'The service is temporarily unavailable.');
    return wait === undefined ? { error } : { error, retryAfterMs: wait };
  }
  if ((status === 400 || status === 409 || status === 422) && isIdempotencyKeyReuse(err)) {
    return {
      error: toolError(
        'permanent',
        'idempotency_key_reused',
        `The service refused the call: its idempotency key was already used for a request with other arguments, so this call was not run. ${detail}`,
        'This is a bug in how the call was keyed, not in the arguments; do not repeat it. Tell the user or a person.',
      ),
    };
  }
  if (status === 409 && readRetryAfter(headers) !== undefined) {
    // A conflict the service says will clear (e.g. a request with the same idempotency key still running).
    const error = toolError('transient', 'conflict_retry_later', detail, 'The same request is still being handled; it will be retried.');
    return { error, retryAfterMs: readRetryAfter(headers)! };
  }
  if (status === 401 || status === 403) {
    return {
      error: toolError('permanent', 'permission_denied', detail, 'Access is denied; retrying will not help. Use another tool or ask the user.'),
    };
  }
  if (status === 404 || status === 410) {
    return { error: toolError('permanent', 'not_found', detail, 'It does not exist; check the identifier.') };
  }
  if (status === 413) {
    return { error: toolError('resource', 'payload_too_large', detail, 'Ask for less at once.') };
  }
  if (status === 400 || status === 422) {
    return { error: toolError('model', `http_${status}`, detail, 'The request was rejected as invalid; fix the arguments.') };
  }
  return { error: toolError('permanent', `http_${status}`, detail) };
}

function classifyByMessage(message: string): Classified {
  const m = message.toLowerCase();
  if (/(socket hang up|connection reset|other side closed|broken pipe)/.test(m)) {
    return { error: toolError('transient', 'connection_reset', `${message}. ${SENT_MAYBE}`, 'A temporary network failure.') };
  }
  if (/(connection refused)/.test(m)) {
    return { error: toolError('transient', 'connection_refused', `${message}. ${NOT_SENT}`, 'A temporary network failure.') };
  }
  if (/timed? ?out/.test(m)) {
    return { error: toolError('transient', 'timeout', message, 'The call timed out; it may or may not have taken effect.') };
  }
  if (/(rate limit|temporar|unavailable|overloaded)/.test(m)) {
    return { error: toolError('transient', 'transient_text', message, 'A temporary failure.') };
  }
  if (/(out of memory|no space left|disk full|token limit|context length|prompt is too long)/.test(m)) {
    return { error: toolError('resource', 'resource_text', message, 'A person has to free resources first.') };
  }
  if (/(permission denied|forbidden|unauthori[sz]ed|not allowed)/.test(m)) {
    return { error: toolError('permanent', 'permission_denied', message, 'Access is denied; retrying will not help.') };
  }
  if (/(not found|no such|does not exist)/.test(m)) {
    return { error: toolError('permanent', 'not_found', message, 'It does not exist; check the identifier.') };
  }
  return { error: toolError('permanent', 'tool_failed', message, 'The tool failed; try another approach.') };
}

/**
 * Stripe's shape (an `idempotency_error` / `idempotency_key_reused` code, or its message) in the
 * answer's body: the key was first used with other parameters.
 */
function isIdempotencyKeyReuse(err: unknown): boolean {
  const body = (err as { body?: unknown }).body;
  const text = typeof body === 'string' ? body : messageOf(err);
  return /idempotency_key_reused|idempotency_error|can only be used with the same parameters/i.test(text);
}

function httpStatusOf(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const status = (err as { status?: unknown }).status;
  return typeof status === 'number' && status >= 100 && status < 600 ? status : undefined;
}

/** Node's code, or the code of a cause (fetch wraps socket errors in `TypeError: fetch failed`). */
function nodeCodeOf(err: unknown, depth = 0): string | undefined {
  if (typeof err !== 'object' || err === null || depth > 3) return undefined;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && /^[A-Z_]+$/.test(code)) return code;
  return nodeCodeOf((err as { cause?: unknown }).cause, depth + 1);
}

function isTimeout(err: unknown): boolean {
  const name = (err as { name?: unknown } | null)?.name;
  return name === 'TimeoutError' || name === 'AbortError';
}

/**
 * Errors are read by shape, not `instanceof`: an error from another realm (a vm context, a worker
 * thread, a test runner's sandbox) is still an error.
 */
export function isNamed(err: unknown, name: string): boolean {
  return typeof err === 'object' && err !== null && (err as { name?: unknown }).name === name;
}

export function messageOf(err: unknown): string {
  if (typeof err === 'object' && err !== null && typeof (err as { message?: unknown }).message === 'string') {
    const { message, name } = err as { message: string; name?: unknown };
    return message || (typeof name === 'string' ? name : 'error');
  }
  if (typeof err === 'string') return err;
  return JSON.stringify(err) ?? String(err);
}
