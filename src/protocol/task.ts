/** The data that crosses the workflow boundary: task input, live status, final result. */
import type { Message, Usage } from './messages';
import type { ToolError } from './tool-error';

/** Which model answers a task. Chosen when the task starts and recorded in its input. */
export type ModelChoice =
  | { provider: 'scripted'; /** Absolute path to a JSON file of assistant turns. */ script: string }
  | { provider: 'anthropic'; /** Default: DEFAULT_ANTHROPIC_MODEL. */ model?: string; maxTokens?: number };

export interface TaskInput {
  /** Name of an agent registered on the worker (see defineAgent). */
  agent: string;
  /** The person's request: the first user message. */
  prompt: string;
  /** Default: the agent's own model choice. */
  model?: ModelChoice;
  /** Default: the agent's maxTurns, else DEFAULT_MAX_TURNS. */
  maxTurns?: number;
  /** Who started the task, for the audit trail. */
  startedBy?: string;
}

export const DEFAULT_MAX_TURNS = 20;

/** The values of the `AgentStatus` search attribute. */
export type AgentStatus = 'running' | 'awaiting_approval' | 'blocked' | 'completed' | 'failed' | 'cancelled';
export const AGENT_STATUSES: AgentStatus[] = [
  'running',
  'awaiting_approval',
  'blocked',
  'completed',
  'failed',
  'cancelled',
];

/** Finer than AgentStatus: what the task is doing right now. */
export type TaskPhase =
  | 'starting'
  | 'calling_model'
  | 'running_tools'
  | 'awaiting_approval'
  | 'blocked'
  | 'completed'
  | 'failed'
  | 'cancelled';

export type TaskEventKind =
  | 'task_started'
  | 'model_replied'
  | 'tool_called'
  | 'tool_succeeded'
  | 'tool_failed'
  | 'task_completed'
  | 'task_failed'
  | 'task_cancelled';

export interface TaskEvent {
  seq: number;
  /** ISO time from the workflow clock (deterministic on replay). */
  at: string;
  kind: TaskEventKind;
  turn: number;
  tool?: string;
  toolUseId?: string;
  /** One line for people: arguments, outcome, error. */
  detail: string;
}

export interface BudgetReading {
  used: number;
  limit: number;
  left: number;
}

export interface TaskStatus {
  agent: string;
  phase: TaskPhase;
  agentStatus: AgentStatus;
  model: string;
  turn: number;
  budgets: { turns: BudgetReading };
  toolCalls: { total: number; succeeded: number; failed: number };
  /** Approvals waiting on a person (filled once approvals exist; always present so clients can rely on it). */
  pendingApprovals: unknown[];
  escalations: unknown[];
  lastError?: ToolError;
  usage: Usage;
  costUsd: number;
  /** The most recent events (at most STATUS_EVENT_WINDOW); `eventCount` counts all of them. */
  events: TaskEvent[];
  eventCount: number;
  result?: TaskResult;
}

export const STATUS_EVENT_WINDOW = 100;

export type TaskOutcome =
  /** The model ended its turn with an answer. */
  | 'answered'
  /** The turn budget ran out; `text` is whatever the model said last. */
  | 'max_turns'
  /** The model declined (stop_reason `refusal`). */
  | 'refused';

export interface TaskResult {
  outcome: TaskOutcome;
  text: string;
  turns: number;
  toolCalls: number;
  usage: Usage;
  costUsd: number;
  model: string;
}

export interface TranscriptView {
  system: string;
  messages: Message[];
}

/** A short label for a model choice, shown before the first model call answers. */
export function modelLabel(choice: ModelChoice): string {
  return choice.provider === 'scripted'
    ? `scripted:${choice.script.split(/[\\/]/).pop()}`
    : (choice.model ?? 'claude (default)');
}
