/**
 * The activities' signatures, shared by the worker that implements them and the workflow that
 * proxies them (a type-only import there).
 */
import type { AgentManifest, ToolEffect } from './agent-manifest';
import type { AutoClassification } from './auto-permission';
import type { Message, ModelTurn, ToolSpec, Usage } from './messages';
import type { ModelChoice, TaskResult, TaskSnapshot, ThinkingSetting } from './task';
import type { BranchPoint } from './fork';
import type { CallRecovery } from './recovery';
import type { ToolContract } from './tool-contract';
import type { ToolError } from './tool-error';
import type { ForkPrompt } from './fork-prompt';
import type { GradeAnswerInput, GradeAnswerResult } from './outcome';

export interface DescribeAgentInput {
  agent: string;
  model?: ModelChoice;
}

/** A model call's conversation as a change to the run's previous call's (how to apply it: rules/conversation-change.ts). */
export interface ConversationChange {
  /** The run the calls belong to, `<workflowId>/<runId>`: a call's number counts from 1 in each run. */
  run: string;
  /** This call's number in its run. */
  call: number;
  /** The earlier call of the run this one builds on, and how many of its first messages stay; absent: `append` is the whole conversation. */
  from?: { call: number; keep: number };
  /** The messages after the ones that stay. */
  append: Message[];
}

export interface CallModelInput {
  model: ModelChoice;
  system: string;
  /**
   * The whole conversation, as every task sent it before conversation changes. May hold blob
   * markers (see blob-marker.ts): the activity resolves them from the store of `scope`.
   */
  messages?: Message[];
  /**
   * The conversation as a change to the run's previous call's (rules/conversation-change.ts), sent
   * instead of `messages`: a worker older than this field fails the call for want of `messages`
   * rather than calling the model with part of the conversation.
   */
  conversation?: ConversationChange;
  tools: ToolSpec[];
  /** The task's blob scope, `<workflowId>/<firstExecutionRunId>`; absent in histories from before the claim check. */
  scope?: string;
  /** 'none': answer without calling tools; the definitions stay (the API needs them when tool blocks are present). */
  toolChoice?: 'auto' | 'none';
  /** A person's override (unblock --max-tokens). */
  maxTokens?: number;
  /** A person's override (unblock --model), or the fallback model the task moved to (docs/model-fallback.md). */
  modelId?: string;
  /**
   * Set only when the task has a next model to fall back to: an overloaded or rate-limited call
   * gives up after this many attempts (non-retryable, its code kept) so the task moves on.
   */
  fallbackAfterAttempts?: number;
  thinking?: ThinkingSetting;
  /** Assistant turns compaction took out of `messages`. */
  droppedTurns?: number;
  /** Server-side compaction at this many input tokens, where the model has it (see ModelRequest.compaction). */
  compaction?: { triggerTokens: number };
  /**
   * The task's progress after the previous turn, without the messages (they are `messages`): the
   * per-turn record a fork starts from, read back from history by loadForkPoint.
   * The activity ignores it.
   */
  checkpoint?: TaskSnapshot;
  /**
   * What is left of the task's spend budgets (budgets are hard caps): the call is sent with a
   * max_tokens its maximum fits in, or not at all; for a model that cannot say its maximum, the
   * previous call's cost stands for it.
   */
  spendLeft?: { costUsd?: number; tokens?: number; lastCallCostUsd?: number };
}

/**
 * What a cancelled model call cost, in its CancelledFailure's details[0] (an interrupt cancels the
 * call: the worker aborts the request and reports this; the workflow counts it against the budgets).
 */
export interface CancelledModelCall {
  usage: Usage;
  model: string;
  costUsd?: number;
  /** False: nothing had arrived when it was aborted, and `usage` is the call's maximum. */
  measured: boolean;
}

export interface RunToolInput {
  agent: string;
  tool: string;
  /** The arguments, or a blob marker standing for them. */
  input: unknown;
  toolUseId: string;
  /** See CallModelInput.scope. */
  scope?: string;
  /** Chosen by the workflow, unique per logical call and the same on every retry; absent in old histories. */
  idempotencyKey?: string;
  /**
   * The approval this call runs under, when the policy asked a person; the activity re-checks the
   * policy against it, and the tool against the contract the person was asked under (absent in older histories).
   */
  approval?: { id: string; by: string; contract?: ToolContract };
  /** People's answers to the questions this call asked so far (MCP elicitation), in the order asked. */
  answers?: ToolQuestionAnswer[];
  /** The turn the call belongs to, for the effect journal (every write). */
  turn?: number;
  /** The task's ancestry (a fork's): a write an ancestor ran after its branch point is not run again on its own. */
  lineage?: BranchPoint[];
  /** A person approved running this write again although the journal shows it ran (the approval's id). */
  repeatApprovedBy?: string;
  /** A read of a fork started with recorded reads: the ReadRecording's blob id in `scope`; a recorded read is answered from it. */
  readRecording?: string;
  /**
   * The task's verified starter (a start claim signed by a trusted key): the call uses that person's
   * own vault entries where they have one (`vault set NAME --for PERSON`), else the agent's. Absent for
   * an unverified starter, whose claim never selects a person's credential.
   */
  onBehalfOf?: string;
}

