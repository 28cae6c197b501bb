/**
 * Everything a task knows, as one object with the decisions about it: transcript, budgets, the
 * ledger, escalations and people's decisions. Plain and deterministic: the workflow drives it, unit
 * tests drive it the same way without Temporal.
 */
import type { BranchPoint } from '../../protocol/fork';
import type { AgentManifest } from '../../protocol/agent-manifest';
import { agentVersionOf } from '../../protocol/agent-version';
import { textOf, type Message, type ModelTurn } from '../../protocol/messages';
import {
  DEFAULT_BUDGETS,
  DEFAULT_MAX_TURNS,
  modelLabel,
  type AgentStatus,
  type ApprovalRecord,
  type ApprovalRequest,
  type Budgets,
  type Decision,
  type Escalation,
  type MessageInput,
  type TaskInput,
  type TaskOutcome,
  type TaskPhase,
  type TaskResult,
  type ApproverStatus,
  type VerifiedIdentity,
} from '../../protocol/task';
import type { ToolError } from '../../protocol/tool-error';
import type { Grade } from '../../protocol/outcome';
import { AuditTrail } from './audit-trail';
import { Conversation } from './conversation';
import { ToolLedger } from './ledger';
import { ChildSpend } from './child-spend';
import { addCallSpend, tokensOf, type CallSpend } from './spend';
import type { CallRecovery, RecoveryBill } from '../../protocol/recovery';
import { addRecovery, emptyRecoveryBill } from './recovery-bill';
import { oneLine } from '../base/one-line';
import type { FallbackProgress } from '../../protocol/model-fallback';
import { DEFAULT_LIMITS, type TaskLimits } from '../../rules/task-limits';

/** Refused or superseded signalled decisions itemised in the audit trail per run; the rest are counted. */
export const REFUSED_DECISIONS_ITEMISED = 100;

const PHASE_TO_STATUS: Record<TaskPhase, AgentStatus> = {
  starting: 'running',
  running: 'running',
  calling_model: 'running',
  running_tools: 'running',
  grading: 'running',
  awaiting_approval: 'awaiting_approval',
  blocked: 'blocked',
  completed: 'completed',
  failed: 'failed',
  cancelled: 'cancelled',
};

export interface Clock {
  now(): Date;
  newId(): string;
}

export class TaskState {
  phase: TaskPhase = 'starting';
  turn = 0;
  manifest?: AgentManifest;
  readonly toolCalls = { total: 0, succeeded: 0, failed: 0 };
  readonly usage = { inputTokens: 0, outputTokens: 0, cacheWriteTokens: 0, cacheReadTokens: 0 };
  costUsd = 0;
  readonly unpricedModels: string[] = [];
  /** What recovering from faults cost the task (recovery-bill.ts). */
  readonly recovery: RecoveryBill = emptyRecoveryBill();
  ledger: ToolLedger;
  /** The numbers this task decides by, pinned when it started (see task-limits.ts). */
  limits: TaskLimits;
  /** A person's overrides for later model calls (unblock --model / --max-tokens). */
  modelOverride: { model?: string; maxTokens?: number } = {};
  /** Which fallback model answers and every move so far; absent until the task first falls back (model-fallback.ts). */
  fallback?: FallbackProgress;
  /** The task's blob scope, for `status --all`. */
  scope?: string;
  /** Consecutive model errors (invalid calls) per tool: the self-correction bound. */
  readonly corrections: Record<string, number> = {};
  readonly pendingApprovals: ApprovalRequest[] = [];
  /** Verified approvers: who started the task, who may decide, nonces of signed messages taken. */
  starter?: VerifiedIdentity;
  approverStatus?: ApproverStatus;
  messageNonces: string[] = [];
  /** A fork's ancestry, nearest first (from the origin's history, never from the input). */
  lineage: BranchPoint[] = [];
  /** A fork with recorded reads: the blob id of its recording (from loadForkPoint). */
  readRecording?: string;
  budgets: Budgets;
  lastError?: ToolError;
  result?: TaskResult;
  /** A graded outcome's grades, in order (docs/outcomes.md); empty for an agent without one. */
  readonly grades: Grade[] = [];
  /** Why the last answer was not graded (its budget was spent before the grader's call); the task then ends. */
  notGraded?: string;
  /** The model that answered last (a label), for status and the result. */
  model: string;
  /** Events, escalations, decisions and approval records, bounded in state. */
  readonly audit: AuditTrail;
  /** What the model reads, and its compaction. */
  readonly conversation: Conversation;
  /** What sub-agents' child tasks hold and spent, counted against this task's budgets. */
  readonly children = new ChildSpend();
  /** How many runs (continue-as-new) this task has had before this one. */
  runs = 0;
  /** Decisions sent as signals in this run that were refused or superseded (see recordUntakenDecision). */
  untakenDecisions = 0;
  /** The agent definition's version (agentVersionOf) this run took from its worker. */
  agentVersion?: string;
  /** What the previous run ran with (from its snapshot): agent version and build. */
  previousVersions?: { agentVersion?: string; build?: string };
  /**
   * A person unblocked the task onto the agent version its worker has now (people/blocks.ts,
   * rebindBlock): the run hands over at the next turn boundary and the new run takes that agent.
   * Never in a snapshot: the new run is on it.
   */
  agentMove?: string;
  /** The build the current workflow task runs on (workflowInfo, read where it is asked: queries, snapshots). */
  buildOf: () => { deploymentName: string; buildId: string } | undefined = () => undefined;

