/**
 * What a task's children hold and spent, counted against the task's own budgets: a slice is held
 * while its child runs and replaced by what the child actually spent when it closes, so what the
 * child did not spend comes back. Plain and deterministic (unit-tested without Temporal).
 */
import { emptySpend, type BudgetSlice, type ChildTaskSummary, type DelegatedSpend } from '../../protocol/delegation';
import { tokensOf } from './spend';

/** Children listed in status (the most recent); their spend is counted whatever the list keeps. */
export const CHILDREN_LISTED = 100;

export class ChildSpend {
  /** What closed children spent (with their own children's). */
  spent: DelegatedSpend = emptySpend();
  /** What running children hold. */
  readonly held = { turns: 0, toolCalls: 0, tokens: 0, costUsd: 0 };
  readonly children: ChildTaskSummary[] = [];

  get turns(): number {
    return this.spent.turns + this.held.turns;
  }
  get toolCalls(): number {
    return this.spent.toolCalls + this.held.toolCalls;
  }
  /** Every token class closed children were billed (cache writes and reads included), and what running ones hold. */
  get tokens(): number {
    return tokensOf(this.spent.usage) + this.held.tokens;
  }
  get costUsd(): number {
    return this.spent.costUsd + this.held.costUsd;
  }
  get any(): boolean {
    return this.turns > 0 || this.toolCalls > 0 || this.tokens > 0 || this.costUsd > 0 || this.children.length > 0;
  }

  /** Holds `slice` for a child about to start. */
  hold(child: ChildTaskSummary): void {
    const { slice } = child;
    this.held.turns += slice.turns;
    this.held.toolCalls += slice.toolCalls;
    this.held.tokens += slice.tokens ?? 0;
    this.held.costUsd += slice.costUsd ?? 0;
    this.children.push(child);
    if (this.children.length > CHILDREN_LISTED) this.children.splice(0, this.children.length - CHILDREN_LISTED);
  }

  /** The child closed: its slice is released and what it spent is counted instead. */
  settle(child: ChildTaskSummary, state: 'completed' | 'failed' | 'cancelled', spent: DelegatedSpend): void {
    const { slice } = child;
    this.held.turns -= slice.turns;
    this.held.toolCalls -= slice.toolCalls;
    this.held.tokens -= slice.tokens ?? 0;
    this.held.costUsd -= slice.costUsd ?? 0;
    this.spent = addSpend(this.spent, spent);
    child.state = state;
    child.spent = spent;
  }

  /** What carries into the next run (children never outlive a run: a turn waits for its children). */
  toJSON(): DelegatedSpend | undefined {
    const { spent } = this;
    return spent.turns || spent.toolCalls || spent.costUsd || tokensOf(spent.usage) ? spent : undefined;
  }
}

export function addSpend(a: DelegatedSpend, b: DelegatedSpend): DelegatedSpend {
  return {
    turns: a.turns + b.turns,
    toolCalls: a.toolCalls + b.toolCalls,
    usage: {
      inputTokens: a.usage.inputTokens + b.usage.inputTokens,
      outputTokens: a.usage.outputTokens + b.usage.outputTokens,
      cacheWriteTokens: a.usage.cacheWriteTokens + b.usage.cacheWriteTokens,
      cacheReadTokens: a.usage.cacheReadTokens + b.usage.cacheReadTokens,
    },
    costUsd: a.costUsd + b.costUsd,
  };
}

/** A slice read as spent in full: the charge for a child whose own spend is not known (it failed without saying). */
export function sliceAsSpend(slice: BudgetSlice): DelegatedSpend {
  const spend = emptySpend();
  spend.turns = slice.turns;
  spend.toolCalls = slice.toolCalls;
  spend.usage.inputTokens = slice.tokens ?? 0;
  spend.costUsd = slice.costUsd ?? 0;
  return spend;
}