export interface LoadForkPointInput {
  /** The task and turn to start from (the fork's input names them; the worker reads the state from the origin's history). */
  origin: BranchPoint;
  /** The fork's agent: it must be the origin's (a fork never carries one agent's state to another). */
  agent: string;
  /** The fork's blob scope: the content the origin's state refers to is copied into it. */
  scope: string;
  /** Record what the origin's reads returned after the branch point, for the fork's reads. */
  recordedReads?: boolean;
}

/**
 * The failure `type` of a call that stopped to ask a person (an MCP server's elicitation/create):
 * details[0] is a ToolError, details[1] the ToolQuestion. The workflow asks, then runs the call again
 * with the answer.
 */
export const NEEDS_INPUT_TYPE = 'needs_input';

/** A question a tool asked a person mid-call. */
export interface ToolQuestion {
  /** The MCP server that asked. */
  server: string;
  message: string;
  /** JSON Schema (a flat object of primitive fields, as MCP allows) the answer must match. */
  requestedSchema: Record<string, unknown>;
  /** 0 for the call's first question, 1 for the next... */
  index: number;
}

/** A person's answer, handed back to the server when it asks the same question again. */
export interface ToolQuestionAnswer {
  /** The question it answers (an answer is given only to the same question). */
  message: string;
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, unknown>;
}

/** What a long tool reports through its heartbeat (MCP progress notifications); `status` shows it. */
export interface ToolProgress {
  tool: string;
  progress: number;
  total?: number;
  message?: string;
}

/**
 * A tool call that ran: a validated payload, or a valid payload flagged by a semantic check. A large
 * `output` is a blob marker; `summary` is then a short preview for status.
 */
export type ToolOutcome = ({ kind: 'ok'; output: unknown; summary?: string } | { kind: 'flagged'; output: unknown; error: ToolError; summary?: string }) & {
  /** Whose credentials a call that read any ran with: the person's own entries (their name) or the agent's (`agent`). Absent for a call without credentials. */
  credentialsOf?: string;
  /** The call answered after earlier attempts or re-reads: what they cost (protocol/recovery.ts). */
  recovery?: CallRecovery;
};

export interface StoreAuditInput {
  scope: string;
  /** Audit entries that left the task's state (oldest first). */
  entries: unknown;
}

export interface LoadTextInput {
  scope: string;
  text: string;
}

export interface PrepareToolCallInput {
  agent: string;
  tool: string;
  input: unknown;
  /** See CallModelInput.scope: a marker input is resolved from it, and large validated input stored back. */
  scope?: string;
  /** Set when `input` is a person's answer to a tool's question: it is checked against this JSON Schema instead of the tool's. */
  answerSchema?: Record<string, unknown>;
}

/** The arguments as the tool will see them (coerced, defaults applied), or why they are invalid. */
export type PreparedToolCall = { ok: true; input: unknown; contract?: ToolContract } | { ok: false; error: ToolError };

export interface NotifyInput {
  taskId: string;
  agent: string;
  level: 'inform' | 'confirm' | 'block';
  code: string;
  message: string;
  /** The approval a `confirm` notice (or an expired approval's `block`) is about: its link opens that approval. */
  approvalId?: string;
  /**
   * The task's blob scope, where a long call's arguments named in the message are stored. Absent
   * only in notices from builds before it, whose scope the activity reads from the task's history.
   */
  scope?: string;
}

export interface EarlierChildInput {
  /** The id a delegation found taken: a child this task started before (a reset lead), or someone else's task. */
  childId: string;
}

/** What holds a delegation's child id, as the worker finds it on the server. */
export type EarlierChild =
  /** Gone, or not a child of the asking task: not ours to take over. */
  | { kind: 'not_ours' }
  | { kind: 'running' }
  /** This task's own child, finished: its result stands for the delegation (never run again). */
  | { kind: 'completed'; result: TaskResult }
  /** This task's own child, ended without a result (failed, cancelled, terminated, timed out). */
  | { kind: 'ended'; status: string };

export interface DecisionReceivedAtInput {
  /** The signal's name: approve, deny or unblock. */
  signal: string;
  /** The decision's proof signature, which tells it apart from every other signal. */
  signature: string;
}

