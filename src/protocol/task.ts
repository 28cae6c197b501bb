/** The data that crosses the workflow boundary: task input, live status, final result. */
import type { Message, Usage } from './messages';
import type { ToolError } from './tool-error';
import type { AgentManifest } from './agent-manifest';
import type { ToolEffect } from './tool-effect';
import type { Budgets, ModelChoice } from './agent-settings';
import type { ApproverRules } from './approver-policy';
import type { WireTaskInput } from './wire-shapes';
import type { ChildTaskSummary, DelegatedSpend } from './delegation';
import type { BranchPoint } from './fork';
import type { FallbackProgress, FallbackStatus } from './model-fallback';
import type { RecoveryBill } from './recovery';
import type { Grade, OutcomeStatus } from './outcome';

// An agent's settings have their own module (no cycle with agent-manifest.ts); task input names them too.
export { DEFAULT_APPROVAL_TIMEOUT_MS, DEFAULT_BUDGETS, DEFAULT_MAX_TURNS } from './agent-settings';
export type { Budgets, ModelChoice, PermissionPolicy, PermissionRule, ThinkingSetting } from './agent-settings';
export type { ApproveInput, DenyInput, MessageInput, UnblockInput } from './wire-shapes';

/** The task's input: its wire shape (wire-shapes.ts), with `resume` typed as the snapshot the workflow hands itself. */
export type TaskInput = Omit<WireTaskInput, 'resume'> & { resume?: TaskSnapshot };

/**
 * The numbers that drive a task's decisions, pinned in its state when it starts and carried across
 * continue-as-new (their values: src/rules/task-limits.ts).
 */
export interface TaskLimits {
  /** The rules version the task runs by: 2 (RULES_VERSION). A snapshot with 1 (the first release's, retired) resumes under today's rules (limitsFrom). */
  rulesVersion: number;
  /** The same answer to the same call in this many consecutive turns is a loop. */
  loopThreshold: number;
  /** Executions of one exact call within one turn. */
  perTurnExecutions: { read: number; sideEffecting: number };
  /** How long a failed call is refused when repeated unchanged, in ms (rules v2). */
  failureMemoryMs: number;
  /** Ledger keys kept; the least recently seen reads go first. */
  maxLedgerRecords: number;
  /** How many times an answer cut at max_tokens is continued. */
  maxContinuations: number;
  /** The model's context window when its choice does not say, in tokens. */
  contextWindowTokens: number;
  /** Compaction starts when the estimated prompt passes this share of the context window. */
  compactAtRatio: number;
  /** Tool results of the most recent turns that compaction never touches. */
  keepRecentTurns: number;
  /** Messages kept in the live conversation; older turns leave it (their content stays in the store). */
  maxConversationMessages: number;
  /**
   * Once past maxConversationMessages, the oldest turns leave until this many messages remain:
   * several turns at once, so the prompt's cached prefix stays the same for the turns in between
   * (dropping one turn per turn would change the prefix, and miss the cache, on every call).
   * Absent: down to maxConversationMessages, as tasks started before it did.
   */
  trimConversationTo?: number;
  /** Audit entries (events, escalations, decisions, approvals) kept in state per kind; older ones are archived to the store. */
  auditWindow: number;
  /** The largest snapshot carried into a new run, in bytes of JSON; above it the task compacts, then blocks. */
  snapshotCeilingBytes: number;
}

/** The serialisable state a task carries across continue-as-new. */
export interface TaskSnapshot {
  version: 1;
  /**
   * 2: progress only; the run takes its configuration (tools, policy, approver keys) from its
   * worker. Absent (schema 1, written by older builds): the snapshot also carried `manifest`, which
   * a run ignores (its worker's manifest counts).
   */
  schemaVersion?: 2;
  /** Pinned decision numbers (absent in snapshots from before they were pinned: today's apply, limitsFrom). */
  limits?: Partial<TaskLimits>;
  modelOverride?: { model?: string; maxTokens?: number };
  /** Which fallback model answers, and every move so far (docs/model-fallback.md). */
  fallback?: FallbackProgress;
  /** Markers of archived audit entries. */
  archive?: string[];
  compactions?: number;
  droppedTurns?: number;
  /** The context strategy, once the conversation first needed room. */
  context?: ContextState;
  runs: number;
  turn: number;
  /** Schema 1 only (older builds); ignored: a run takes its manifest from its worker. */
  manifest?: AgentManifest;
  messages: Message[];
  toolCalls: { total: number; succeeded: number; failed: number };
  usage: Usage & { cacheWriteTokens: number; cacheReadTokens: number };
  costUsd: number;
  unpricedModels: string[];
  /** What recovering from faults cost the task so far (absent: nothing). */
  recovery?: RecoveryBill;
  ledger: unknown;
  corrections: Record<string, number>;
  escalations: Escalation[];
  approvals: ApprovalRecord[];
  decisions: Decision[];
  /** Who started the task, as verified in its first run (verified approvers). */
  starter?: VerifiedIdentity;
  /** Nonces of signed messages already taken (each is taken once). */
  messageNonces?: string[];
  budgets: Budgets;
  lastError?: ToolError;
  model: string;
  pendingGuidance: string[];
  events: TaskEvent[];
  eventCount: number;
  /** What child tasks spent in earlier runs (absent when none did). */
  delegated?: DelegatedSpend;
  /** A fork's ancestry, nearest first: the tasks and turns it branched from (read from their histories by the worker). */
  lineage?: BranchPoint[];
  /** A fork started with recorded reads: the blob id (in the task's scope) of its ReadRecording. */
  readRecording?: string;
  /** The agent definition's version the previous run ran with (agentVersionOf), so the next run can say when it changed. */
  agentVersion?: string;
  /** The build (Worker Deployment Versioning) the previous run ran on, absent when unversioned. */
  build?: string;
  /** A graded outcome's grades so far (absent when none was given). */
  grades?: Grade[];
}

