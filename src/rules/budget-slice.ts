/**
 * A delegation call's input (written by the model, so checked like any tool input) and the budget
 * slice it carves out of what the parent has left. The parent keeps one turn for itself, to read
 * the child's answer; a slice larger than what is left is refused and no child starts.
 */
import { DEFAULT_BUDGETS } from '../protocol/agent-settings';
import type { BudgetSlice } from '../protocol/delegation';
import { toolError, type ToolError } from '../protocol/tool-error';
import { MAX_PROMPT_CHARS } from '../protocol/wire-shapes';

export interface DelegationCall {
  task: string;
  budget: Partial<BudgetSlice>;
}

/** What the parent has left now (after what running children hold), by budget. */
export interface Remaining {
  turns: number;
  toolCalls: number;
  /** Undefined: the parent has no token budget. */
  tokens?: number;
  costUsd?: number;
}

const SLICE_FIELDS = ['turns', 'toolCalls', 'tokens', 'costUsd'] as const;

/** The call's input, or the model error that says which field is wrong. */
export function readDelegationCall(tool: string, input: unknown): DelegationCall | ToolError {
  const wrong = (detail: string) => toolError('model', 'invalid_arguments', `${tool}: ${detail}`, `Call ${tool} with {"task": "...", "budget": {"turns": N, "toolCalls": N}} (budget optional).`);
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return wrong('the input must be an object');
  const { task, budget, ...rest } = input as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length) return wrong(`unknown field ${unknown.map((k) => `\`${k.slice(0, 40)}\``).join(', ')} (allowed: task, budget)`);
  if (typeof task !== 'string' || task.trim() === '') return wrong('`task` must be a non-empty string');
  if (task.length > MAX_PROMPT_CHARS) return wrong(`\`task\` is ${task.length} characters; at most ${MAX_PROMPT_CHARS}`);
  if (budget === undefined) return { task, budget: {} };
  if (budget === null || typeof budget !== 'object' || Array.isArray(budget)) return wrong('`budget` must be an object {turns?, toolCalls?, tokens?, costUsd?}');
  const slice: Partial<BudgetSlice> = {};
  for (const [key, value] of Object.entries(budget)) {
    if (!(SLICE_FIELDS as readonly string[]).includes(key)) return wrong(`unknown budget \`${key.slice(0, 40)}\` (allowed: ${SLICE_FIELDS.join(', ')})`);
    const whole = key !== 'costUsd';
    if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || (whole && !Number.isInteger(value)) || value > 1_000_000_000) {
      return wrong(`\`budget.${key}\` must be a positive ${whole ? 'integer' : 'number'}`);
    }
    slice[key as keyof BudgetSlice] = value;
  }
  return { task, budget: slice };
}

/** What the parent may give a child now: one turn stays with the parent. */
export function available(remaining: Remaining): Remaining {
  return { ...remaining, turns: Math.max(0, remaining.turns - 1) };
}

/**
 * The slice for a child: what the model asked for; else an equal share of what is available among
 * the turn's delegation calls still to be sliced (`share`, this one included), at most the
 * sub-agent's own turn limit and the default tool calls. Refused (policy) when asked for more than
 * is available, or when nothing is left to give.
 */
export function carveSlice(agent: string, asked: Partial<BudgetSlice>, remaining: Remaining, subagentMaxTurns: number, share = 1): BudgetSlice | ToolError {
  const can = available(remaining);
  const tooLarge: string[] = [];
  for (const key of SLICE_FIELDS) {
    const limit = can[key];
    const want = asked[key];
    if (want !== undefined && limit !== undefined && want > limit) tooLarge.push(`${key} ${want} (${key === 'costUsd' ? `$${limit.toFixed(4)}` : limit} left to give)`);
  }
  if (can.turns < 1) tooLarge.push('turns (none left to give: you keep one turn to answer)');
  if (can.toolCalls < 1) tooLarge.push('toolCalls (none left to give)');
  if ((can.tokens !== undefined && can.tokens < 1) || (can.costUsd !== undefined && can.costUsd <= 0)) tooLarge.push('tokens or cost (none left to give)');
  if (tooLarge.length) {
    return toolError(
      'policy',
      'budget_slice_too_large',
      `No sub-agent was started: the budget asked for ${agent} is more than you have left: ${tooLarge.join('; ')}.`,
      'Ask for a smaller budget (or none, to get what is left), or finish the work yourself.',
    );
  }
  const part = (amount: number) => Math.max(1, Math.floor(amount / share));
  const tokens = asked.tokens ?? (can.tokens !== undefined ? part(can.tokens) : undefined);
  const costUsd = asked.costUsd ?? (can.costUsd !== undefined ? can.costUsd / share : undefined);
  return {
    turns: asked.turns ?? Math.min(subagentMaxTurns, part(can.turns)),
    toolCalls: asked.toolCalls ?? Math.min(DEFAULT_BUDGETS.toolCalls, part(can.toolCalls)),
    ...(tokens !== undefined ? { tokens } : {}),
    ...(costUsd !== undefined ? { costUsd } : {}),
  };
}
