/**
 * Whether a failed call may still have taken effect. Sandbox-safe (no Node imports): the workflow's
 * escalation policy reads it to decide that a write must not run again without a person or a key
 * the service honours.
 */
import type { ToolError } from './tool-error';

/**
 * Codes the classifier (errors/classify.ts) gives to failures after the request could have left:
 * the connection died mid-call or no answer came. A refused connection or a failed DNS lookup
 * never reached the service, so those codes are absent.
 */
export const OUTCOME_UNKNOWN_CODES: readonly string[] = [
  'timeout',
  'connection_reset',
  'response_timeout',
  'connection_timeout',
  // Another request with the same idempotency key is still running: it may yet succeed.
  'conflict_retry_later',
  // A write's earlier attempt was lost and its reconcile check could not tell whether it took effect.
  'unreconciled',
];

/** The code of a write whose reconcile check could not settle an earlier attempt (activities/run-tool.ts). */
export const UNRECONCILED_CODE = 'unreconciled';

/** A 5xx came from a server (or a gateway in front of one) that held the request. */
const SERVER_ERROR = /^http_5\d\d$/;

export function outcomeUnknown(error: ToolError): boolean {
  if (error.code === 'timeout') return true;
  if (error.error_class !== 'transient') return false;
  return OUTCOME_UNKNOWN_CODES.includes(error.code) || SERVER_ERROR.test(error.code);
}
