/**
 * Reads a failed activity back into a ToolError. The activity already classified the error and put
 * it in the failure's details; timeouts and exhausted retries are named here.
 */
import { TimeoutType } from '@temporalio/common';
import { ActivityFailure, ApplicationFailure, TimeoutFailure } from '@temporalio/workflow';
import type { ToolManifest } from '../../protocol/agent-manifest';
import { isErrorClass, isToolError, toolError, type ToolError } from '../../protocol/tool-error';

export function toolErrorFromFailure(err: unknown, tool: ToolManifest): ToolError {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure) {
    const carried = cause.details?.[0];
    const base = isToolError(carried) ? carried : toolError(isErrorClass(cause.type) ? cause.type : 'permanent', cause.type ?? 'failed', cause.message);
    if (base.error_class === 'transient') {
      // Temporal has spent the retry budget: the model must not retry blindly either.
      return {
        ...base,
        retryable: false,
        hint: `Retried ${base.attempts} time(s); ${tool.name} is still failing. Try later, another tool, or tell the user.`,
      };
    }
    return base;
  }
  if (cause instanceof TimeoutFailure) {
    const unknownOutcome = tool.effect !== 'read' && !tool.idempotent;
    const detail =
      cause.timeoutType === TimeoutType.HEARTBEAT
        ? `${tool.name} stopped heartbeating: the worker running it died or lost its connection mid-call.`
        : `${tool.name} did not finish within ${tool.timeoutMs} ms.`;
    return toolError(
      'transient',
      'timeout',
      detail,
      unknownOutcome ? 'The outcome is unknown: it may or may not have taken effect. Check before repeating it.' : 'Try narrower arguments or another tool.',
      tool.maxAttempts,
    );
  }
  return toolError('permanent', 'tool_failed', err instanceof Error ? err.message : String(err));
}

/** The ToolError a failure carries (directly or as its cause), or a permanent `task_failed` describing it. */
export function taskErrorFrom(err: unknown): ToolError {
  if (err instanceof ApplicationFailure && isToolError(err.details?.[0])) return err.details[0];
  const cause = (err as { cause?: unknown })?.cause;
  if (cause instanceof ApplicationFailure && isToolError(cause.details?.[0])) return cause.details[0];
  const message = err instanceof Error ? `${err.message}${cause instanceof Error ? `: ${cause.message}` : ''}` : String(err);
  return toolError('permanent', 'task_failed', message);
}
