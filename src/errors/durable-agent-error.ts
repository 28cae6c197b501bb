/**
 * The base of every error this project throws on purpose. `code` is the error taxonomy's own field
 * (ToolError's `code`: stable, machine-readable snake_case such as `blob_missing`), so a caller, a
 * front end or a log query branches on the code, never on the message. Lower case on purpose: it is
 * never mistaken for a Node code (ENOENT), which classify() reads as a transport or file failure.
 */
import type { ToolError } from '../protocol/tool-error';

export type ErrorCode = ToolError['code'];

export abstract class DurableAgentError extends Error {
  abstract readonly code: ErrorCode;
}
