/** Timeouts and retry policies, chosen per activity and per tool from the tool's contract. */
import { ActivityCancellationType, type ActivityOptions, type LocalActivityOptions } from '@temporalio/workflow';
import type { ToolManifest } from '../../protocol/agent-manifest';
import { NON_RETRYABLE_ERROR_CLASSES } from '../../protocol/tool-error';
import { LOCAL_READ_TIMEOUT_MS } from './fast-reads';

// The activities set nextRetryDelay (with jitter) on transient failures; these intervals apply
// only to failures that carry none, such as a worker that died mid-call, whose retry should start
// as soon as the heartbeat timeout has noticed it.
const baseRetry = {
  initialInterval: '200ms',
  backoffCoefficient: 2,
  maximumInterval: '60s',
  nonRetryableErrorTypes: NON_RETRYABLE_ERROR_CLASSES,
} as const;

/**
 * The worker heartbeats every running model and tool call (see the activities), so a call whose
 * worker died is retried after this long instead of after its whole timeout; cancellation reaches a
 * tool through the same heartbeat. 3 s (5 s before): the retry starts about three seconds after a
 * SIGKILL. 1 s (the retry after about a second) was tried and measured too short: with 50 tasks on
 * two workers on a loaded two-core machine, live tool calls missed their heartbeats and ran twice
 * (test/integration/credentials-concurrency.test.ts failed twice in two runs, and passes at 3 s).
 * The price of 3 s: the worker beats every second (60 heartbeat calls a minute per running call, 4
 * times as many as at 5 s), and an event loop stalled for 2-3 s (a synchronous tool, a long GC
 * pause, an overloaded machine) has its call retried while it still runs: a second execution of a
 * read, an "outcome unknown" block for a non-idempotent write. Changing it changes only new runs'
 * activity options: committed histories replay (the SDK does not compare timeouts).
 */
export const HEARTBEAT_TIMEOUT_MS = 3_000;

/**
 * The short activities (prepareToolCall, notify, storeAudit, loadText). Without a
 * heartbeat, one of them on a worker that died held its task for the whole 30 s timeout
 * (prepareToolCall runs before every tool call); with it, the retry starts on another worker within
 * HEARTBEAT_TIMEOUT_MS. The activities heartbeat while they run (withHeartbeats).
 */
export const shortActivityOptions: ActivityOptions = {
  startToCloseTimeout: '30s',
  retry: { ...baseRetry, maximumAttempts: 5 },
  heartbeatTimeout: HEARTBEAT_TIMEOUT_MS,
};

/**
 * The run's manifest (describeAgent), asked of the worker that runs the run's first workflow task,
 * within that task: a local activity, its answer kept in a marker. As a regular activity it cost
 * every run a workflow task and an activity's round trip through the server (throughput bench, 1,000
 * tasks: server CPU per task 74.6 -> 61.3-64.8 ms, tasks/s 13.9-14.0 -> 15.1-15.9). The price: a
 * worker killed while it answers leaves the run to the workflow task timeout (10 s), not to a
 * heartbeat timeout; the answer takes milliseconds, an MCP agent's first listing of its servers'
 * tools some more.
 */
export const describeAgentOptions: LocalActivityOptions = {
  startToCloseTimeout: '30s',
  retry: { ...baseRetry, maximumAttempts: 5 },
};

/** A fork's start: reading the origin's history and copying its content can take a while on a long task. */
export const forkPointOptions: ActivityOptions = {
  startToCloseTimeout: '2m',
  heartbeatTimeout: HEARTBEAT_TIMEOUT_MS,
  retry: { ...baseRetry, maximumAttempts: 5 },
};

/**
 * The model call. Budgets are hard caps: an interrupt waits until the worker has aborted the
 * request, so what the call cost comes back with the cancellation.
 */
export const modelCallOptions: ActivityOptions = {
  startToCloseTimeout: '5m',
  heartbeatTimeout: HEARTBEAT_TIMEOUT_MS,
  retry: { ...baseRetry, maximumAttempts: 10 },
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
};

/**
 * The `auto` classifier's call (a model call, or the agent's function): the model's retry classes,
 * a few attempts; a call that fails for good means a person decides (auto-permission.ts).
 */
export const classifierCallOptions: ActivityOptions = {
  startToCloseTimeout: '2m',
  heartbeatTimeout: HEARTBEAT_TIMEOUT_MS,
  retry: { ...baseRetry, maximumAttempts: 4 },
};

/**
 * A graded outcome's grader call: the model call's retry classes and attempts, and a heartbeat, so a
 * grader call whose worker died is retried within HEARTBEAT_TIMEOUT_MS and its grade recorded once.
 */
export const gradeCallOptions: ActivityOptions = {
  startToCloseTimeout: '5m',
  heartbeatTimeout: HEARTBEAT_TIMEOUT_MS,
  retry: { ...baseRetry, maximumAttempts: 10 },
};

/** The durable summary's call: a few attempts, then the oldest turns are trimmed instead (the task never waits on it). */
export const summaryCallOptions: ActivityOptions = {
  startToCloseTimeout: '5m',
  retry: { ...baseRetry, maximumAttempts: 3 },
};

/**
 * A tool call. A cancelled task reports `cancelled` only once the call has actually stopped (its
 * heartbeat saw the cancellation), never while a write may still be running.
 */
export function toolCallOptions(tool: ToolManifest): ActivityOptions {
  return {
    ...localToolCallOptions(tool),
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    ...(tool.timeoutMs > HEARTBEAT_TIMEOUT_MS ? { heartbeatTimeout: HEARTBEAT_TIMEOUT_MS } : {}),
  };
}

/** A local tool: the tool's timeout and retries, and no heartbeat (local activities have none). */
export function localToolCallOptions(tool: ToolManifest): LocalActivityOptions {
  return {
    startToCloseTimeout: tool.timeoutMs,
    retry: { ...baseRetry, maximumAttempts: tool.maxAttempts },
  };
}

/**
 * A fast read run locally (fast-reads.ts): one attempt within LOCAL_READ_TIMEOUT_MS (or the tool's
 * own timeout when shorter); anything else is the regular path's to retry.
 */
export function fastReadOptions(tool: ToolManifest): LocalActivityOptions {
  return {
    startToCloseTimeout: Math.min(tool.timeoutMs, LOCAL_READ_TIMEOUT_MS),
    retry: { ...baseRetry, maximumAttempts: 1 },
  };
}
