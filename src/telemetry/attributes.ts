/**
 * Span names and attribute keys of durable-agent's traces, shared by the workflow interceptors (in
 * the sandbox) and the activity interceptor (on the worker). Sandbox-safe: no imports.
 *
 * Model and tool attributes follow OpenTelemetry's GenAI semantic conventions (`gen_ai.*`) so
 * tracing back ends that understand them show tokens and models without configuration; what those
 * conventions do not cover is under `durable_agent.*`.
 */

export const SPAN = {
  /** The task's run; the root of the task's trace (or the child of a traced client's StartWorkflow span). */
  task: 'RunWorkflow',
  /** One model call and everything it led to (tool calls, approvals waited for), until the next model call. */
  turn: 'AgentTurn',
  /** A model call as the workflow saw it: from scheduling to result, every attempt and retry wait included. */
  modelCall: 'ModelCall',
  /** A tool call as the workflow saw it (`ToolCall:<tool>`). */
  toolCall: 'ToolCall',
  /** Any other activity the workflow scheduled (`StartActivity:<type>`). */
  activity: 'StartActivity',
  /** One attempt of an activity on a worker (`RunActivity:<type>`). */
  attempt: 'RunActivity',
  update: 'HandleUpdate',
  signal: 'HandleSignal',
} as const;

export const ATTR = {
  taskId: 'durable_agent.task_id',
  runId: 'durable_agent.run_id',
  agent: 'gen_ai.agent.name',
  turn: 'durable_agent.turn',
  outcome: 'durable_agent.outcome',
  turns: 'durable_agent.turns',
  toolCalls: 'durable_agent.tool_calls',
  requestModel: 'gen_ai.request.model',
  responseModel: 'gen_ai.response.model',
  stopReason: 'gen_ai.response.finish_reasons',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  cacheReadTokens: 'gen_ai.usage.cache_read.input_tokens',
  cacheWriteTokens: 'gen_ai.usage.cache_creation.input_tokens',
  costUsd: 'durable_agent.cost_usd',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  effect: 'durable_agent.tool.effect',
  toolOutcome: 'durable_agent.tool.outcome',
  approvalId: 'durable_agent.approval_id',
  /** The ToolError class (src/protocol/tool-error.ts) of a failed call, e.g. `transient`, `permanent`. */
  errorClass: 'durable_agent.error_class',
  /** The ToolError code, e.g. `http_503`, `not_found`. */
  errorCode: 'durable_agent.error_code',
  /** OpenTelemetry's generic error attribute; set to the error class. */
  errorType: 'error.type',
  retryable: 'durable_agent.retryable',
  activityType: 'temporal.activity.type',
  activityId: 'temporalActivityId',
  attempt: 'temporal.activity.attempt',
  local: 'temporal.activity.local',
  workflowId: 'temporalWorkflowId',
  updateId: 'temporalUpdateId',
} as const;

/** The sink the workflow's spans leave the sandbox through (called only when not replaying). */
export const SPAN_SINK = 'durableAgentSpans';