  constructor(
    readonly input: TaskInput,
    private readonly clock: Clock,
    limits: TaskLimits = DEFAULT_LIMITS,
  ) {
    this.limits = limits;
    this.audit = new AuditTrail(
      limits,
      () => this.now(),
      () => this.turn,
    );
    this.conversation = new Conversation(limits, this.audit);
    this.ledger = new ToolLedger(undefined, limits);
    this.model = input.model ? modelLabel(input.model) : 'agent default';
    this.budgets = { ...DEFAULT_BUDGETS, ...input.budgets, turns: input.maxTurns ?? input.budgets?.turns ?? DEFAULT_MAX_TURNS };
  }

  // The lists other modules read by their old names.
  get messages(): Message[] {
    return this.conversation.messages;
  }
  get escalations(): Escalation[] {
    return this.audit.escalations;
  }
  get approvals(): ApprovalRecord[] {
    return this.audit.approvals;
  }
  get decisions(): Decision[] {
    return this.audit.decisions;
  }
  get overflow(): { kind: string; entry: unknown }[] {
    return this.audit.overflow;
  }
  get archive(): string[] {
    return this.audit.archive;
  }
  get droppedTurns(): number {
    return this.conversation.droppedTurns;
  }

  get agentStatus(): AgentStatus {
    return PHASE_TO_STATUS[this.phase];
  }

  get turnsLeft(): number {
    return Math.max(0, this.budgets.turns - this.turn - this.children.turns);
  }

  get toolCallsLeft(): number {
    return Math.max(0, this.budgets.toolCalls - this.toolCalls.total - this.children.toolCalls);
  }

  get blocked(): Escalation | undefined {
    return this.phase === 'blocked' ? [...this.escalations].reverse().find((e) => e.level === 'block' && !e.resolved) : undefined;
  }

  /** A resumed run's configuration, from its own worker: a snapshot never supplies it. */
  adoptManifest(manifest: AgentManifest): void {
    this.manifest = manifest;
    this.agentVersion = agentVersionOf(manifest);
  }

  /**
   * A new run (continue-as-new) says when it runs another agent version or build than the run
   * before it. Asked once the run knows its build (rollover.ts), never for a run without a snapshot.
   */
  noteVersions(): void {
    const before = this.previousVersions;
    if (!before) return;
    const build = this.buildOf()?.buildId;
    const changes: string[] = [];
    if (before.agentVersion && this.agentVersion && before.agentVersion !== this.agentVersion) changes.push(`agent version ${before.agentVersion} -> ${this.agentVersion}`);
    if (before.build !== build && (before.build || build)) changes.push(`build ${before.build ?? 'unversioned'} -> ${build ?? 'unversioned'}`);
    this.previousVersions = undefined;
    if (!changes.length) return;
    this.audit.record('version_changed', `continued as new with ${changes.join(', ')}`);
    // New code may be the fix for a call that failed for good (issue 49 item 4): it runs once more.
    this.ledger.forgiveFailures();
  }

