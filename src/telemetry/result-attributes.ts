/**
 * Attributes read from the agent activities' requests and results (model, tokens, cost, tool,
 * outcome), the same on the workflow's spans and on each attempt's span. Every value is checked
 * before use: tracing must never throw over an unexpected shape. Sandbox-safe.
 */
import type { Attributes } from '@opentelemetry/api';
import { isToolError } from '../protocol/tool-error';
import { ATTR } from './attributes';
import { toolErrorFacts, type FailureFacts } from './failure-attributes';

export function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
}

export function text(value: unknown, max = 200): string | undefined {
  return typeof value === 'string' ? value.slice(0, max) : undefined;
}

export function usageAttributes(usage: unknown): Attributes {
  const u = record(usage);
  const attrs: Attributes = {};
  if (typeof u.inputTokens === 'number') attrs[ATTR.inputTokens] = u.inputTokens;
  if (typeof u.outputTokens === 'number') attrs[ATTR.outputTokens] = u.outputTokens;
  if (typeof u.cacheReadTokens === 'number') attrs[ATTR.cacheReadTokens] = u.cacheReadTokens;
  if (typeof u.cacheWriteTokens === 'number') attrs[ATTR.cacheWriteTokens] = u.cacheWriteTokens;
  return attrs;
}

/** What a callModel request asks for (CallModelInput): a person's override, else the task's choice. */
export function modelRequestAttributes(request: unknown): Attributes {
  const r = record(request);
  const model = text(r.modelId) ?? text(record(r.model).name) ?? text(record(r.model).provider);
  return model ? { [ATTR.requestModel]: model } : {};
}

/** What a callModel result (ModelTurn) says: the model that answered, why it stopped, tokens, cost. */
export function modelResultAttributes(result: unknown): Attributes {
  const turn = record(result);
  const model = text(turn.model);
  return {
    ...(model ? { [ATTR.responseModel]: model } : {}),
    ...(typeof turn.stopReason === 'string' ? { [ATTR.stopReason]: [turn.stopReason] } : {}),
    ...(typeof turn.costUsd === 'number' ? { [ATTR.costUsd]: turn.costUsd } : {}),
    ...usageAttributes(turn.usage),
  };
}

/** What a runTool request names (RunToolInput); `effect` from the tool's manifest or definition. */
export function toolRequestAttributes(request: unknown, effect: string | undefined): Attributes {
  const r = record(request);
  const toolUseId = text(r.toolUseId);
  const approvalId = text(record(r.approval).id);
  return {
    [ATTR.toolName]: text(r.tool) ?? 'unknown',
    ...(effect ? { [ATTR.effect]: effect } : {}),
    ...(toolUseId ? { [ATTR.toolCallId]: toolUseId } : {}),
    ...(approvalId ? { [ATTR.approvalId]: approvalId } : {}),
  };
}

/** A runTool result (ToolOutcome): its kind, and the ToolError when the tool flagged its own answer. */
export function toolOutcome(result: unknown): { attributes: Attributes; failure?: FailureFacts } {
  const outcome = record(result);
  const attributes: Attributes = typeof outcome.kind === 'string' ? { [ATTR.toolOutcome]: outcome.kind } : {};
  // A tool that answered with its own ToolError (a semantic check, a partial page) failed for the model.
  return outcome.kind === 'flagged' && isToolError(outcome.error) ? { attributes, failure: toolErrorFacts(outcome.error) } : { attributes };
}
