/**
 * The behaviour of the first release, kept so its histories replay exactly as they were recorded.
 * New tasks never take these paths (patched('pinned-limits-v2') and rules v2 decide).
 */
import { ApplicationFailure } from '@temporalio/workflow';
import type { TaskInput } from '../protocol/task';

/** How many times an answer cut at max_tokens is continued before the task reports it (rules v1). */
export const LEGACY_MAX_CONTINUATIONS = 2;

/** The input checks of the first release: they fail (or not) exactly as recorded. */
export function legacyInputChecks(input: TaskInput): void {
  const problems: string[] = [];
  if (!input || typeof input !== 'object') problems.push('input must be an object');
  else {
    if (typeof input.agent !== 'string' || !input.agent) problems.push('`agent` must be a non-empty string');
    if (typeof input.prompt !== 'string' || !input.prompt.trim()) problems.push('`prompt` must be a non-empty string');
    if (input.maxTurns !== undefined && !(Number.isInteger(input.maxTurns) && input.maxTurns >= 1)) {
      problems.push('`maxTurns` must be an integer >= 1');
    }
    for (const [name, value] of Object.entries(input.budgets ?? {})) {
      const ok = name === 'costUsd' ? typeof value === 'number' && value > 0 : Number.isInteger(value) && (value as number) >= 1;
      if (!ok) problems.push(`\`budgets.${name}\` must be ${name === 'costUsd' ? 'a positive number' : 'an integer >= 1'}`);
    }
  }
  if (problems.length) {
    throw ApplicationFailure.create({ message: `Invalid task input: ${problems.join('; ')}`, type: 'invalid_input', nonRetryable: true });
  }
}

/** A message signal as the first release judged it (rules v2 checks it fully: messageProblem). */
export function legacyMessageProblem(message: { by?: unknown; text?: unknown } | null | undefined): string | undefined {
  return typeof message?.by !== 'string' || typeof message?.text !== 'string' || !message.text.trim() ? 'malformed' : undefined;
}
