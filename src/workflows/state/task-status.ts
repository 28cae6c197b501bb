/** The `status` query's answer: a copy of what the task knows, for people and scripts (never live state). */
import { STATUS_EVENT_WINDOW, type TaskStatus } from '../../protocol/task';
import { DEFAULT_SUMMARY_TOKENS } from '../../protocol/agent-settings';
import type { TaskState } from './task-state';
import { anyRecovery } from './recovery-bill';
import { addSpend } from './child-spend';
import { emptySpend } from '../../protocol/delegation';
import { fallbackStatusOf } from './model-fallback';

function fallbackOf(state: TaskState): Pick<TaskStatus, 'fallback'> {
  const fallback = fallbackStatusOf(state);
  return fallback ? { fallback } : {};
}
import { outcomeStatusOf } from './grades';

/** A budget reading's `held`: what running children hold of it, shown only when they hold some. */
const held = (amount: number) => (amount > 0 ? { held: amount } : {});

export function statusOf(state: TaskState): TaskStatus {
  const { audit, budgets } = state;
  const blocked = state.blocked;
  const { children } = state;
  const delegated = children.spent;
  return {
    agent: state.input.agent,
    phase: state.phase,
    agentStatus: state.agentStatus,
    model: state.model,
    turn: state.turn,
    ...(state.conversation.context ? { context: JSON.parse(JSON.stringify(state.conversation.context)) } : {}),
    budgets: {
      turns: { used: state.turn + delegated.turns, limit: budgets.turns, left: state.turnsLeft, ...held(children.held.turns) },
      toolCalls: { used: state.toolCalls.total + delegated.toolCalls, limit: budgets.toolCalls, left: state.toolCallsLeft, ...held(children.held.toolCalls) },
      toolCallsPerTurn: budgets.toolCallsPerTurn,
      correctionsPerTool: budgets.correctionsPerTool,
      ...(budgets.tokens !== undefined
        ? { tokens: { used: state.tokensCommitted - children.held.tokens, limit: budgets.tokens, left: Math.max(0, budgets.tokens - state.tokensCommitted), ...held(children.held.tokens) } }
        : {}),
      ...(budgets.costUsd !== undefined
        ? { costUsd: { used: state.costCommitted - children.held.costUsd, limit: budgets.costUsd, left: Math.max(0, budgets.costUsd - state.costCommitted), ...held(children.held.costUsd) } }
        : {}),
      ...summaryBudgets(state),
      ...recoveryBudgets(state),
    },
    unpricedModels: [...state.unpricedModels],
    ...(anyRecovery(state.recovery) ? { recovery: { ...state.recovery } } : {}),
    ...fallbackOf(state),
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
    // Totals: the task's own model calls and everything its children (and theirs) spent.
    usage: children.any ? addSpend({ ...emptySpend(), usage: { ...state.usage } }, delegated).usage : { ...state.usage },
    costUsd: state.costUsd + delegated.costUsd,
    ...(children.any ? { delegated: { ...delegated, usage: { ...delegated.usage } }, children: children.children.map((c) => ({ ...c })) } : {}),
    ...(state.scope && (audit.archive.length || audit.overflow.length) ? { archive: { scope: state.scope, markers: [...audit.archive], pending: audit.overflow.map((o) => ({ ...o })) } } : {}),
    events: audit.events.slice(-STATUS_EVENT_WINDOW),
    eventCount: audit.eventCount,
    ...(state.lineage.length ? { lineage: state.lineage.map((p) => ({ ...p })) } : {}),
    ...(state.agentVersion ? { agentVersion: state.agentVersion } : {}),
    ...buildOf(state),
    ...outcomeStatusOf(state),
    ...(state.result ? { result: state.result } : {}),
  };
}

function buildOf(state: TaskState): Pick<TaskStatus, 'build'> {
  const build = state.buildOf();
  return build ? { build: { deploymentName: build.deploymentName, buildId: build.buildId } } : {};
}

/** The recovery budgets the task has (none by default). */
function recoveryBudgets(state: TaskState): Pick<TaskStatus['budgets'], 'recoveryCalls' | 'recoveryCostUsd'> {
  const { recoveryCalls, recoveryCostUsd } = state.budgets;
  const { callsRepeated, costUsdAgain } = state.recovery;
  return {
    ...(recoveryCalls !== undefined ? { recoveryCalls: { used: callsRepeated, limit: recoveryCalls, left: Math.max(0, recoveryCalls - callsRepeated) } } : {}),
    ...(recoveryCostUsd !== undefined ? { recoveryCostUsd: { used: costUsdAgain, limit: recoveryCostUsd, left: Math.max(0, recoveryCostUsd - costUsdAgain) } } : {}),
  };
}

/** The summary calls' budgets, once the task has made one. */
function summaryBudgets(state: TaskState): Pick<TaskStatus['budgets'], 'summaryTokens' | 'summaryCostUsd'> {
  const summaries = state.conversation.context?.summaries;
  if (!summaries) return {};
  const used = summaries.usage.inputTokens + summaries.usage.outputTokens;
  const tokens = state.budgets.summaryTokens ?? DEFAULT_SUMMARY_TOKENS;
  const usd = state.budgets.summaryCostUsd;
  return {
    summaryTokens: { used, limit: tokens, left: Math.max(0, tokens - used) },
    ...(usd !== undefined ? { summaryCostUsd: { used: summaries.costUsd, limit: usd, left: Math.max(0, usd - summaries.costUsd) } } : {}),
  };
}