/**
 * A signed start's first run claims its proof's single use (start-claim.ts): the first use is
 * recorded in the worker's shared store under the namespace, key id and nonce.
 */
export interface StartClaimInput {
  taskId: string;
  runId: string;
  /** The run's chain (a reset keeps it). */
  firstRunId: string;
  /** The earliest time the proof could have been signed: its expiry less the longest lifetime a proof may claim. */
  earliestSignedMs: number;
  /** The namespace the start was verified in (set by workflows that sign namespaces; absent from older ones). */
  namespace?: string;
  /** The proof's key id and nonce: what names its single-use record. */
  keyId?: string;
  nonce?: string;
  /** The proof's expiry, kept in the record (a record is needed only until then). */
  expiresAt?: string;
}

/** The durable summary (models without native compaction): the turns leaving the conversation, folded into the summary so far. */
export interface SummarizeTurnsInput {
  model: ModelChoice;
  /** A person's override (unblock --model), or the fallback model the task moved to (docs/model-fallback.md). */
  modelId?: string;
  /**
   * Set only when the task has a next model to fall back to: an overloaded or rate-limited call
   * gives up after this many attempts (non-retryable, its code kept) so the task moves on.
   */
  fallbackAfterAttempts?: number;
  /** See CallModelInput.scope: the turns' markers are resolved from it. */
  scope?: string;
  previousSummary?: string;
  messages: Message[];
  /** The summary's output limit. */
  maxTokens: number;
}

export interface SummaryResult {
  summary: string;
  usage: Usage;
  /** USD from the worker's price table; absent when the model has no price. */
  costUsd?: number;
  model: string;
}

/** An `auto` call, before it runs: what the classifier is shown comes from these, resolved on the worker. */
export interface ClassifyToolCallInput {
  agent: string;
  tool: string;
  /** The model's tool_use id: an export pairs the verdict with its call by it. */
  toolUseId: string;
  /** The effect the workflow's gate read (a command's own effect, call-effect.ts). */
  effect: ToolEffect;
  /** The prepared arguments (a marker is resolved from scope). */
  input: unknown;
  /** The task's prompt from its starter (a marker is resolved from scope). Never the conversation. A fork's only names it: see `fork`. */
  prompt: string;
  /** A fork's request: its origin's prompt and its own message, shown labelled and grounding a destructive call in place of `prompt`. */
  fork?: ForkPrompt;
  /** A sub-agent's task: its prompt was written by its parent's model, not a person. */
  delegated?: boolean;
  /** Set when the task's token or USD budget is spent (why): the model classifier is then not called. */
  budgetSpent?: string;
  scope?: string;
  /** The task's model: the model classifier's. Absent: only an agent's own classifier can decide; else a person. */
  model?: ModelChoice;
  modelId?: string;
}

export interface AgentActivities {
  /** The `auto` rule's verdict on one call: allow, deny or ask a person, with a one-line reason (docs/auto-permissions.md). */
  classifyToolCall(input: ClassifyToolCallInput): Promise<AutoClassification>;
  /** The time (ms) the server recorded the signalled decision with this proof in the task's current run, or null. */
  decisionReceivedAt(input: DecisionReceivedAtInput): Promise<number | null>;
  /** A delegation whose child id is taken: whether that task is this task's earlier child, and its result when it finished. */
  earlierChild(input: EarlierChildInput): Promise<EarlierChild>;
  /** Why a signed start may not count (its proof was used by another execution of the id), or null. */
  startClaimProblem(input: StartClaimInput): Promise<string | null>;
  prepareToolCall(input: PrepareToolCallInput): Promise<PreparedToolCall>;
  notify(input: NotifyInput): Promise<void>;
  describeAgent(input: DescribeAgentInput): Promise<AgentManifest>;
  callModel(input: CallModelInput): Promise<ModelTurn>;
  summarizeTurns(input: SummarizeTurnsInput): Promise<SummaryResult>;
  /** A graded outcome's grader: the prompt, the answer and the named evidence, graded against the rubric (docs/outcomes.md). */
  gradeAnswer(input: GradeAnswerInput): Promise<GradeAnswerResult>;
  runTool(input: RunToolInput): Promise<ToolOutcome>;
  /** Stores audit entries that left the task's state; returns the marker text that refers to them. */
  storeAudit(input: StoreAuditInput): Promise<string>;
  /** Resolves the markers in a text (a long final answer). */
  loadText(input: LoadTextInput): Promise<string>;
  /** A fork's starting state: the origin's progress after the turn, from its history, with its lineage. */
  loadForkPoint(input: LoadForkPointInput): Promise<TaskSnapshot>;
}
