/** Exit codes: stable, so scripts can branch on them. */
export const EXIT = {
  ok: 0,
  /** The operation ran and failed (a task failed, a command was refused). */
  failed: 1,
  /** Bad arguments. */
  usage: 2,
  /** No such task. */
  notFound: 3,
  /** Temporal could not be reached. */
  unreachable: 4,
  /** A decision was recorded in the task's history but not yet taken: it applies when a worker runs the task. */
  recorded: 5,
} as const;
import { DurableAgentError } from '../errors/durable-agent-error';

export class CliError extends DurableAgentError {
  readonly code = 'cli_failed';
  constructor(
    message: string,
    readonly exitCode: number = EXIT.failed,
  ) {
    super(message);
  }
}

export const usageError = (message: string) => new CliError(message, EXIT.usage);
