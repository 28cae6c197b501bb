/** An agent's settings, read by the task input, the manifest and the workflow: model, budgets, permission policy. */
import type { ApproverRules } from './approver-policy';
import type { AutoClassifierFunction } from './auto-permission';

// Chosen when a task starts and recorded in its input: its schema is the task input's (wire-shapes.ts).
export type { ModelChoice, ThinkingSetting } from './wire-shapes';

export const DEFAULT_MAX_TURNS = 20;

/** Limits that stop a runaway task. Spent task budgets block the task for a person; see unblock. */
export interface Budgets {
  /** Model calls per task. */
  turns: number;
  /** Tool calls per task. */
  toolCalls: number;
  /** Tool calls the model may make in one response; the rest are refused and the model answers without tools. */
  toolCallsPerTurn: number;
  /** Consecutive invalid calls (model errors) to one tool before a person is asked to step in. */
  correctionsPerTool: number;
  /** Input + output tokens per task. Unlimited when absent. */
  tokens?: number;
  /** USD per task, from the worker's price table. Unlimited when absent. */
  costUsd?: number;
  /** Input + output tokens of the summary calls that keep a long conversation in the window (models without native compaction). Default 500 000. */
  summaryTokens?: number;
  /** USD of those summary calls. Unlimited when absent. */
  summaryCostUsd?: number;
  /**
   * Calls run again to recover from faults (retries after a crash, a timeout or an outage, re-reads of
   * a broken answer) before a person is asked to look at the task. Unlimited when absent.
   */
  recoveryCalls?: number;
  /** USD that lost model-call attempts used (estimated, protocol/recovery.ts) before a person is asked. Unlimited when absent. */
  recoveryCostUsd?: number;
}

/** The summary calls' token budget when a task sets none. */
export const DEFAULT_SUMMARY_TOKENS = 500_000;

export const DEFAULT_BUDGETS: Budgets = { turns: DEFAULT_MAX_TURNS, toolCalls: 50, toolCallsPerTurn: 8, correctionsPerTool: 3 };

/**
 * The agent's permission policy per effect (and per tool, which wins). 'auto': a classifier decides
 * allow, deny or ask a person for each call (docs/auto-permissions.md).
 */
export type PermissionRule = 'allow' | 'confirm' | 'deny' | 'auto';

export interface PermissionPolicy {
  /** Default 'confirm'. */
  write?: PermissionRule;
  /** Default 'confirm'; never 'auto' unless named here (or per tool). */
  destructive?: PermissionRule;
  /** Per-tool rules, e.g. `{ delete_file: 'deny' }`. */
  tools?: Record<string, PermissionRule>;
  /** How long an approval waits, in ms. Default 24 h. */
  approvalTimeoutMs?: number;
  /** Default 'deny': an unanswered approval is a denial the model is told about. */
  onExpiry?: 'deny' | 'block';
  /** Who may approve, deny, unblock or message, by id or `role:NAME`. Default: anyone (verified, when keys are trusted). */
  approvers?: ApproverRules;
  /** The task's starter may not approve its own task's calls. Default false. See docs/approvers.md. */
  forbidSelfApproval?: boolean;
  /** The agent's own rules for the `auto` classifier, each one line, shown to it after its fixed prompt. */
  autoRules?: string[];
  /**
   * The agent's own classifier for `auto` calls, run on the worker inside an activity, instead of the
   * model classifier. Never sent to the workflow (the manifest leaves it out).
   */
  classifier?: AutoClassifierFunction;
}

export const DEFAULT_APPROVAL_TIMEOUT_MS = 24 * 60 * 60 * 1000;
