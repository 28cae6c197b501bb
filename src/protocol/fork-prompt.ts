/**
 * What a fork's starter asked for, as its `auto` classifier and its grader read it (docs/fork.md,
 * docs/auto-permissions.md, docs/outcomes.md). A fork's own prompt only names it for people
 * (`fork of TASK@N`, or its message): the task it goes on with is its origin's, so both are shown,
 * each labelled, and never as if the fork's starter had written the origin's words. Sandbox-safe.
 */

/** A fork's request: the prompt its conversation opened with and the message it was started with. */
export interface ForkPrompt {
  /** The task whose prompt opened the conversation the fork carries on (the first of its lineage, or the sub-agent's task it forked). */
  originTaskId: string;
  /** That task's prompt (the conversation's first message; may be a blob marker until resolved). Absent when the conversation no longer opens with it. */
  originPrompt?: string;
  /** Set when the origin's prompt was written by a parent task's model (the fork's lineage passes a delegation): it grounds nothing. */
  originDelegated?: true;
  /** The message the fork was started with; absent when it was started without one. */
  message?: string;
}

export const ORIGINAL_REQUEST_LABEL = "The task's original request";
export const FORK_MESSAGE_LABEL = 'The message that started this fork';
const NO_ORIGIN_PROMPT = '(not available: the conversation no longer opens with it)';
const NO_FORK_MESSAGE = '(none: the fork was started without a message; it goes on with the original request)';

/**
 * The task's request as a classifier or a grader reads it: a task's prompt as it is; a fork's origin
 * prompt and its message, each under its label.
 */
export function labelledPrompt(prompt: string, fork?: ForkPrompt): string {
  if (!fork) return prompt;
  const origin = fork.originDelegated ? `${ORIGINAL_REQUEST_LABEL}, written by its parent task's model (from ${fork.originTaskId})` : `${ORIGINAL_REQUEST_LABEL} (from ${fork.originTaskId})`;
  return `${origin}:\n${fork.originPrompt ?? NO_ORIGIN_PROMPT}\n\n${FORK_MESSAGE_LABEL}:\n${fork.message ?? NO_FORK_MESSAGE}`;
}

/**
 * The starter's own words a destructive call's values must appear in (groundingGap), each on its
 * own (the labels ground nothing): a task's prompt; a fork's origin prompt (unless a model wrote it)
 * and its message.
 */
export function groundingPrompts(prompt: string, fork?: ForkPrompt): string[] {
  if (!fork) return [prompt];
  return [...(fork.originDelegated || fork.originPrompt === undefined ? [] : [fork.originPrompt]), ...(fork.message !== undefined ? [fork.message] : [])];
}
