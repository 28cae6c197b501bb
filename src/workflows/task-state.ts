/**
 * Everything a task knows, as one object with the decisions about it: transcript, budgets, the
 * ledger, escalations and people's decisions. Plain and deterministic: the workflow drives it, unit
 * tests drive it the same way without Temporal.
 */
import type { AgentManifest } from '../protocol/agent-manifest';
import { textOf, type Message, type ModelTurn, type ToolResultBlock, type UserBlock } from '../protocol/messages';
import {
  DEFAULT_BUDGETS,
  DEFAULT_MAX_TURNS,
  modelLabel,
  STATUS_EVENT_WINDOW,
  type AgentStatus,
  type ApprovalRecord,
  type ApprovalRequest,
  type ApproveInput,
  type DenyInput,
  type Budgets,
  type Decision,
  type Escalation,
  type MessageInput,
  type TaskEvent,
  type TaskEventKind,
  type TaskInput,
  type TaskOutcome,
  type TaskPhase,
  type TaskResult,
  type TaskSnapshot,
  type TaskStatus,
  type UnblockInput,
  type ApproverStatus,
  type VerifiedIdentity,
} from '../protocol/task';
import type { ToolError } from '../protocol/tool-error';
import { ToolLedger, type LedgerState } from './ledger';
import { DEFAULT_LIMITS, limitsFrom, type TaskLimits } from './task-limits';
import { approveProblem, denyProblem, unblockShapeProblem } from './input-checks';
import { MARKER_PATTERN, markerIds, resolvedLength } from '../protocol/blob-marker';
import { RECALL_TOOL } from '../protocol/recall-tool';

/** Schema 2: progress only (no manifest). Schema 1 (no `schemaVersion`): the manifest rode along. */
export const CURRENT_SNAPSHOT_SCHEMA = 2;
/** Refused or superseded signalled decisions itemised in the audit trail per run; the rest are counted. */
export const REFUSED_DECISIONS_ITEMISED = 100;
export const READABLE_SNAPSHOT_SCHEMAS: readonly number[] = [1, 2];