export const DEFAULT_CONTINUE_AS_NEW_EVERY_TURNS = 100;

/** What one kind of context work cost: calls, tokens and USD (priced models only). */
export interface ContextSpend {
  count: number;
  usage: Usage;
  costUsd: number;
  /** The turn of the last one. */
  lastTurn?: number;
}

/**
 * How a task keeps its conversation inside the model's context window, and what that cost. In order: the API's own compaction where the
 * model has it, else a summary of the turns that leave (a model call with its own budget), and
 * trimming the oldest turns only when the summary failed or its budget is spent.
 */
export interface ContextState {
  /** 'auto': the order above. 'trim': the sliding window, in statuses of tasks older builds ran. */
  strategy: 'auto' | 'trim';
  /** false once the model said it has no native compaction (the summary takes over). */
  native?: boolean;
  /** The input tokens at which the API compacts (native compaction). */
  triggerTokens: number;
  compactions: ContextSpend;
  summaries: ContextSpend & { failed: number };
  /** Times turns left without a summary (the last resort). */
  trims: number;
}

export type EscalationLevel = 'auto' | 'inform' | 'confirm' | 'block';

/** A moment the task asked for (or told) a person; kept for the audit trail. */
export interface Escalation {
  id: string;
  level: EscalationLevel;
  /** Machine-readable reason, e.g. `turn_budget`, `loop_detected`, `correction_budget`. */
  code: string;
  reason: string;
  turn: number;
  at: string;
  resolved?: { by: string; at: string; how: string };
  /**
   * A block's binding: the agent version it was raised under. An unblock that meets a worker whose
   * agent is another version is refused with the difference, and the task asks again (people/blocks.ts).
   */
  bound?: { agentVersion: string };
}

/**
 * Who took a decision, as far as the task could check. `verified`: a trusted front end signed it
 * (key `keyId`); false: the task has no trusted keys (dev mode) or, for a message, the signature
 * was missing or wrong (`problem`).
 */
export interface VerifiedIdentity {
  id: string;
  roles: string[];
  verified: boolean;
  keyId?: string;
  /** Why it is not verified, when the task verifies approvers. */
  problem?: string;
}

/** A person's action on the task, with who and when. */
export interface Decision {
  at: string;
  by: string;
  action: 'unblock' | 'message' | 'approve' | 'deny';
  detail: string;
  /**
   * A decision sent as a signal that changed nothing: `refused` (it broke a rule the update
   * validator applies), `superseded` (what it answered was already resolved). Absent: it was taken;
   * front ends (`status --json`) then say `applied`, the word their verbs use (decisionOutcome).
   */
  outcome?: 'applied' | 'refused' | 'superseded';
  /** Tasks started with verified approvers: whether `by` was signed by a trusted front end, with roles and key. */
  identity?: VerifiedIdentity;
}

/** A risky tool call waiting for a person: a durable object with an id, bound to its exact arguments. */
export interface ApprovalRequest {
  id: string;
  tool: string;
  toolUseId: string;
  /** The exact (validated) arguments that will run if approved as is. */
  input: unknown;
  /** Hash of tool + canonical arguments: the approval is for this call and no other. */
  inputHash: string;
  effect: ToolEffect;
  reason: string;
  turn: number;
  requestedAt: string;
  expiresAt: string;
  /** What happens when nobody answers in time. */
  onExpiry: 'deny' | 'block';
  /**
   * Set when this is not a call to approve but a tool's question to a person (an MCP server's
   * elicitation): approve with the answer as `editedInput` (checked against `requestedSchema`),
   * deny to decline. The call then goes on with the answer.
   */
  question?: { server: string; message: string; requestedSchema: Record<string, unknown> };
  /**
   * The verified person who started the task: the call runs on their behalf, with their own vault
   * credentials where they have them (docs/credentials.md). Absent when the starter is not verified.
   */
  onBehalfOf?: string;
  /**
   * What the person decides about: the agent version the task runs and the tool's contract
   * (rules/tool-contract.ts) as the worker had it when asking. A worker whose tool differs by the
   * time the approved call would run refuses it, and the person is asked again with the difference.
   */
  bound?: { agentVersion: string; toolContract: string };
}

