/**
 * The base of every error this project throws on purpose. `code` is the error taxonomy's own field
 * (ToolError's `code`: stable, machine-readable snake_case such as `blob_missing`), so a caller, a
 * front end or a log query branches on the code, never on the message. Lower case on purpose: it is
 * never mistaken for a Node code (ENOENT), which classify() reads as a transport or file failure.
 *
 * `name` is set once, here, from the class that was constructed (`new.target.name`, as Temporal's
 * SymbolBasedInstanceOfError names its errors), so a subclass never spells its own name. Code built
 * by tsc keeps class names; the workflow bundle (webpack in development mode) does not minify.
 */
import type { ToolError } from '../protocol/tool-error';

export type ErrorCode = ToolError['code'];

export abstract class DurableAgentError extends Error {
  abstract readonly code: ErrorCode;

  constructor(message?: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}
