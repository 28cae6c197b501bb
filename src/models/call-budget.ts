/**
 * What a model call may cost at most, before it is sent, and what an aborted call cost: budgets are
 * hard caps (docs/guarantees.md). A call's maximum is its input (estimated from the request's bytes,
 * priced as a prompt-cache write, the dearest way the API bills input) plus its whole max_tokens
 * of output. A call that a caller aborts is counted from what its stream said (message_start and
 * message_delta usage, and the output characters that arrived), or at its maximum when nothing had.
 */
import { ToolFailure } from '../errors/tool-failure';
import type { Usage } from '../protocol/messages';
import type { PriceTable } from './pricing';

/**
 * Characters per token the estimate assumes: fewer than any tokenizer the API bills by for JSON
 * and prose (about 3.5 to 4), so the estimate is an upper bound of the input a request is billed.
 */
export const CHARS_PER_TOKEN_ESTIMATE = 3;
/** Below this many output tokens a call is not worth sending: the budget counts as spent. */
export const MIN_ANSWER_TOKENS = 64;

/** What a request will be sent with, as its model reports it before sending. */
export interface CallPlan {
  model: string;
  /** Upper-bound estimate of the request's input tokens. */
  inputTokens: number;
  maxTokens: number;
  /** Extended thinking's budget: max_tokens must stay above it. */
  thinkingBudget?: number;
}

/** What is left of a task's spend budgets (undefined: no such budget). */
export interface SpendLeft {
  costUsd?: number;
  tokens?: number;
  /** What the task's previous model call cost: the estimate for a model that cannot say its maximum (no plan). */
  lastCallCostUsd?: number;
}

/**
 * A model that cannot say what a call will be sent with (a custom model without `plan`): its last
 * call's cost stands for this one's, and a call that would pass the cost left is not sent. A bound
 * as good as the calls are alike: one call may still cost more than the one before it.
 */
export function checkByLastCall(left: SpendLeft): void {
  if (left.costUsd === undefined || left.lastCallCostUsd === undefined || left.lastCallCostUsd <= left.costUsd) return;
  throw new ToolFailure(
    'resource',
    'cost_budget',
    `The model call was not sent: the task's last call cost $${left.lastCallCostUsd.toFixed(4)}, more than the $${Math.max(0, left.costUsd).toFixed(4)} left of its budget (this model does not say a call's maximum).`,
    'Raise the budget (unblock with a budget), or end the task.',
  );
}

/** Upper-bound estimate of the input tokens of a request body (system, tools, messages). */
export function estimateInputTokens(body: unknown): number {
  return Math.ceil((JSON.stringify(body) ?? '').length / CHARS_PER_TOKEN_ESTIMATE);
}

/** Output tokens for `chars` characters of streamed output (text, tool input JSON, thinking), rounded up. */
export function outputTokensOf(chars: number): number {
  return Math.ceil(chars / 4);
}

function pricePerToken(model: string, prices: PriceTable): { input: number; output: number } | undefined {
  const price = prices[model] ?? prices[model.replace(/-\d{8}$/, '')];
  if (!price) return undefined;
  // Input at the dearest rate it can be billed at (a cache write), so the maximum is a bound.
  return { input: Math.max(price.input, price.cacheWrite ?? price.input * 1.25) / 1_000_000, output: price.output / 1_000_000 };
}

/** The call's maximum: its input estimate and its whole max_tokens, in tokens and USD (undefined: unpriced). */
export function callMaximum(plan: CallPlan, prices: PriceTable): { tokens: number; costUsd: number | undefined } {
  const price = pricePerToken(plan.model, prices);
  return {
    tokens: plan.inputTokens + plan.maxTokens,
    costUsd: price === undefined ? undefined : plan.inputTokens * price.input + plan.maxTokens * price.output,
  };
}

/**
 * The max_tokens a call may be sent with so its maximum fits what is left: the plan's own when it
 * fits, else lowered. Thrown (resource, `cost_budget` / `token_budget`) when even a short answer
 * would not fit: the call is not sent.
 */
export function fitMaxTokens(plan: CallPlan, left: SpendLeft, prices: PriceTable): number {
  let allowed = plan.maxTokens;
  let code: 'cost_budget' | 'token_budget' | undefined;
  if (left.tokens !== undefined) {
    const byTokens = Math.floor(left.tokens - plan.inputTokens);
    if (byTokens < allowed) [allowed, code] = [byTokens, 'token_budget'];
  }
  const price = pricePerToken(plan.model, prices);
  if (left.costUsd !== undefined && price !== undefined) {
    // A hair under the exact quotient: floating point must never round the maximum over what is left.
    const byCost = Math.floor((left.costUsd - plan.inputTokens * price.input) / price.output - 1e-6);
    if (byCost < allowed) [allowed, code] = [byCost, 'cost_budget'];
  }
  if (allowed >= plan.maxTokens) return plan.maxTokens;
  const floor = Math.max(MIN_ANSWER_TOKENS, (plan.thinkingBudget ?? 0) + 1);
  if (allowed < floor) {
    const what = code === 'token_budget' ? `${Math.max(0, Math.floor(left.tokens ?? 0))} tokens` : `$${Math.max(0, left.costUsd ?? 0).toFixed(4)}`;
    throw new ToolFailure(
      'resource',
      code ?? 'cost_budget',
      `The model call was not sent: its input (about ${plan.inputTokens} tokens) and a useful answer (${floor} tokens) would cost more than the ${what} left of the task's budget.`,
      'Raise the budget (unblock with a budget), or end the task.',
    );
  }
  return allowed;
}

/** What an aborted call cost: the usage its stream reported, its output at least what arrived; its maximum when no usage had arrived. */
export function abortedCallUsage(plan: CallPlan, streamed: { usage?: Usage; outputChars: number }): { usage: Usage; measured: boolean } {
  if (!streamed.usage) return { usage: { inputTokens: plan.inputTokens, outputTokens: plan.maxTokens }, measured: false };
  const usage: Usage = { ...streamed.usage, outputTokens: Math.max(streamed.usage.outputTokens, outputTokensOf(streamed.outputChars)) };
  return { usage, measured: true };
}