export interface ApprovalRecord extends ApprovalRequest {
  decision: 'approved' | 'denied' | 'expired';
  by: string;
  decidedAt: string;
  comment?: string;
  /** Why it was denied (or expired). */
  denyReason?: string;
  /** Set when the person approved different arguments; these are what ran. */
  editedInput?: unknown;
  /** Tasks started with verified approvers: who decided, and whether that was verified. */
  identity?: VerifiedIdentity;
}

export interface ApprovalAnswer {
  approvalId: string;
  decision: 'approved' | 'denied';
}

/**
 * The values of the `AgentStatus` search attribute, plus two that only Temporal's execution status
 * can tell (the workflow cannot publish them): `terminated` and `timed_out`.
 */
export type AgentStatus = 'running' | 'awaiting_approval' | 'blocked' | 'completed' | 'failed' | 'cancelled' | 'terminated' | 'timed_out';
export const AGENT_STATUSES: AgentStatus[] = ['running', 'awaiting_approval', 'blocked', 'completed', 'failed', 'cancelled', 'terminated', 'timed_out'];

/**
 * The `AgentStatus` search attribute of a run that continued as new: that run is history; its
 * successor, with the same task id, is the task.
 */
export const CONTINUED_RUN_STATUS = 'continued';

/** Finer than AgentStatus: what the task is doing right now. */
/** `grading`: a graded outcome's grader judges the answer (docs/outcomes.md). */
export type TaskPhase = 'starting' | 'running' | 'calling_model' | 'running_tools' | 'grading' | 'awaiting_approval' | 'blocked' | 'completed' | 'failed' | 'cancelled';

export type TaskEventKind =
  | 'task_started'
  | 'task_forked'
  | 'model_replied'
  | 'tool_called'
  | 'tool_classified'
  | 'tool_succeeded'
  | 'tool_failed'
  | 'approval_requested'
  | 'approval_decided'
  | 'informed'
  | 'task_blocked'
  | 'task_unblocked'
  | 'decision_refused'
  | 'guidance_added'
  | 'task_completed'
  | 'task_failed'
  | 'task_cancelled'
  | 'version_changed'
  /** The task moved to its next model, or passed one over (docs/model-fallback.md). */
  | 'model_fallback'
  /** A graded outcome's grader judged an answer (docs/outcomes.md). */
  | 'answer_graded';

export interface TaskEvent {
  seq: number;
  /** ISO time from the workflow clock (deterministic on replay). */
  at: string;
  kind: TaskEventKind;
  turn: number;
  tool?: string;
  toolUseId?: string;
  /** A call that read credentials: whose (a person's own vault entries, by name, or `agent`). */
  credentialsOf?: string;
  /** One line for people: arguments, outcome, error. */
  detail: string;
}

export interface BudgetReading {
  /** With what the task's children spent. */
  used: number;
  limit: number;
  left: number;
  /** What the task's running children hold of it (their slices); counted out of `left`. */
  held?: number;
}

/** The task memo's `pending`: what waits on a person, readable without a worker (tasks started with pending-in-memo). */
export interface PendingMemo {
  approvals: { id: string; tool: string; effect: string; reason: string; expiresAt: string }[];
  block: { id: string; code: string; reason: string } | null;
}