const PHASE_TO_STATUS: Record<TaskPhase, AgentStatus> = {
  starting: 'running',
  running: 'running',
  calling_model: 'running',
  running_tools: 'running',
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
  readonly messages: Message[] = [];
  readonly toolCalls = { total: 0, succeeded: 0, failed: 0 };
  readonly usage = { inputTokens: 0, outputTokens: 0, cacheWriteTokens: 0, cacheReadTokens: 0 };
  costUsd = 0;
  readonly unpricedModels: string[] = [];
  ledger: ToolLedger;
  /** The numbers this task decides by, pinned when it started (see task-limits.ts). */
  limits: TaskLimits;
  /** A person's overrides for later model calls (unblock --model / --max-tokens). */
  modelOverride: { model?: string; maxTokens?: number } = {};
  /** Markers of audit entries archived to the blob store, oldest first (`status --all` reads them). */
  readonly archive: string[] = [];
  /** Audit entries that left state and wait to be archived. */
  overflow: { kind: string; entry: unknown }[] = [];
  /** The task's blob scope (rules v2), for `status --all`. */
  scope?: string;
  /** Text of an answer cut at max_tokens, part by part, until it is complete. */
  answerParts: string[] = [];
  /** Times the conversation was compacted to fit the context window, and turns taken out of it. */
  compactions = 0;
  droppedTurns = 0;
  /** Consecutive model errors (invalid calls) per tool: the self-correction bound. */
  readonly corrections: Record<string, number> = {};
  readonly escalations: Escalation[] = [];
  readonly pendingApprovals: ApprovalRequest[] = [];
  readonly approvals: ApprovalRecord[] = [];
  readonly decisions: Decision[] = [];
  /** Verified approvers: who started the task, who may decide, nonces of signed messages taken. */
  starter?: VerifiedIdentity;
  approverStatus?: ApproverStatus;
  messageNonces: string[] = [];
  budgets: Budgets;
  lastError?: ToolError;
  result?: TaskResult;
  private model: string;
  private pendingGuidance: string[] = [];
  private events: TaskEvent[] = [];
  private eventCount = 0;
  /** How many runs (continue-as-new) this task has had before this one. */
  runs = 0;
  /** Decisions sent as signals in this run that were refused or superseded (see recordUntakenDecision). */
  untakenDecisions = 0;
  /**
   * Snapshots from before config-from-worker carried the manifest (trusted configuration); newer
   * ones carry progress only, and each run asks its worker for the manifest again.
   */
  snapshotCarriesManifest = true;

  constructor(
    readonly input: TaskInput,
    private readonly clock: Clock,
    limits: TaskLimits = DEFAULT_LIMITS,
  ) {
    this.limits = limits;
    this.ledger = new ToolLedger(undefined, limits);
    this.model = input.model ? modelLabel(input.model) : 'agent default';
    this.budgets = { ...DEFAULT_BUDGETS, ...input.budgets, turns: input.maxTurns ?? input.budgets?.turns ?? DEFAULT_MAX_TURNS };
  }

  /** Everything the next run needs; pending approvals are never carried (a run continues only between turns). */
  snapshot(): TaskSnapshot {
    return {
      version: 1,
      ...(this.snapshotCarriesManifest ? {} : { schemaVersion: CURRENT_SNAPSHOT_SCHEMA }),
      limits: this.limits,
      ...(this.modelOverride.model || this.modelOverride.maxTokens ? { modelOverride: { ...this.modelOverride } } : {}),
      ...(this.archive.length ? { archive: [...this.archive] } : {}),
      ...(this.compactions ? { compactions: this.compactions, droppedTurns: this.droppedTurns } : {}),
      runs: this.runs + 1,
      turn: this.turn,
      ...(this.snapshotCarriesManifest ? { manifest: this.manifest! } : {}),
      messages: this.messages,
      toolCalls: { ...this.toolCalls },
      usage: { ...this.usage },
      costUsd: this.costUsd,
      unpricedModels: [...this.unpricedModels],
      ledger: this.ledger.toJSON(),
      corrections: { ...this.corrections },
      escalations: this.escalations,
      approvals: this.approvals,
      decisions: this.decisions,
      ...(this.starter ? { starter: this.starter } : {}),
      ...(this.messageNonces.length ? { messageNonces: [...this.messageNonces] } : {}),
      budgets: this.budgets,
      ...(this.lastError ? { lastError: this.lastError } : {}),
      model: this.model,
      pendingGuidance: this.pendingGuidance,
      events: this.events.slice(-Math.min(STATUS_EVENT_WINDOW, this.limits.auditWindow)),
      eventCount: this.eventCount,
    };
  }

  static restore(input: TaskInput, clock: Clock, snapshot: TaskSnapshot): TaskState {
    const schema = snapshot.schemaVersion ?? 1;
    if (!READABLE_SNAPSHOT_SCHEMAS.includes(schema)) throw new Error(`snapshot schema ${schema} is not one this code reads (${READABLE_SNAPSHOT_SCHEMAS.join(', ')})`);
    const state = new TaskState(input, clock, limitsFrom(snapshot.limits));
    if (snapshot.modelOverride) state.modelOverride = { ...snapshot.modelOverride };
    state.archive.push(...(snapshot.archive ?? []));
    state.compactions = snapshot.compactions ?? 0;
    state.droppedTurns = snapshot.droppedTurns ?? 0;
    state.phase = 'running';
    state.runs = snapshot.runs;
    state.turn = snapshot.turn;
    // Schema 1 only, and only where a history recorded before config-from-worker replays: every
    // newer run takes the manifest from its worker (see adoptManifest).
    if (snapshot.manifest) state.manifest = snapshot.manifest;
    state.messages.push(...snapshot.messages);
    Object.assign(state.toolCalls, snapshot.toolCalls);
    Object.assign(state.usage, snapshot.usage);
    state.costUsd = snapshot.costUsd;
    state.unpricedModels.push(...snapshot.unpricedModels);
    state.ledger = new ToolLedger(snapshot.ledger as LedgerState, state.limits);
    Object.assign(state.corrections, snapshot.corrections);
    state.escalations.push(...snapshot.escalations);
    state.approvals.push(...snapshot.approvals);
    state.decisions.push(...snapshot.decisions);
    if (snapshot.starter) state.starter = snapshot.starter;
    state.messageNonces = [...(snapshot.messageNonces ?? [])];
    state.budgets = snapshot.budgets;
    if (snapshot.lastError) state.lastError = snapshot.lastError;
    state.model = snapshot.model;
    state.pendingGuidance = [...snapshot.pendingGuidance];
    state.events = [...snapshot.events];
    state.eventCount = snapshot.eventCount;
    return state;
  }

  get agentStatus(): AgentStatus {
    return PHASE_TO_STATUS[this.phase];
  }

  get turnsLeft(): number {
    return Math.max(0, this.budgets.turns - this.turn);
  }

  get toolCallsLeft(): number {
    return Math.max(0, this.budgets.toolCalls - this.toolCalls.total);
  }

  get blocked(): Escalation | undefined {
    return this.phase === 'blocked' ? [...this.escalations].reverse().find((e) => e.level === 'block' && !e.resolved) : undefined;
  }

  /** A resumed run's configuration, from its own worker: a snapshot never supplies it. */
  adoptManifest(manifest: AgentManifest): void {
    this.manifest = manifest;
  }

  begin(manifest: AgentManifest): void {
    this.manifest = manifest;
    this.model = modelLabel(manifest.model);
    this.budgets = {
      ...DEFAULT_BUDGETS,
      ...manifest.budgets,
      ...this.input.budgets,
      turns: this.input.maxTurns ?? this.input.budgets?.turns ?? manifest.budgets?.turns ?? manifest.maxTurns,
    };
    this.messages.push({ role: 'user', content: this.input.prompt });
    this.record(
      'task_started',
      `agent ${manifest.name}, model ${this.model}, budgets: ${this.budgets.turns} turns, ${this.budgets.toolCalls} tool calls`,
    );
  }

  startTurn(): void {
    this.turn += 1;
    this.phase = 'calling_model';
  }

  /**
   * An answer cut at max_tokens goes on in a new user turn (current models refuse an assistant
   * prefill); its text so far is kept so the final answer holds every part.
   */
  continueCutAnswer(): void {
    const last = this.messages.at(-1);
    if (last?.role === 'assistant') this.answerParts.push(last.content.map((b) => (b.type === 'text' ? b.text : '')).join(''));
    this.messages.push({
      role: 'user',
      content: [{ type: 'text', text: 'Your answer was cut off at the output limit. Continue exactly where it stopped, without repeating what you already wrote.' }],
    });
  }

  /** A turn with tool calls starts a new answer. */
  clearAnswerParts(): void {
    this.answerParts = [];
  }

  recordModelTurn(reply: ModelTurn): void {
    this.model = reply.model;
    this.usage.inputTokens += reply.usage.inputTokens;
    this.usage.outputTokens += reply.usage.outputTokens;
    this.usage.cacheWriteTokens += reply.usage.cacheWriteTokens ?? 0;
    this.usage.cacheReadTokens += reply.usage.cacheReadTokens ?? 0;
    if (reply.costUsd !== undefined) this.costUsd += reply.costUsd;
    else if (!reply.model.startsWith('scripted:') && !this.unpricedModels.includes(reply.model)) this.unpricedModels.push(reply.model);
    this.messages.push({ role: 'assistant', content: reply.content });
    const text = textOf(reply.content);
    const tools = reply.content.filter((b) => b.type === 'tool_use').length;
    const spend = reply.usage.inputTokens + reply.usage.outputTokens
      ? ` [${reply.usage.inputTokens + reply.usage.outputTokens} tokens${reply.costUsd !== undefined ? `, $${reply.costUsd.toFixed(4)}; task $${this.costUsd.toFixed(4)}` : ''}]`
      : '';
    this.record(
      'model_replied',
      `${reply.stopReason}${tools ? `, ${tools} tool call${tools > 1 ? 's' : ''}` : ''}${spend}${text ? `: ${oneLine(text)}` : ''}`,
    );
  }

  recordToolCalled(tool: string, toolUseId: string, input: unknown): void {
    this.phase = 'running_tools';
    this.toolCalls.total += 1;
    this.record('tool_called', oneLine(JSON.stringify(input) ?? 'undefined'), { tool, toolUseId });
  }

  recordToolSucceeded(tool: string, toolUseId: string, summary: string): void {
    this.toolCalls.succeeded += 1;
    this.record('tool_succeeded', summary, { tool, toolUseId });
  }

  /** A call that ran and failed (counted) or was refused before running (`ran` false, not counted). */
  recordToolFailed(tool: string, toolUseId: string, error: ToolError, ran = true): void {
    if (ran) this.toolCalls.failed += 1;
    this.lastError = error;
    this.record('tool_failed', `${ran ? '' : 'refused: '}${error.error_class}/${error.code}: ${error.detail}`, { tool, toolUseId });
  }

  recordToolReused(tool: string, toolUseId: string, fromTurn: number): void {
    this.record('tool_succeeded', `answered from the ledger (same call in turn ${fromTurn}); not run again`, { tool, toolUseId });
  }

  /** Keeps the newest `auditWindow` entries of an audit list in state; older ones wait in `overflow` for the store. */
  private bound<T>(kind: string, list: T[], keep: (entry: T) => boolean = () => false): void {
    let excess = list.length - this.limits.auditWindow;
    for (let i = 0; excess > 0 && i < list.length; ) {
      if (keep(list[i]!)) {
        i++;
        continue;
      }
      this.overflow.push({ kind, entry: list.splice(i, 1)[0] });
      excess--;
    }
  }

  /** Before a snapshot (rules v2): events beyond the window a snapshot carries wait for the archive instead of being dropped. */
  spillEvents(): void {
    const keep = Math.min(STATUS_EVENT_WINDOW, this.limits.auditWindow);
    if (this.limits.rulesVersion < 2 || this.events.length <= keep) return;
    for (const entry of this.events.splice(0, this.events.length - keep)) this.overflow.push({ kind: 'event', entry });
  }

  /** Audit entries waiting to be archived, taken out of state. */
  takeOverflow(): { kind: string; entry: unknown }[] {
    const taken = this.overflow;
    this.overflow = [];
    return taken;
  }

  /** The user message after a turn: tool results first (the API requires it), then notes. */
  addToolResults(results: ToolResultBlock[], notes: string[] = []): void {
    const blocks: UserBlock[] = [...results];
    for (const text of notes) blocks.push({ type: 'text', text });
    this.messages.push({ role: 'user', content: blocks });
  }

  get hasPendingGuidance(): boolean {
    return this.pendingGuidance.length > 0;
  }

  /**
   * Puts a person's pending guidance into the conversation before the next model call: appended to
   * the last user message (tool results), or as a new one after an assistant answer.
   */
  flushGuidance(): void {
    const guidance = this.takeGuidance();
    if (guidance.length === 0) return;
    const blocks = guidance.map((text) => ({ type: 'text' as const, text }));
    const last = this.messages.at(-1);
    if (last?.role === 'user') {
      last.content = [...(typeof last.content === 'string' ? [{ type: 'text' as const, text: last.content }] : last.content), ...blocks];
    } else {
      this.messages.push({ role: 'user', content: blocks });
    }
  }

  addGuidance({ by, text }: MessageInput, identity?: VerifiedIdentity): void {
    this.pendingGuidance.push(`[guidance from ${by}] ${text}`);
    this.decisions.push({ at: this.nowIso(), by, action: 'message', detail: oneLine(text), ...(identity ? { identity } : {}) });
    this.bound('decision', this.decisions);
    this.record('guidance_added', `${by}${identity && !identity.verified ? ' (unverified)' : ''}: ${oneLine(text)}`);
  }

  /** A message the task does not trust: kept in the audit trail, never shown to the model. */
  refuseGuidance({ by, text }: MessageInput, identity: VerifiedIdentity): void {
    this.decisions.push({ at: this.nowIso(), by, action: 'message', detail: `not given to the model (${oneLine(identity.problem ?? 'unverified')}): ${oneLine(text)}`, identity });
    this.bound('decision', this.decisions);
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
    this.decisions.push({ at: this.nowIso(), by: who, action, outcome, detail: `${outcome} (sent as a signal): ${oneLine(problem)}` });
    this.bound('decision', this.decisions);
    this.record('decision_refused', `${action} by ${who} ${outcome}: ${oneLine(problem)}`);
  }

  /** A signed message's nonce, remembered so the same proof is taken once. */
  rememberNonce(nonce: string, keep: number): void {
    this.messageNonces.push(nonce);
    if (this.messageNonces.length > keep) this.messageNonces.splice(0, this.messageNonces.length - keep);
  }

  /** What the model is told about its budgets after each turn, with a warning before they run out. */
  budgetNote(): string {
    const turnsLeft = this.turnsLeft;
    const callsLeft = this.toolCallsLeft;
    const parts = [`[budget] turn ${this.turn} of ${this.budgets.turns}; ${callsLeft} of ${this.budgets.toolCalls} tool calls left.`];
    if (this.budgets.tokens !== undefined) parts.push(`${Math.max(0, this.budgets.tokens - this.tokensUsed)} of ${this.budgets.tokens} tokens left.`);
    if (this.budgets.costUsd !== undefined) parts.push(`$${Math.max(0, this.budgets.costUsd - this.costUsd).toFixed(4)} of $${this.budgets.costUsd} left.`);
    if (turnsLeft <= Math.max(2, Math.floor(this.budgets.turns * 0.2)) || callsLeft <= Math.max(3, Math.floor(this.budgets.toolCalls * 0.2))) {
      parts.push('Warning: the budget is nearly spent; finish with what you have rather than starting new work.');
    }
    return parts.join(' ');
  }

  requestApproval(request: Omit<ApprovalRequest, 'requestedAt' | 'turn' | 'id'>): ApprovalRequest {
    const approval: ApprovalRequest = { ...request, id: this.clock.newId(), turn: this.turn, requestedAt: this.nowIso() };
    this.pendingApprovals.push(approval);
    this.phase = 'awaiting_approval';
    this.escalations.push({ id: approval.id, level: 'confirm', code: 'approval_requested', reason: request.reason, turn: this.turn, at: approval.requestedAt });
    this.bound('escalation', this.escalations, (e) => !e.resolved);
    this.record('approval_requested', `${request.tool} ${oneLine(JSON.stringify(request.input) ?? '')} (approval ${approval.id})`, {
      tool: request.tool,
      toolUseId: request.toolUseId,
    });
    return approval;
  }

  /** Why an approve/deny cannot be taken, or undefined. Read by the updates' validators. */
  decisionProblem(input: ApproveInput | DenyInput, kind: 'approve' | 'deny'): string | undefined {
    const shape = kind === 'approve' ? approveProblem(input) : denyProblem(input);
    if (shape) return shape;
    if (this.pendingApprovals.some((a) => a.id === input.approvalId)) return undefined;
    const decided = this.approvals.find((a) => a.id === input.approvalId);
    if (decided) return `approval ${input.approvalId} was already ${decided.decision} by ${decided.by} at ${decided.decidedAt}`;
    const waiting = this.pendingApprovals.map((a) => a.id).join(', ');
    return `no pending approval ${input.approvalId} on this task${waiting ? ` (pending: ${waiting})` : ' (none pending)'}`;
  }

  isPending(approvalId: string): boolean {
    return this.pendingApprovals.some((a) => a.id === approvalId);
  }

  /** Single use: the approval leaves the pending list as it is decided. */
  decide(approvalId: string, decision: ApprovalRecord['decision'], by: string, extra: Partial<Pick<ApprovalRecord, 'comment' | 'denyReason' | 'editedInput' | 'identity'>> = {}): ApprovalRecord {
    const index = this.pendingApprovals.findIndex((a) => a.id === approvalId);
    const [approval] = this.pendingApprovals.splice(index, 1);
    const record: ApprovalRecord = { ...approval!, decision, by, decidedAt: this.nowIso(), ...extra };
    this.approvals.push(record);
    const escalation = this.escalations.find((e) => e.id === approvalId);
    const how = `${decision}${extra.editedInput !== undefined ? ' with edited arguments' : ''}${extra.comment ? `: ${oneLine(extra.comment)}` : ''}${extra.denyReason ? `: ${oneLine(extra.denyReason)}` : ''}`;
    if (escalation) escalation.resolved = { by, at: record.decidedAt, how };
    if (decision !== 'expired') {
      this.decisions.push({ at: record.decidedAt, by, action: decision === 'approved' ? 'approve' : 'deny', detail: `${approval!.tool} (${approvalId}) ${how}`, ...(extra.identity ? { identity: extra.identity } : {}) });
    }
    this.bound('approval', this.approvals);
    this.bound('decision', this.decisions);
    if (this.pendingApprovals.length === 0 && this.phase === 'awaiting_approval') this.phase = 'running_tools';
    this.record('approval_decided', `${approval!.tool} ${how} by ${by}`, { tool: approval!.tool, toolUseId: approval!.toolUseId });
    return record;
  }

  recordInform(code: string, message: string): void {
    this.escalations.push({ id: this.clock.newId(), level: 'inform', code, reason: message, turn: this.turn, at: this.nowIso() });
    this.bound('escalation', this.escalations, (e) => e.level === 'block' && !e.resolved);
    this.record('informed', `${code}: ${message}`);
  }

  get tokensUsed(): number {
    return this.usage.inputTokens + this.usage.outputTokens;
  }

  /** The token or cost budget that is spent, if one is. */
  spentSpendBudget(): { code: string; reason: string } | undefined {
    const { tokens, costUsd } = this.budgets;
    if (tokens !== undefined && this.tokensUsed >= tokens) {
      return { code: 'token_budget', reason: `The task used ${this.tokensUsed} of its ${tokens} tokens.` };
    }
    if (costUsd !== undefined && this.costUsd >= costUsd) {
      return { code: 'cost_budget', reason: `The task spent $${this.costUsd.toFixed(4)} of its $${costUsd} budget.` };
    }
    return undefined;
  }

  /**
   * Makes room in the context window: the content of tool results older than the last `keepTurns`
   * turns is replaced by a short note. Returns how many characters were removed.
   */
  compactOldToolResults(keepTurns = 2): number {
    const { chars: removed, withRefs } = this.stubOldToolResults(keepTurns, 200);
    // Stubs that name refs are recallable: the recall tool is offered from now on.
    if (withRefs) this.compactions = Math.max(this.compactions, 1);
    if (removed) this.record('informed', `compacted old tool results: ${removed} characters removed`);
    return removed;
  }


  /**
   * What the next model call will read, estimated without resolving anything: characters of text,
   * tool inputs and results (a marker counts as the content it stands for), about 3 per token.
   */
  estimatedPromptTokens(extraChars = 0): number {
    let chars = extraChars;
    for (const message of this.messages) {
      if (typeof message.content === 'string') chars += resolvedLength(message.content);
      else for (const block of message.content as { type: string; text?: string; content?: string; input?: unknown; thinking?: string }[]) {
        if (block.type === 'text') chars += resolvedLength(block.text ?? '');
        else if (block.type === 'tool_result') chars += resolvedLength(block.content ?? '');
        else if (block.type === 'tool_use') chars += resolvedLength(JSON.stringify(block.input) ?? '');
        else if (block.type === 'thinking') chars += resolvedLength(block.thinking ?? '');
      }
    }
    return Math.ceil(chars / 3);
  }

  /**
   * Rules v2: keeps the conversation inside the model's context window and the state bounded,
   * before the API has to refuse it. Older tool results give way first (their content stays in the
   * store; the model can recall it by ref), then the oldest turns leave the conversation.
   * Returns a line for the audit trail, or undefined when nothing changed.
   */
  compactForContext(contextWindowTokens: number, extraChars: number): string | undefined {
    if (this.limits.rulesVersion < 2) return undefined;
    const budget = Math.floor(contextWindowTokens * this.limits.compactAtRatio);
    const over = () => this.estimatedPromptTokens(extraChars) > budget;
    const tooMany = () => this.messages.length > this.limits.maxConversationMessages;
    if (!over() && !tooMany()) return undefined;
    let stubbed = 0;
    if (over()) stubbed = this.stubOldToolResults(this.limits.keepRecentTurns, 300).count;
    let dropped = 0;
    const trimTo = tooMany() ? Math.min(this.limits.trimConversationTo ?? Infinity, this.limits.maxConversationMessages) : this.limits.maxConversationMessages;
    // Pairs (assistant, user) after the first prompt, so roles keep alternating and every tool_use keeps its results.
    while ((this.messages.length > trimTo || over()) && this.messages.length > 3 + 2 * this.limits.keepRecentTurns) {
      this.messages.splice(1, 2);
      dropped += 1;
    }
    if (!stubbed && !dropped) return undefined;
    this.compactions += 1;
    this.droppedTurns += dropped;
    if (dropped) this.noteDroppedTurns();
    const line = `compacted the conversation for the context window: ${stubbed} older tool results stubbed (recallable with ${RECALL_TOOL}), ${dropped} oldest turns removed (${this.droppedTurns} in all)`;
    this.record('informed', line);
    return line;
  }

  /**
   * Replaces tool results older than the last `keepTurns` turns, from `minChars` characters (as the
   * model reads them: a stored result counts as its content), by a stub that says how to get them back.
   */
  private stubOldToolResults(keepTurns: number, minChars: number): { count: number; chars: number; withRefs: number } {
    const done = { count: 0, chars: 0, withRefs: 0 };
    const userTurns = this.messages.map((m, i) => (m.role === 'user' && Array.isArray(m.content) ? i : -1)).filter((i) => i >= 0);
    for (const index of userTurns.slice(0, Math.max(0, userTurns.length - keepTurns))) {
      const message = this.messages[index]!;
      if (!Array.isArray(message.content)) continue;
      for (const block of message.content) {
        if (block.type !== 'tool_result' || block.content.startsWith('{"compacted"')) continue;
        const chars = resolvedLength(block.content);
        if (chars < minChars) continue;
        const refs = markerIds(block.content);
        block.content = JSON.stringify(
          refs.length
            ? { compacted: `${chars} characters removed to fit the context window`, recall: refs.map((ref) => ({ tool: RECALL_TOOL, ref })) }
            : { compacted: `${chars} characters removed to fit the context window; call the tool again if you need this.` },
        );
        done.count += 1;
        done.chars += chars;
        if (refs.length) done.withRefs += 1;
      }
    }
    return done;
  }


  private noteDroppedTurns(): void {
    const first = this.messages[0];
    if (!first || first.role !== 'user') return;
    const note = `[context] ${this.droppedTurns} earlier turns of this task were removed from the conversation to fit the context window; their tool results stay stored and can be recalled by ref where a stub shows one.`;
    const blocks = typeof first.content === 'string' ? [{ type: 'text' as const, text: first.content }] : first.content;
    const kept = blocks.filter((b) => !(b.type === 'text' && b.text.startsWith('[context] ')));
    first.content = [...kept, { type: 'text', text: note }];
  }

  /** After a person unblocked a task whose stored content is gone: every reference to it becomes a note. */
  forgetMissingBlob(detail: string): void {
    const id = /sha256:[0-9a-f]{64}/.exec(detail)?.[0];
    if (!id) return;
    const gone = JSON.stringify({ missing: `stored content ${id} is no longer available` });
    const replace = (text: string) => text.replace(MARKER_PATTERN, (match, found: string) => (found === id ? gone : match));
    for (const message of this.messages) {
      if (typeof message.content === 'string') {
        message.content = replace(message.content);
        continue;
      }
      for (const block of message.content as { type: string; text?: string; content?: string; input?: unknown }[]) {
        if (block.type === 'text' && block.text) block.text = replace(block.text);
        if (block.type === 'tool_result' && block.content) block.content = replace(block.content);
        if (block.type === 'tool_use' && (block.input as { $blob?: string } | null)?.$blob === id) block.input = {};
      }
    }
    this.record('informed', `stored content ${id} is missing; the conversation goes on without it`);
  }

  /** Whether the built-in recall tool must be offered (something was compacted). */
  get offersRecall(): boolean {
    return this.compactions > 0;
  }

  /**
   * The snapshot for the next run, made to fit `ceiling` bytes of JSON: cached read content, then
   * the oldest turns, then the audit window give way. Undefined when it still cannot fit.
   */
  fittedSnapshot(ceiling: number): { snapshot: TaskSnapshot; bytes: number; shrunk: string[] } | { bytes: number; shrunk: string[] } {
    const shrunk: string[] = [];
    this.ledger.forgetStaleReads(this.turn);
    const measure = () => {
      const snapshot = this.snapshot();
      return { snapshot, bytes: JSON.stringify(snapshot).length };
    };
    let current = measure();
    if (current.bytes <= ceiling) return { ...current, shrunk };
    this.ledger.dropCachedContent();
    shrunk.push('cached read results');
    current = measure();
    for (let keep = Math.floor(this.ledger.size / 2); current.bytes > ceiling && keep >= 50; keep = Math.floor(keep / 2)) {
      this.ledger.shrinkTo(keep);
      current = measure();
      if (current.bytes <= ceiling) shrunk.push(`ledger cut to ${this.ledger.size} keys`);
    }
    while (current.bytes > ceiling && this.messages.length > 3) {
      this.messages.splice(1, 2);
      this.droppedTurns += 1;
      current = measure();
    }
    if (this.droppedTurns) {
      this.noteDroppedTurns();
      shrunk.push(`oldest turns (${this.droppedTurns} removed in all)`);
      current = measure();
    }
    if (current.bytes <= ceiling) return { ...current, shrunk };
    return { bytes: current.bytes, shrunk };
  }

  block(code: string, reason: string): Escalation {
    const escalation: Escalation = { id: this.clock.newId(), level: 'block', code, reason, turn: this.turn, at: this.nowIso() };
    this.escalations.push(escalation);
    this.bound('escalation', this.escalations, (e) => e.level !== 'inform' && !e.resolved);
    this.phase = 'blocked';
    this.record('task_blocked', `${code}: ${reason}`);
    return escalation;
  }

  /** Why an unblock cannot be taken now, or undefined when it can. Read by the update's validator. */
  unblockProblem(input: UnblockInput): string | undefined {
    const shape = unblockShapeProblem(input);
    if (shape) return shape;
    if (this.phase !== 'blocked') return `the task is not blocked (it is ${this.agentStatus})`;
    if (input.blockId !== undefined && input.blockId !== this.blocked?.id) {
      return `block ${input.blockId} is not the current one: the task is blocked on ${this.blocked?.id} (${this.blocked?.code}) now; look at it before you unblock`;
    }
    const used: Record<string, number> = { turns: this.turn, toolCalls: this.toolCalls.total, tokens: this.tokensUsed, costUsd: this.costUsd };
    for (const [name, value] of Object.entries(input.budget ?? {})) {
      if (!(name in used)) return `unknown budget "${name}" (turns, toolCalls, tokens, costUsd)`;
      const wholeNumber = name !== 'costUsd';
      if (typeof value !== 'number' || (wholeNumber && !Number.isInteger(value)) || value <= used[name]!) {
        return `budget.${name} must be ${wholeNumber ? 'an integer' : 'a number'} above what is used (${used[name]}), got ${JSON.stringify(value)}`;
      }
    }
    return undefined;
  }

  unblock(input: UnblockInput, identity?: VerifiedIdentity): Escalation {
    const escalation = this.blocked!;
    const raised = Object.entries(input.budget ?? {}).map(([k, v]) => `${k} ${this.budgets[k as keyof Budgets] ?? 'unlimited'} -> ${v}`);
    this.budgets = { ...this.budgets, ...input.budget };
    const how = [
      raised.length ? `raised ${raised.join(', ')}` : 'no budget change',
      input.model ? `model -> ${input.model}` : '',
      input.maxTokens ? `max_tokens -> ${input.maxTokens}` : '',
      input.message ? `message: ${oneLine(input.message)}` : '',
    ]
      .filter(Boolean)
      .join('; ');
    escalation.resolved = { by: input.by, at: this.nowIso(), how };
    this.decisions.push({ at: this.nowIso(), by: input.by, action: 'unblock', detail: `${escalation.code}: ${how}`, ...(identity ? { identity } : {}) });
    this.bound('decision', this.decisions);
    if (input.model) this.modelOverride.model = input.model;
    if (input.maxTokens) this.modelOverride.maxTokens = input.maxTokens;
    if (input.message) this.pendingGuidance.push(`[guidance from ${input.by}] ${input.message}`);
    // A person looked at it: repeated calls and corrections start counting again.
    this.ledger.resetStreaks();
    for (const tool of Object.keys(this.corrections)) this.corrections[tool] = 0;
    this.phase = 'running';
    this.record('task_unblocked', `by ${input.by}: ${how}`);
    return escalation;
  }

  complete(outcome: TaskOutcome, finalCallWithoutTools = false): TaskResult {
    this.result = this.resultSoFar(outcome, finalCallWithoutTools);
    this.phase = 'completed';
    this.record('task_completed', `${outcome} after ${this.turn} turns and ${this.toolCalls.total} tool calls`);
    return this.result;
  }

  private resultSoFar(outcome: TaskOutcome, finalCallWithoutTools: boolean): TaskResult {
    // An answer continued after max_tokens spans the trailing assistant messages.
    const trailing: string[] = [];
    for (let i = this.messages.length - 1; i >= 0 && this.messages[i]!.role === 'assistant'; i--) {
      const message = this.messages[i]!;
      // Untrimmed: the parts of a continued answer meet mid-sentence.
      if (message.role === 'assistant') trailing.unshift(message.content.map((b) => (b.type === 'text' ? b.text : '')).join(''));
    }
    const last = [...this.messages].reverse().find((m) => m.role === 'assistant');
    let text = trailing.length > 1 ? trailing.join('').trim() : last && last.role === 'assistant' ? textOf(last.content) : '';
    // An answer continued after max_tokens (rules v2): its parts, in order, then the last one.
    if (this.answerParts.length && last?.role === 'assistant') {
      text = [...this.answerParts, last.content.map((b) => (b.type === 'text' ? b.text : '')).join('')].join('').trim();
    }
    return {
      outcome,
      text,
      turns: this.turn,
      toolCalls: this.toolCalls.total,
      usage: { ...this.usage },
      costUsd: this.costUsd,
      model: this.model,
      ...(finalCallWithoutTools ? { finalCallWithoutTools } : {}),
    };
  }

  fail(error: ToolError): void {
    this.lastError = error;
    this.phase = 'failed';
    this.record('task_failed', `${error.error_class}/${error.code}: ${error.detail}`);
  }

  /** Cancelled on request: the partial result (what the model said so far) stays readable in status. */
  cancel(): void {
    this.result = this.resultSoFar('cancelled', false);
    this.phase = 'cancelled';
    this.record('task_cancelled', `cancelled on request after ${this.turn} turns and ${this.toolCalls.total} tool calls`);
  }

  status(): TaskStatus {
    const blocked = this.blocked;
    return {
      agent: this.input.agent,
      phase: this.phase,
      agentStatus: this.agentStatus,
      model: this.model,
      turn: this.turn,
      budgets: {
        turns: { used: this.turn, limit: this.budgets.turns, left: this.turnsLeft },
        toolCalls: { used: this.toolCalls.total, limit: this.budgets.toolCalls, left: this.toolCallsLeft },
        toolCallsPerTurn: this.budgets.toolCallsPerTurn,
        correctionsPerTool: this.budgets.correctionsPerTool,
        ...(this.budgets.tokens !== undefined
          ? { tokens: { used: this.tokensUsed, limit: this.budgets.tokens, left: Math.max(0, this.budgets.tokens - this.tokensUsed) } }
          : {}),
        ...(this.budgets.costUsd !== undefined
          ? { costUsd: { used: this.costUsd, limit: this.budgets.costUsd, left: Math.max(0, this.budgets.costUsd - this.costUsd) } }
          : {}),
      },
      unpricedModels: [...this.unpricedModels],
      toolCalls: { ...this.toolCalls },
      pendingApprovals: this.pendingApprovals.map((a) => ({ ...a })),
      approvals: this.approvals.map((a) => ({ ...a })),
      escalations: this.escalations.map((e) => ({ ...e })),
      decisions: [...this.decisions],
      ...(this.untakenDecisions ? { untakenDecisions: this.untakenDecisions } : {}),
      ...(this.approverStatus ? { approvers: this.approverStatus } : {}),
      ...(this.starter ? { starter: { ...this.starter } } : {}),
      ...(blocked ? { blocked: { ...blocked } } : {}),
      ...(this.lastError ? { lastError: this.lastError } : {}),
      usage: { ...this.usage },
      costUsd: this.costUsd,
      ...(this.scope && (this.archive.length || this.overflow.length) ? { archive: { scope: this.scope, markers: [...this.archive], pending: this.overflow.map((o) => ({ ...o })) } } : {}),
      events: this.events.slice(-STATUS_EVENT_WINDOW),
      eventCount: this.eventCount,
      ...(this.result ? { result: this.result } : {}),
    };
  }

  private takeGuidance(): string[] {
    const taken = this.pendingGuidance;
    this.pendingGuidance = [];
    return taken;
  }

  private nowIso(): string {
    return this.clock.now().toISOString();
  }

  private record(kind: TaskEventKind, detail: string, extra: { tool?: string; toolUseId?: string } = {}): void {
    this.eventCount += 1;
    this.events.push({ seq: this.eventCount, at: this.nowIso(), kind, turn: this.turn, ...extra, detail });
    // Keep memory bounded on long tasks; the full story is in Temporal's history.
    if (this.limits.rulesVersion >= 2) this.spillEvents();
    else if (this.events.length > STATUS_EVENT_WINDOW * 2) this.events.splice(0, this.events.length - STATUS_EVENT_WINDOW);
  }
}

function oneLine(text: string, max = 160): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
