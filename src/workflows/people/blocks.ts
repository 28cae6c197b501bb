/**
 * Blocks: the task stops for a person (a spent budget, a loop, a failure they can fix) and goes on
 * when they unblock it, naming the block they saw; a stale or wrong unblock is refused.
 */
import type { AgentManifest } from '../../protocol/agent-manifest';
import { agentVersionOf } from '../../protocol/agent-version';
import type { Budgets, Escalation, UnblockInput, VerifiedIdentity } from '../../protocol/task';
import { agentDifference } from '../../rules/agent-difference';
import { unblockShapeProblem } from '../base/input-checks';
import type { DecisionRefusal, UnblockRefusalCode } from '../../rules/approvals';
import { raiseAboveUsedProblem, raiseShapeProblem, type RaisableBudget } from '../../rules/unblock-budget';
import { oneLine } from '../base/one-line';
import type { TaskState } from '../state/task-state';

export function blockTask(state: TaskState, code: string, reason: string, agentVersion = state.agentVersion): Escalation {
  const escalation: Escalation = { id: state.newId(), level: 'block', code, reason, turn: state.turn, at: state.now(), ...(agentVersion ? { bound: { agentVersion } } : {}) };
  state.escalations.push(escalation);
  state.audit.bound('escalation', state.escalations, (e) => e.level !== 'inform' && !e.resolved);
  state.phase = 'blocked';
  state.audit.record('task_blocked', `${code}: ${reason}`);
  return escalation;
}

/** Why an unblock cannot be taken now, with its code, or undefined when it can. Read by the update's validator. */
export function unblockRefusal(state: TaskState, input: UnblockInput): DecisionRefusal<UnblockRefusalCode> | undefined {
  const shape = unblockShapeProblem(input);
  if (shape) return { code: 'bad_request', problem: shape };
  if (state.phase !== 'blocked') return { code: 'not_blocked', problem: `the task is not blocked (it is ${state.agentStatus})` };
  if (input.blockId !== undefined && input.blockId !== state.blocked?.id) {
    return {
      code: 'stale_block',
      problem: `block ${input.blockId} is not the current one: the task is blocked on ${state.blocked?.id} (${state.blocked?.code}) now; look at it before you unblock`,
    };
  }
  // Children's spend (and what running ones hold) counts as used: a raise must stay above it.
  const { children } = state;
  const used: Record<string, number> = {
    turns: state.turn + children.turns,
    toolCalls: state.toolCalls.total + children.toolCalls,
    tokens: state.tokensCommitted,
    costUsd: state.costCommitted,
    recoveryCalls: state.recovery.callsRepeated,
    recoveryCostUsd: state.recovery.costUsdAgain,
  };
  for (const [name, value] of Object.entries(input.budget ?? {})) {
    // The shape (known budget, finite number) was checked above, by the same rules.
    const problem = raiseShapeProblem(name, value) ?? raiseAboveUsedProblem(name as RaisableBudget, value as number, used[name]!);
    if (problem) return { code: 'bad_raise', problem };
  }
  return undefined;
}

/**
 * The block as it stands against the agent the worker has now: undefined when the block was raised
 * under that agent (or records none), else the block raised again in its place, bound to the new
 * agent and naming the difference, so the person decides on what would actually resume. Unblocking
 * that one moves the task onto the new agent (state.agentMove: a new run takes its manifest).
 */
export function rebindBlock(state: TaskState, current: AgentManifest): { block: Escalation; changes: string[] } | undefined {
  const block = state.blocked;
  const version = agentVersionOf(current);
  if (!block?.bound || block.bound.agentVersion === version) return undefined;
  const before = state.manifest;
  const changes = before && agentVersionOf(before) === block.bound.agentVersion ? agentDifference(before, current) : [`agent version ${block.bound.agentVersion} -> ${version}`];
  const how = `superseded: the agent changed (${changes.join('; ')})`;
  block.resolved = { by: 'system', at: state.now(), how };
  state.audit.record('task_unblocked', `block ${block.id} ${how}`);
  const reason =
    `The agent changed since block ${block.id} (${block.code}) was raised: ${changes.join('; ')}. ` +
    `Unblock this block to go on under the new agent (the task continues as a new run with it), or cancel the task. The block it replaces: ${block.reason}`;
  return { block: blockTask(state, 'agent_changed', oneLine(reason, 2_000), version), changes };
}

/** A person resumes the task: budgets raised, model overrides, guidance; the guards' streaks start again. */
export function unblockTask(state: TaskState, input: UnblockInput, identity?: VerifiedIdentity): Escalation {
  const escalation = state.blocked!;
  const raised = Object.entries(input.budget ?? {}).map(([k, v]) => `${k} ${state.budgets[k as keyof Budgets] ?? 'unlimited'} -> ${v}`);
  state.budgets = { ...state.budgets, ...input.budget };
  const how = [
    raised.length ? `raised ${raised.join(', ')}` : 'no budget change',
    input.model ? `model -> ${input.model}` : '',
    input.maxTokens ? `max_tokens -> ${input.maxTokens}` : '',
    input.message ? `message: ${oneLine(input.message)}` : '',
  ]
    .filter(Boolean)
    .join('; ');
  escalation.resolved = { by: input.by, at: state.now(), how };
  state.decisions.push({ at: state.now(), by: input.by, action: 'unblock', detail: `${escalation.code}: ${how}`, ...(identity ? { identity } : {}) });
  state.audit.bound('decision', state.decisions);
  if (input.model) state.modelOverride.model = input.model;
  if (input.maxTokens) state.modelOverride.maxTokens = input.maxTokens;
  if (input.message) state.conversation.pendingGuidance.push(`[guidance from ${input.by}] ${input.message}`);
  // A person looked at it: repeated calls and corrections start counting again.
  state.ledger.resetStreaks();
  state.ledger.forgiveFailures();
  for (const tool of Object.keys(state.corrections)) state.corrections[tool] = 0;
  // The person decided on the agent the worker has now: the task moves onto it (rollover.ts).
  if (escalation.code === 'agent_changed' && escalation.bound && escalation.bound.agentVersion !== state.agentVersion) state.agentMove = escalation.bound.agentVersion;
  state.phase = 'running';
  state.audit.record('task_unblocked', `by ${input.by}: ${how}`);
  return escalation;
}
