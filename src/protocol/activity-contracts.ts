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

export interface AgentActivities {
  describeAgent(input: DescribeAgentInput): Promise<AgentManifest>;
  callModel(input: CallModelInput): Promise<ModelTurn>;
  runTool(input: RunToolInput): Promise<ToolOutcome>;
}
