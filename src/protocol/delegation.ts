/**
 * Sub-agents as child tasks: the names, limits and shapes a parent task, its children, the worker
 * and the front ends share. A delegation tool per sub-agent is offered to the model; each call starts
 * the sub-agent's own `agentTask` as a child workflow with a budget slice carved out of the parent's.
 * Sandbox-safe.
 */
import type { Usage } from './messages';
import { derivedId, DERIVED_ID_MAX_BYTES } from './task-ids';

/** Children one task runs at once; more delegation calls in a turn wait for a free place. */
export const DEFAULT_MAX_CONCURRENT_SUBAGENTS = 4;
/** How deep tasks may delegate: a top task is depth 0, its children 1, ... A task at this depth delegates nothing. */
export const DEFAULT_MAX_DELEGATION_DEPTH = 3;
/** The deepest a task input may say it is (a bound on a number an attacker writes, not a policy). */
export const MAX_DELEGATION_DEPTH = 16;

/** What a parent's manifest says about one sub-agent (built by the worker from its definition). */
export interface SubagentManifest {
  /** The sub-agent's name: the child task's `agent`. */
  name: string;
  /** The delegation tool's name the model calls (delegationToolName). */
  tool: string;
  description: string;
  /** The queue the sub-agent's tasks run on when the parent runs on its own agent's queue. */
  taskQueue: string;
  /** The sub-agent's own turn limit: the default slice when the model asks for none. */
  maxTurns: number;
}

/** An agent's delegation settings, in its manifest (absent for an agent without sub-agents). */
export interface DelegationManifest {
  /** The parent agent's own queue: a parent running elsewhere (a shared or explicit queue) keeps its children on that queue. */
  ownQueue: string;
  subagents: SubagentManifest[];
  maxConcurrent: number;
  maxDepth: number;
}

/** What a child task's input says of its place under a parent (trusted only when Temporal says it has a parent). */
export interface DelegationInput {
  /** 1 for a top task's children. */
  depth: number;
}

/** A slice of a budget: what a child may spend and the parent holds back for it while it runs. */
export interface BudgetSlice {
  turns: number;
  toolCalls: number;
  /** Absent: neither side has a token budget. */
  tokens?: number;
  /** Absent: neither side has a cost budget. */
  costUsd?: number;
}

/** What children spent (their own and their children's), as the parent counts it. */
export interface DelegatedSpend {
  turns: number;
  toolCalls: number;
  usage: Usage & { cacheWriteTokens: number; cacheReadTokens: number };
  costUsd: number;
}

export function emptySpend(): DelegatedSpend {
  return { turns: 0, toolCalls: 0, usage: { inputTokens: 0, outputTokens: 0, cacheWriteTokens: 0, cacheReadTokens: 0 }, costUsd: 0 };
}

/** One child task as the parent's status shows it. */
export interface ChildTaskSummary {
  taskId: string;
  agent: string;
  toolUseId: string;
  state: 'waiting' | 'running' | 'completed' | 'failed' | 'cancelled';
  slice: BudgetSlice;
  /** What it spent, once it closed (for a child that failed without saying, its whole slice). */
  spent?: DelegatedSpend;
}

/** The delegation tool's name for a sub-agent: `delegate_to_<name>` with dots as underscores (tool names allow no dots). */
export function delegationToolName(agent: string): string {
  return `delegate_to_${agent.replace(/\./g, '_')}`;
}

/**
 * The child task's id: the parent's id, the sub-agent and the parent's tool-call number, which
 * never repeats in a task chain (`<parent>--<agent>-<n>`). The same on every replay and every worker,
 * so a child is started once: a second start with the id is refused by the server.
 *
 * Within `maxBytes` of UTF-8 (derivedId): an id that fits is exactly as it always was; a longer one
 * keeps the start of the parent's id and the whole `--<agent>-<n>`, and ends with `~` and a hash of
 * the id it would have been. The child's ParentTask search attribute keeps the parent's full id.
 * The workflow keeps DERIVED_ID_MAX_BYTES (servers with an SQL visibility store refuse longer ids).
 */
export function childTaskId(parentTaskId: string, agent: string, callNumber: number, maxBytes: number = DERIVED_ID_MAX_BYTES): string {
  return derivedId(parentTaskId, `--${agent}-${callNumber}`, maxBytes);
}

/** The JSON Schema of a delegation tool's input. */
export function delegationInputSchema(maxTurns: number): Record<string, unknown> {
  return {
    type: 'object',
    properties: {
      task: { type: 'string', description: 'What the sub-agent should do, with everything it needs to know: it sees nothing of your conversation.' },
      budget: {
        type: 'object',
        description: `The part of your remaining budget this sub-agent may spend; what it does not spend comes back to you. Default: up to ${maxTurns} turns and what you have left of the rest.`,
        properties: {
          turns: { type: 'integer', minimum: 1 },
          toolCalls: { type: 'integer', minimum: 1 },
          tokens: { type: 'integer', minimum: 1 },
          costUsd: { type: 'number', exclusiveMinimum: 0 },
        },
        additionalProperties: false,
      },
    },
    required: ['task'],
    additionalProperties: false,
  };
}
