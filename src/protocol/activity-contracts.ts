/**
 * The activities' signatures, shared by the worker that implements them and the workflow that
 * proxies them (a type-only import there).
 */
import type { AgentManifest } from './agent-manifest';
import type { Message, ModelTurn, ToolSpec } from './messages';
import type { ModelChoice } from './task';
import type { ToolError } from './tool-error';

export interface DescribeAgentInput {
  agent: string;
  model?: ModelChoice;
}

export interface CallModelInput {
  model: ModelChoice;
  system: string;
  messages: Message[];
  tools: ToolSpec[];
}

export interface RunToolInput {
  agent: string;
  tool: string;
  input: unknown;
  toolUseId: string;
}

/** A tool call that ran: a validated payload, or a valid payload flagged by a semantic check. */
export type ToolOutcome =
  | { kind: 'ok'; output: unknown }
  | { kind: 'flagged'; output: unknown; error: ToolError };

export interface PrepareToolCallInput {
  agent: string;
  tool: string;
  input: unknown;
}

/** The arguments as the tool will see them (coerced, defaults applied), or why they are invalid. */
export type PreparedToolCall = { ok: true; input: unknown } | { ok: false; error: ToolError };

export interface NotifyInput {
  taskId: string;
  agent: string;
  level: 'inform' | 'confirm' | 'block';
  code: string;
  message: string;
}

export interface AgentActivities {
  prepareToolCall(input: PrepareToolCallInput): Promise<PreparedToolCall>;
  notify(input: NotifyInput): Promise<void>;
  describeAgent(input: DescribeAgentInput): Promise<AgentManifest>;
  callModel(input: CallModelInput): Promise<ModelTurn>;
  runTool(input: RunToolInput): Promise<ToolOutcome>;
}
