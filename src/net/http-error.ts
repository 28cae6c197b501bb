/** A request a local HTTP service refuses: the status and message its client is shown. */
import { DurableAgentError } from '../errors/durable-agent-error';

export class HttpError extends DurableAgentError {
  /** `http_404`: the status, in the error taxonomy's words. */
  readonly code: string;
  constructor(
    readonly status: number,
    message: string,
    /** `title`: a page's heading (the inbox); `headers`: sent with the answer (Allow, WWW-Authenticate). */
    readonly details: { title?: string; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.code = `http_${status}`;
  }
}
