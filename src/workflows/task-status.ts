/** The `status` query's answer: a copy of what the task knows, for people and scripts (never live state). */
import { STATUS_EVENT_WINDOW, type TaskStatus } from '../protocol/task';
import type { TaskState } from './task-state';

export function statusOf(state: TaskState): TaskStatus {
  const { audit, budgets } = state;
  const blocked = state.blocked;
  return {
    agent: state.input.agent,
    phase: state.phase,
    agentStatus: state.agentStatus,
    model: state.model,
    turn: state.turn,
    budgets: {
      turns: { used: state.turn, limit: budgets.turns, left: state.turnsLeft },
      toolCalls: { used: state.toolCalls.total, limit: budgets.toolCalls, left: state.toolCallsLeft },
      toolCallsPerTurn: budgets.toolCallsPerTurn,
      correctionsPerTool: budgets.correctionsPerTool,
      ...(budgets.tokens !== undefined ? { tokens: { used: state.tokensUsed, limit: budgets.tokens, left: Math.max(0, budgets.tokens - state.tokensUsed) } } : {}),
      ...(budgets.costUsd !== undefined ? { costUsd: { used: state.costUsd, limit: budgets.costUsd, left: Math.max(0, budgets.costUsd - state.costUsd) } } : {}),
    },
    unpricedModels: [...state.unpricedModels],
    toolCalls: { ...state.toolCalls },
    pendingApprovals: state.pendingApprovals.map((a) => ({ ...a })),
    approvals: audit.approvals.map((a) => ({ ...a })),
    escalations: audit.escalations.map((e) => ({ ...e })),
    decisions: [...audit.decisions],
    ...(state.untakenDecisions ? { untakenDecisions: state.untakenDecisions } : {}),
    ...(state.approverStatus ? { approvers: state.approverStatus } : {}),
    ...(state.starter ? { starter: { ...state.starter } } : {}),
    ...(blocked ? { blocked: { ...blocked } } : {}),
    ...(state.lastError ? { lastError: state.lastError } : {}),
    usage: { ...state.usage },
    costUsd: state.costUsd,
    ...(state.scope && (audit.archive.length || audit.overflow.length) ? { archive: { scope: state.scope, markers: [...audit.archive], pending: audit.overflow.map((o) => ({ ...o })) } } : {}),
    events: audit.events.slice(-STATUS_EVENT_WINDOW),
    eventCount: audit.eventCount,
    ...(state.lineage.length ? { lineage: state.lineage.map((p) => ({ ...p })) } : {}),
    ...(state.result ? { result: state.result } : {}),
  };
}
