/** The `auto` permission mode's shapes: a classifier's verdict and what it is shown (docs/auto-permissions.md). */
import type { Usage } from './messages';
import type { ToolEffect } from './tool-effect';

export type AutoVerdict = 'allow' | 'deny' | 'ask';

/** What decided: the model classifier, the agent's own function, or the engine (fail-closed rules). */
export type AutoDecider = 'model' | 'function' | 'engine';

export interface AutoClassification {
  verdict: AutoVerdict;
  /** One line, for the audit trail, the approval a person sees and the model when it is a deny. */
  reason: string;
  by: AutoDecider;
  /** The model classifier's spend, counted against the task's budgets. */
  usage?: Usage;
  costUsd?: number;
  model?: string;
}

/** What a classifier is shown, and all it is shown: never the conversation, never a tool's result. */
export interface AutoCallView {
  tool: string;
  description: string;
  effect: ToolEffect;
  /** The arguments as they would run (resolved and coerced, as an approver sees them). */
  input: unknown;
  /** The task's prompt, from the person or program that started it. */
  prompt: string;
  /** The agent's own rules (`policy.autoRules`), in its words. */
  rules: readonly string[];
}

/** An agent's own classifier: any exception, a timeout or a malformed answer means ask a person. */
export type AutoClassifierFunction = (call: AutoCallView) => Promise<{ verdict: AutoVerdict; reason: string }> | { verdict: AutoVerdict; reason: string };
