/** Timeouts and retry policies, chosen per activity and per tool from the tool's contract. */
import type { ActivityOptions } from '@temporalio/workflow';
import type { ToolManifest } from '../protocol/agent-manifest';
import { NON_RETRYABLE_ERROR_CLASSES } from '../protocol/tool-error';

// The activities set nextRetryDelay (with jitter) on transient failures; these intervals apply
// only to failures that carry none, such as a worker that died mid-call.
const baseRetry = {
  initialInterval: '1s',
  backoffCoefficient: 2,
  maximumInterval: '60s',
  nonRetryableErrorTypes: NON_RETRYABLE_ERROR_CLASSES,
} as const;

export const describeAgentOptions: ActivityOptions = {
  startToCloseTimeout: '30s',
  retry: { ...baseRetry, maximumAttempts: 5 },
};

export const modelCallOptions: ActivityOptions = {
  startToCloseTimeout: '5m',
  retry: { ...baseRetry, maximumAttempts: 10 },
};

/**
 * The worker heartbeats every running tool call (see runTool), so a call whose worker died is
 * retried after this long instead of after the tool's whole timeout; cancellation reaches the tool
 * through the same heartbeat.
 */
export const TOOL_HEARTBEAT_TIMEOUT_MS = 5_000;

export function toolCallOptions(tool: ToolManifest): ActivityOptions {
  return {
    startToCloseTimeout: tool.timeoutMs,
    ...(tool.timeoutMs > TOOL_HEARTBEAT_TIMEOUT_MS ? { heartbeatTimeout: TOOL_HEARTBEAT_TIMEOUT_MS } : {}),
    retry: { ...baseRetry, maximumAttempts: tool.maxAttempts },
  };
}