  begin(manifest: AgentManifest): void {
    this.manifest = manifest;
    this.agentVersion = agentVersionOf(manifest);
    this.model = modelLabel(manifest.model);
    this.budgets = {
      ...DEFAULT_BUDGETS,
      ...manifest.budgets,
      ...this.input.budgets,
      turns: this.input.maxTurns ?? this.input.budgets?.turns ?? manifest.budgets?.turns ?? manifest.maxTurns,
    };
    this.messages.push({ role: 'user', content: this.input.prompt });
    this.audit.record('task_started', `agent ${manifest.name}, model ${this.model}, budgets: ${this.budgets.turns} turns, ${this.budgets.toolCalls} tool calls`);
  }

  startTurn(): void {
    this.turn += 1;
    this.phase = 'calling_model';
  }

  /**
   * Adds a call's tokens (every class: input, output, cache writes and reads, a compaction's) and
   * cost to the task's (spend.ts, the one place spend is added). A call without a price names its
   * model as unpriced (a script costs nothing, so it never is). Returns the tokens added.
   */
  addSpend(call: CallSpend): number {
    addRecovery(this.recovery, call.recovery);
    return addCallSpend(this, call);
  }

  /** A tool call's recovery: attempts before the one that answered (or failed for good), re-reads included. */
  addToolRecovery(recovery: CallRecovery | undefined): void {
    addRecovery(this.recovery, recovery);
  }

  recordModelTurn(reply: ModelTurn): void {
    this.model = reply.model;
    const tokens = this.addSpend(reply);
    this.messages.push({ role: 'assistant', content: reply.content });
    const text = textOf(reply.content);
    const tools = reply.content.filter((b) => b.type === 'tool_use').length;
    const spend = tokens ? ` [${tokens} tokens${reply.costUsd !== undefined ? `, $${reply.costUsd.toFixed(4)}; task $${this.costUsd.toFixed(4)}` : ''}]` : '';
    this.audit.record('model_replied', `${reply.stopReason}${tools ? `, ${tools} tool call${tools > 1 ? 's' : ''}` : ''}${spend}${text ? `: ${oneLine(text)}` : ''}`);
  }

  recordToolCalled(tool: string, toolUseId: string, input: unknown): void {
    this.phase = 'running_tools';
    this.toolCalls.total += 1;
    this.audit.record('tool_called', oneLine(JSON.stringify(input) ?? 'undefined'), { tool, toolUseId });
  }

  /** `credentialsOf`: whose credentials the call ran with (a person's own, or `agent`), when it read any. */
  recordToolSucceeded(tool: string, toolUseId: string, summary: string, credentialsOf?: string): void {
    this.toolCalls.succeeded += 1;
    this.audit.record('tool_succeeded', summary, { tool, toolUseId, ...(credentialsOf !== undefined ? { credentialsOf } : {}) });
  }

  /** A call that ran and failed (counted) or was refused before running (`ran` false, not counted). */
  recordToolFailed(tool: string, toolUseId: string, error: ToolError, ran = true): void {
    if (ran) this.toolCalls.failed += 1;
    this.lastError = error;
    this.audit.record('tool_failed', `${ran ? '' : 'refused: '}${error.error_class}/${error.code}: ${error.detail}`, { tool, toolUseId });
  }

  recordToolReused(tool: string, toolUseId: string, fromTurn: number): void {
    this.audit.record('tool_succeeded', `answered from the ledger (same call in turn ${fromTurn}); not run again`, { tool, toolUseId });
  }

  addGuidance({ by, text }: MessageInput, identity?: VerifiedIdentity): void {
    this.conversation.pendingGuidance.push(`[guidance from ${by}] ${text}`);
    this.decisions.push({ at: this.now(), by, action: 'message', detail: oneLine(text), ...(identity ? { identity } : {}) });
    this.audit.bound('decision', this.decisions);
    this.audit.record('guidance_added', `${by}${identity && !identity.verified ? ' (unverified)' : ''}: ${oneLine(text)}`);
  }

  /** A message that cancelled the model call in flight: the model is called again with it. */
  recordInterrupt(by: string): void {
    this.audit.record('guidance_added', `${by} interrupted the model call in flight; the model is called again with the message`);
  }

