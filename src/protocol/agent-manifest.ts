/**
 * What the workflow knows about an agent and its tools. The worker builds it from the agent
 * definition and hands it over through an activity, so the workflow never imports tool code and a
 * replay sees exactly the manifest the original run saw.
 */
import type { Budgets, ModelChoice, PermissionPolicy } from './agent-settings';
import type { ToolEffect } from './tool-effect';
import type { TrustedKey } from './decision-proof';
import type { DelegationManifest } from './delegation';
import type { OutcomeSpec } from './outcome';

export type { ToolEffect };

export interface ToolManifest {
  name: string;
  description: string;
  /** JSON Schema of the input, generated from the tool's zod schema. */
  inputSchema: Record<string, unknown>;
  effect: ToolEffect;
  idempotent: boolean;
  /** Start-to-close timeout of one attempt, in milliseconds. */
  timeoutMs: number;
  /** Attempts Temporal may make on transient errors (1 = no retry). */
  maxAttempts: number;
  /** Tools to try, in order, with the same input when this one fails permanently. */
  fallbacks: string[];
  /** How long an identical read is answered from the ledger instead of running again, in ms (0 = never). */
  cacheTtlMs: number;
  /** Runs as a local activity (see ToolConfig.local). */
  local?: boolean;
  /** A tool the Messages API defines (`memory_20250818`): declared to Claude by this type, not by its schema. */
  declaration?: string;
  /** Values of the input's `command` that only read: such a call is guarded as a read (the memory tool's `view`). */
  readCommands?: string[];
  /** A delegation tool: the call runs this sub-agent as a child task instead of an activity (delegation.ts). */
  delegatesTo?: string;
}

export interface AgentManifest {
  name: string;
  description: string;
  system: string;
  tools: ToolManifest[];
  model: ModelChoice;
  maxTurns: number;
  budgets?: Partial<Budgets>;
  policy?: PermissionPolicy;
  /**
   * Public keys of the front ends this worker trusts to vouch for people (its configuration, never
   * the task's input). Present and non-empty: decisions must be signed (see docs/approvers.md).
   */
  approverKeys?: TrustedKey[];
  /** What a `message` that arrives while the task is busy does (default 'queue'; see MessagesWhileBusy). */
  messagesWhileBusy?: MessagesWhileBusy;
  /** The agent's sub-agents, one delegation tool each (absent for an agent without any: its manifest is as before). */
  delegation?: DelegationManifest;
  /**
   * The worker's setting, not the agent's: model calls carry the whole conversation instead of the
   * change since the run's previous call (rules/conversation-change.ts), for a rolling upgrade while
   * workers of an older release, which need the whole conversation, still take the calls.
   */
  wholeConversations?: boolean;
  /** The agent's graded outcome (docs/outcomes.md); absent: answers are not graded, and the task runs as before outcomes existed. */
  outcome?: OutcomeSpec;
  /**
   * The context window the task's own model declares (`capabilities.contextWindowTokens`, a custom
   * model only: a Claude choice carries its window in `model`). Absent: the task's pinned default.
   */
  modelContextWindowTokens?: number;
}

/**
 * A message sent while the task calls the model or runs tools: `queue` waits for the next model call,
 * `interrupt` cancels a model call in flight (never a running tool) and calls the model again with it,
 * `reject` keeps it out of the conversation, recorded as refused.
 */
export type MessagesWhileBusy = 'queue' | 'interrupt' | 'reject';
export const MESSAGES_WHILE_BUSY: readonly MessagesWhileBusy[] = ['queue', 'interrupt', 'reject'];
