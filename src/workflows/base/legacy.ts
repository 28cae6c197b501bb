/**
 * The behaviour of the first release (rules v1), fenced here so its histories replay exactly as they
 * were recorded. New tasks never take these paths: a task pins its rules version when it starts
 * (patched('pinned-limits-v2')), and the workflow asks the version's rule book, never the number.
 * Retiring v1 (once no such task can run and no committed history needs it) is deleting RULES_V1,
 * this module's functions, and the branches each flag names.
 */
import { ApplicationFailure } from '@temporalio/workflow';
import type { TaskInput, TaskLimits } from '../../protocol/task';
import { messageProblem } from './input-checks';

/** What rules v2 added, by name: each is on for every task since, off for the first release's. */
export interface RuleBook {
  /**
   * The ledger reasons about state: writes move an epoch (a read is not reused across one, a failed
   * call may run again after one, a repeated write asks a person), failures are forgotten after a
   * while, and a write whose outcome is unknown is never repeated on its own (v1 knew timeouts only).
   */
  stateAwareLedger: boolean;
  /**
   * State stays bounded: the ledger keeps only cacheable content and prunes, audit events spill to
   * the archive, the conversation is kept inside the context window, content lives in the task's blob
   * scope, and continue-as-new fits the snapshot to a ceiling (v1: old tool results compacted on the way).
   */
  boundedState: boolean;
  /** A loop is the same answer in consecutive turns (v1: in any turns). */
  consecutiveLoops: boolean;
  /** The ledger's key is of what would run (coerced like validation), so `500` and `"500"` are one call. */
  coercedCallKeys: boolean;
  /** Tool calls carry an idempotency key and the approval they ran under; a cancelled task waits for a running call to stop. */
  keyedToolCalls: boolean;
  /** Reads proven fast run as local activities. */
  fastReads: boolean;
  /** A model call without tools says tool_choice none (v1: an empty tool list). */
  toolChoiceNone: boolean;
  /** A cut answer is continued by a user turn, limits.maxContinuations times (v1: the partial answer stayed last, twice). */
  continuesCutAnswers: boolean;
  /** An inform notice never delays the next step; confirm and block notify people too. */
  noticesInBackground: boolean;
  /** Continue-as-new after continueAsNewEveryTurns of this run, only once it took a turn (v1: also without one). */
  handsOverAfterATurn: boolean;
  /** A message signal's check. */
  messageProblem(message: unknown): string | undefined;
  /** How many times an answer cut at max_tokens is continued before the task reports it. */
  maxContinuations(limits: TaskLimits): number;
}

const RULES_V2: RuleBook = {
  stateAwareLedger: true,
  boundedState: true,
  consecutiveLoops: true,
  coercedCallKeys: true,
  keyedToolCalls: true,
  fastReads: true,
  toolChoiceNone: true,
  continuesCutAnswers: true,
  noticesInBackground: true,
  handsOverAfterATurn: true,
  messageProblem,
  maxContinuations: (limits) => limits.maxContinuations,
};

const RULES_V1: RuleBook = {
  stateAwareLedger: false,
  boundedState: false,
  consecutiveLoops: false,
  coercedCallKeys: false,
  keyedToolCalls: false,
  fastReads: false,
  toolChoiceNone: false,
  continuesCutAnswers: false,
  noticesInBackground: false,
  handsOverAfterATurn: false,
  messageProblem: legacyMessageProblem,
  maxContinuations: () => 2,
};

/** The rule book of a task's pinned rules version. */
export function ruleBook(rulesVersion: number): RuleBook {
  return rulesVersion >= 2 ? RULES_V2 : RULES_V1;
}

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
function legacyMessageProblem(message: { by?: unknown; text?: unknown } | null | undefined): string | undefined {
  return typeof message?.by !== 'string' || typeof message?.text !== 'string' || !message.text.trim() ? 'malformed' : undefined;
}