export interface TaskStatus {
  agent: string;
  /** Decisions sent as signals in this run that were refused or superseded (each of the first 100 is in `decisions`). */
  untakenDecisions?: number;
  phase: TaskPhase;
  agentStatus: AgentStatus;
  model: string;
  turn: number;
  /** How the conversation is kept in the context window, and what compaction and summaries cost. */
  context?: ContextState;
  budgets: {
    turns: BudgetReading;
    toolCalls: BudgetReading;
    toolCallsPerTurn: number;
    correctionsPerTool: number;
    tokens?: BudgetReading;
    costUsd?: BudgetReading;
    /** The summary calls' own budgets, once the task has made one. */
    summaryTokens?: BudgetReading;
    summaryCostUsd?: BudgetReading;
    /** The recovery budgets, when the task has them (protocol/recovery.ts). */
    recoveryCalls?: BudgetReading;
    recoveryCostUsd?: BudgetReading;
  };
  /** Models that answered without a price in the worker's table (their cost counts as 0). */
  unpricedModels: string[];
  /** What recovering from faults cost the task's own calls; absent when nothing needed recovering. */
  recovery?: RecoveryBill;
  /** Only for a task with fallback models: the model calls go to now and every move (docs/model-fallback.md). */
  fallback?: FallbackStatus;
  toolCalls: { total: number; succeeded: number; failed: number };
  /** Approvals waiting on a person, with their exact arguments. */
  pendingApprovals: ApprovalRequest[];
  /** Approvals already decided (approved, denied, expired), with who and when. */
  approvals: ApprovalRecord[];
  escalations: Escalation[];
  /** What people did, in order: unblocks and messages, with who and when. */
  decisions: Decision[];
  /** Tasks started with verified approvers: who may decide, and whether identities are checked. */
  approvers?: ApproverStatus;
  /** Who started the task, and whether a trusted front end vouched for it. */
  starter?: VerifiedIdentity;
  /** Set while the task is blocked: what it waits for and how to answer. */
  blocked?: Escalation;
  lastError?: ToolError;
  /** The task's own model calls plus everything its children spent (`delegated`). */
  usage: Usage;
  /** Likewise: its own cost plus its children's. */
  costUsd: number;
  /** What the task's sub-agents' child tasks spent (their own children's included); absent without children. */
  delegated?: DelegatedSpend;
  /** The task's child tasks (the most recent 100): their ids, slices and, once closed, what they spent. */
  children?: ChildTaskSummary[];
  /** Where audit entries that left the task's state were archived: markers in the task's blob scope (`status --all` reads them). */
  archive?: { scope: string; markers: string[] /** Entries out of the window not yet archived (at most a few hundred). */; pending: { kind: string; entry: unknown }[] };
  /** The most recent events (at most STATUS_EVENT_WINDOW); `eventCount` counts all of them. */
  events: TaskEvent[];
  eventCount: number;
  /** A fork's ancestry, nearest first (`forked from TASK@N`). */
  lineage?: BranchPoint[];
  /** The agent definition's version this run runs with (a hash of prompt, model, tools and schemas, policy, budgets). */
  agentVersion?: string;
  /** The Worker Deployment build this run is on (Pinned: it finishes there, or moves at a continue-as-new); absent when unversioned. */
  build?: { deploymentName: string; buildId: string };
  /** A graded outcome (docs/outcomes.md): attempts, every grade, the grader's tokens and cost; absent for an agent without one. */
  outcome?: OutcomeStatus;
  result?: TaskResult;
}

export const STATUS_EVENT_WINDOW = 100;

/** What a front end needs to know to show a person only what they may answer. */
export interface ApproverStatus {
  /** `signed`: decisions must carry a trusted front end's proof; `unverified`: dev mode, `by` is recorded as claimed. */
  verification: 'signed' | 'unverified';
  /** Ids of the keys the task trusts. */
  keyIds: string[];
  rules?: ApproverRules;
  forbidSelfApproval?: boolean;
}

export type TaskOutcome =
  /** The model ended its turn with an answer. */
  | 'answered'
  /** The turn budget ran out; `text` is whatever the model said last. */
  | 'max_turns'
  /** A budget ran out and the model gave its answer in a last call without tools. */
  | 'budget_exhausted'
  /** The model declined (stop_reason `refusal`). */
  | 'refused'
  /** The answer was still cut at max_tokens after the continuations allowed. */
  | 'max_tokens'
  /** Cancelled on request; `text` is what the model had said so far. */
  | 'cancelled'
  /** A graded outcome's every attempt failed its grade; `text` is the last answer, `grades` every grade (docs/outcomes.md). */
  | 'outcome_failed';

/** Every task outcome, for the CLI's schemas and renderings. */
export const TASK_OUTCOMES: readonly TaskOutcome[] = ['answered', 'max_turns', 'budget_exhausted', 'refused', 'max_tokens', 'cancelled', 'outcome_failed'];

export interface TaskResult {
  outcome: TaskOutcome;
  text: string;
  turns: number;
  toolCalls: number;
  usage: Usage;
  costUsd: number;
  model: string;
  /** True when the final answer came from a last model call without tools (a budget was spent). */
  finalCallWithoutTools?: boolean;
  /** What the task's child tasks spent (theirs included), beside its own `turns`, `toolCalls`, `usage` and `costUsd`. */
  delegated?: DelegatedSpend;
  /** A graded outcome's grades, every one, in order (their tokens and cost are in `usage` and `costUsd`). */
  grades?: Grade[];
}

export interface TranscriptView {
  system: string;
  messages: Message[];
}

/** A short label for a model choice, shown before the first model call answers. */
export function modelLabel(choice: ModelChoice): string {
  if (choice.provider === 'scripted') return `scripted:${choice.script.split(/[\\/]/).pop()}`;
  if (choice.provider === 'custom') return `custom:${choice.name}`;
  return choice.model ?? 'claude (default)';
}