  /** A message the task does not trust: kept in the audit trail, never shown to the model. */
  refuseGuidance({ by, text }: MessageInput, identity: VerifiedIdentity): void {
    this.decisions.push({ at: this.now(), by, action: 'message', detail: `not given to the model (${oneLine(identity.problem ?? 'unverified')}): ${oneLine(text)}`, identity });
    this.audit.bound('decision', this.decisions);
  }

  /**
   * A decision sent as a signal that changes nothing: kept in the audit trail with why. Only the
   * first REFUSED_DECISIONS_ITEMISED of a run are itemised; the rest are counted, so a flood of
   * signals costs the task's state a number, not a list.
   */
  recordUntakenDecision(action: Decision['action'], by: unknown, outcome: 'refused' | 'superseded', problem: string): void {
    this.untakenDecisions += 1;
    if (this.untakenDecisions > REFUSED_DECISIONS_ITEMISED) return;
    const who = typeof by === 'string' && by ? by.slice(0, 200) : 'unknown';
    this.decisions.push({ at: this.now(), by: who, action, outcome, detail: `${outcome} (sent as a signal): ${oneLine(problem)}` });
    this.audit.bound('decision', this.decisions);
    this.audit.record('decision_refused', `${action} by ${who} ${outcome}: ${oneLine(problem)}`);
  }

  /** A signed message's nonce, remembered so the same proof is taken once. */
  rememberNonce(nonce: string, keep: number): void {
    this.messageNonces.push(nonce);
    if (this.messageNonces.length > keep) this.messageNonces.splice(0, this.messageNonces.length - keep);
  }

  isPending(approvalId: string): boolean {
    return this.pendingApprovals.some((a) => a.id === approvalId);
  }

  recordInform(code: string, message: string): void {
    this.escalations.push({ id: this.clock.newId(), level: 'inform', code, reason: message, turn: this.turn, at: this.now() });
    this.audit.bound('escalation', this.escalations, (e) => e.level === 'block' && !e.resolved);
    this.audit.record('informed', `${code}: ${message}`);
  }

  /** Every token class the task's own calls were billed: input, output, cache writes and cache reads. */
  get tokensUsed(): number {
    return tokensOf(this.usage);
  }

  /** Tokens this task and its children spent, and what running children hold: what the token budget counts. */
  get tokensCommitted(): number {
    return this.tokensUsed + this.children.tokens;
  }

  /** Likewise in USD. */
  get costCommitted(): number {
    return this.costUsd + this.children.costUsd;
  }

  complete(outcome: TaskOutcome, finalCallWithoutTools = false): TaskResult {
    this.result = this.resultSoFar(outcome, finalCallWithoutTools);
    this.phase = 'completed';
    this.audit.record('task_completed', `${outcome} after ${this.turn} turns and ${this.toolCalls.total} tool calls`);
    return this.result;
  }

  /** The result as it stands (a failed child task reports its spend from it). */
  resultSoFar(outcome: TaskOutcome, finalCallWithoutTools: boolean): TaskResult {
    const text = this.conversation.answerText();
    return {
      outcome,
      text,
      turns: this.turn,
      toolCalls: this.toolCalls.total,
      usage: { ...this.usage },
      costUsd: this.costUsd,
      model: this.model,
      ...(finalCallWithoutTools ? { finalCallWithoutTools } : {}),
      ...(this.children.any ? { delegated: this.children.spent } : {}),
      ...(this.grades.length ? { grades: this.grades.map((g) => ({ ...g })) } : {}),
    };
  }

  fail(error: ToolError): void {
    this.lastError = error;
    this.phase = 'failed';
    this.audit.record('task_failed', `${error.error_class}/${error.code}: ${error.detail}`);
  }

  /** Cancelled on request: the partial result (what the model said so far) stays readable in status. */
  cancel(): void {
    this.result = this.resultSoFar('cancelled', false);
    this.phase = 'cancelled';
    this.audit.record('task_cancelled', `cancelled on request after ${this.turn} turns and ${this.toolCalls.total} tool calls`);
  }

  now(): string {
    return this.clock.now().toISOString();
  }

  newId(): string {
    return this.clock.newId();
  }
}
