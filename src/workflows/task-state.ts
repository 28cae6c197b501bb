/**
 * Everything a task knows, as one serialisable object with the decisions about it. Plain and
 * deterministic: the workflow drives it, unit tests drive it the same way without Temporal.
 */
import type { AgentManifest } from '../protocol/agent-manifest';
import type { Message, ModelTurn, ToolResultBlock } from '../protocol/messages';
import {
  DEFAULT_MAX_TURNS,
  modelLabel,
  STATUS_EVENT_WINDOW,
  type AgentStatus,
  type TaskEvent,
  type TaskEventKind,
  type TaskInput,
  type TaskOutcome,
  type TaskPhase,
  type TaskResult,
  type TaskStatus,
} from '../protocol/task';
import type { ToolError } from '../protocol/tool-error';
import { textOf } from '../protocol/messages';

const PHASE_TO_STATUS: Record<TaskPhase, AgentStatus> = {
  starting: 'running',
  calling_model: 'running',
  running_tools: 'running',
  awaiting_approval: 'awaiting_approval',
  blocked: 'blocked',
  completed: 'completed',
  failed: 'failed',
  cancelled: 'cancelled',
};

export class TaskState {
  phase: TaskPhase = 'starting';
  turn = 0;
  manifest?: AgentManifest;
  readonly messages: Message[] = [];
  readonly toolCalls = { total: 0, succeeded: 0, failed: 0 };
  readonly usage = { inputTokens: 0, outputTokens: 0 };
  lastError?: ToolError;
  result?: TaskResult;
  private model: string;
  private readonly events: TaskEvent[] = [];
  private eventCount = 0;

  constructor(
    readonly input: TaskInput,
    private readonly now: () => Date,
  ) {
    this.model = input.model ? modelLabel(input.model) : 'agent default';
  }

  get maxTurns(): number {
    return this.input.maxTurns ?? this.manifest?.maxTurns ?? DEFAULT_MAX_TURNS;
  }

  get agentStatus(): AgentStatus {
    return PHASE_TO_STATUS[this.phase];
  }

  begin(manifest: AgentManifest): void {
    this.manifest = manifest;
    this.model = modelLabel(manifest.model);
    this.messages.push({ role: 'user', content: this.input.prompt });
    this.record('task_started', `agent ${manifest.name}, model ${this.model}, up to ${this.maxTurns} turns`);
  }

  get turnsLeft(): number {
    return Math.max(0, this.maxTurns - this.turn);
  }

  startTurn(): void {
    this.turn += 1;
    this.phase = 'calling_model';
  }

  recordModelTurn(reply: ModelTurn): void {
    this.model = reply.model;
    this.usage.inputTokens += reply.usage.inputTokens;
    this.usage.outputTokens += reply.usage.outputTokens;
    this.messages.push({ role: 'assistant', content: reply.content });
    const text = textOf(reply.content);
    const tools = reply.content.filter((b) => b.type === 'tool_use').length;
    this.record(
      'model_replied',
      `${reply.stopReason}${tools ? `, ${tools} tool call${tools > 1 ? 's' : ''}` : ''}${text ? `: ${oneLine(text)}` : ''}`,
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

  recordToolFailed(tool: string, toolUseId: string, error: ToolError): void {
    this.toolCalls.failed += 1;
    this.lastError = error;
    this.record('tool_failed', `${error.error_class}/${error.code}: ${error.detail}`, { tool, toolUseId });
  }

  addToolResults(results: ToolResultBlock[]): void {
    this.messages.push({ role: 'user', content: results });
  }

  complete(outcome: TaskOutcome): TaskResult {
    const last = [...this.messages].reverse().find((m) => m.role === 'assistant');
    const text = last && last.role === 'assistant' ? textOf(last.content) : '';
    this.result = {
      outcome,
      text,
      turns: this.turn,
      toolCalls: this.toolCalls.total,
      usage: { ...this.usage },
      costUsd: 0,
      model: this.model,
    };
    this.phase = 'completed';
    this.record('task_completed', `${outcome} after ${this.turn} turns and ${this.toolCalls.total} tool calls`);
    return this.result;
  }

  fail(error: ToolError): void {
    this.lastError = error;
    this.phase = 'failed';
    this.record('task_failed', `${error.error_class}/${error.code}: ${error.detail}`);
  }

  cancel(): void {
    this.phase = 'cancelled';
    this.record('task_cancelled', 'cancelled on request');
  }

  status(): TaskStatus {
    return {
      agent: this.input.agent,
      phase: this.phase,
      agentStatus: this.agentStatus,
      model: this.model,
      turn: this.turn,
      budgets: { turns: { used: this.turn, limit: this.maxTurns, left: this.turnsLeft } },
      toolCalls: { ...this.toolCalls },
      pendingApprovals: [],
      escalations: [],
      ...(this.lastError ? { lastError: this.lastError } : {}),
      usage: { ...this.usage },
      costUsd: 0,
      events: this.events.slice(-STATUS_EVENT_WINDOW),
      eventCount: this.eventCount,
      ...(this.result ? { result: this.result } : {}),
    };
  }

  private record(kind: TaskEventKind, detail: string, extra: { tool?: string; toolUseId?: string } = {}): void {
    this.eventCount += 1;
    this.events.push({ seq: this.eventCount, at: this.now().toISOString(), kind, turn: this.turn, ...extra, detail });
    // Keep memory bounded on long tasks; the full story is in Temporal's history.
    if (this.events.length > STATUS_EVENT_WINDOW * 2) this.events.splice(0, this.events.length - STATUS_EVENT_WINDOW);
  }
}

function oneLine(text: string, max = 160): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
