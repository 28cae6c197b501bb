/**
 * Every workflow input, update and signal is written by whoever can reach the namespace (this CLI,
 * the plain `temporal` CLI, a script): each field is checked for type, range and size before the
 * workflow acts on it, with a message that says which field and what was wrong. Pure and
 * sandbox-safe: validators and the workflow's start call these.
 */
import { proofShapeProblem, rolesShapeProblem } from '../protocol/decision-proof';
import { describeValue } from '../rules/describe-value';
import { MAX_BUDGET, raiseShapeProblem } from '../rules/unblock-budget';

/** Longest text a person may send in one field (a message, a reason, a comment). */
export const MAX_TEXT_CHARS = 32_000;
/** Longest identity string (`by`). */
export const MAX_ID_CHARS = 200;
/** Edited tool arguments, as JSON. */
export const MAX_EDITED_INPUT_CHARS = 256_000;
/** The first prompt of a task. */
export const MAX_PROMPT_CHARS = 1_000_000;

type Problems = string[];

function text(problems: Problems, obj: Record<string, unknown>, name: string, opts: { required: boolean; max: number; nonEmpty?: boolean }): void {
  const value = obj[name];
  if (value === undefined) {
    if (opts.required) problems.push(`\`${name}\` is required`);
    return;
  }
  if (typeof value !== 'string') return void problems.push(`\`${name}\` must be a string, got ${describeValue(value)}`);
  if (opts.nonEmpty && !value.trim()) return void problems.push(`\`${name}\` must not be empty`);
  if (value.length > opts.max) problems.push(`\`${name}\` is ${value.length} characters; at most ${opts.max}`);
}

function unknownFields(problems: Problems, obj: Record<string, unknown>, allowed: string[]): void {
  const extra = Object.keys(obj).filter((k) => !allowed.includes(k));
  if (extra.length) problems.push(`unknown field${extra.length > 1 ? 's' : ''} ${extra.map((k) => `\`${k.slice(0, 40)}\``).join(', ')} (allowed: ${allowed.join(', ')})`);
}

function asObject(value: unknown, what: string, shape: string): Record<string, unknown> | string {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return `${what} needs an object ${shape}, got ${describeValue(value)}`;
  return value as Record<string, unknown>;
}

function jsonSize(value: unknown): number {
  try {
    return JSON.stringify(value)?.length ?? 0;
  } catch {
    return Infinity;
  }
}

const done = (problems: Problems) => (problems.length ? problems.join('; ') : undefined);

/** `roles` and `proof`: who a trusted front end vouches for (verified approvers). Checked for shape only here. */
function identityFields(problems: Problems, obj: Record<string, unknown>, roles = 'roles', proof = 'proof'): void {
  const rolesProblem = rolesShapeProblem(obj[roles]);
  if (rolesProblem) problems.push(rolesProblem.replace('`roles`', `\`${roles}\``));
  if (obj[proof] !== undefined) {
    const proofProblem = proofShapeProblem(obj[proof]);
    if (proofProblem) problems.push(proofProblem.replace(/`proof/g, `\`${proof}`));
  }
}

export function approveProblem(input: unknown): string | undefined {
  const obj = asObject(input, 'approve', '{approvalId, by, editedInput?, comment?}');
  if (typeof obj === 'string') return obj;
  const problems: Problems = [];
  text(problems, obj, 'approvalId', { required: true, max: MAX_ID_CHARS, nonEmpty: true });
  text(problems, obj, 'by', { required: true, max: MAX_ID_CHARS, nonEmpty: true });
  text(problems, obj, 'comment', { required: false, max: MAX_TEXT_CHARS });
  const edited = obj.editedInput;
  if (edited !== undefined) {
    if (edited === null || typeof edited !== 'object' || Array.isArray(edited)) problems.push(`\`editedInput\` must be an object of tool arguments, got ${describeValue(edited)}`);
    else if (jsonSize(edited) > MAX_EDITED_INPUT_CHARS) problems.push(`\`editedInput\` is larger than ${MAX_EDITED_INPUT_CHARS} characters of JSON`);
  }
  identityFields(problems, obj);
  unknownFields(problems, obj, ['approvalId', 'by', 'editedInput', 'comment', 'roles', 'proof']);
  return done(problems);
}

export function denyProblem(input: unknown): string | undefined {
  const obj = asObject(input, 'deny', '{approvalId, by, reason}');
  if (typeof obj === 'string') return obj;
  const problems: Problems = [];
  text(problems, obj, 'approvalId', { required: true, max: MAX_ID_CHARS, nonEmpty: true });
  text(problems, obj, 'by', { required: true, max: MAX_ID_CHARS, nonEmpty: true });
  text(problems, obj, 'reason', { required: true, max: MAX_TEXT_CHARS, nonEmpty: true });
  identityFields(problems, obj);
  unknownFields(problems, obj, ['approvalId', 'by', 'reason', 'roles', 'proof']);
  return done(problems);
}

export function unblockShapeProblem(input: unknown): string | undefined {
  const obj = asObject(input, 'unblock', '{by, blockId?, message?, budget?, model?, maxTokens?}');
  if (typeof obj === 'string') return obj;
  const problems: Problems = [];
  text(problems, obj, 'by', { required: true, max: MAX_ID_CHARS, nonEmpty: true });
  text(problems, obj, 'blockId', { required: false, max: MAX_ID_CHARS, nonEmpty: true });
  text(problems, obj, 'message', { required: false, max: MAX_TEXT_CHARS });
  text(problems, obj, 'model', { required: false, max: MAX_ID_CHARS, nonEmpty: true });
  if (obj.maxTokens !== undefined && !(Number.isInteger(obj.maxTokens) && (obj.maxTokens as number) >= 1 && (obj.maxTokens as number) <= 1_000_000)) {
    problems.push(`\`maxTokens\` must be an integer from 1 to 1000000, got ${describeValue(obj.maxTokens)}`);
  }
  if (obj.budget !== undefined) {
    const budget = asObject(obj.budget, '`budget`', '{turns?, toolCalls?, tokens?, costUsd?}');
    if (typeof budget === 'string') problems.push(budget);
    else {
      for (const [name, value] of Object.entries(budget)) {
        const problem = raiseShapeProblem(name, value);
        if (problem) problems.push(problem);
      }
    }
  }
  identityFields(problems, obj);
  unknownFields(problems, obj, ['by', 'blockId', 'message', 'budget', 'model', 'maxTokens', 'roles', 'proof']);
  return done(problems);
}

/** A signal cannot be rejected: a malformed one is dropped (and logged) instead. */
export function messageProblem(input: unknown): string | undefined {
  const obj = asObject(input, 'message', '{by, text}');
  if (typeof obj === 'string') return obj;
  const problems: Problems = [];
  text(problems, obj, 'by', { required: true, max: MAX_ID_CHARS, nonEmpty: true });
  text(problems, obj, 'text', { required: true, max: MAX_TEXT_CHARS, nonEmpty: true });
  identityFields(problems, obj);
  return done(problems);
}

function integerIn(problems: Problems, obj: Record<string, unknown>, name: string, min: number, max: number, label = name): void {
  const value = obj[name];
  if (value === undefined) return;
  if (!Number.isInteger(value) || (value as number) < min || (value as number) > max) {
    problems.push(`\`${label}\` must be an integer from ${min} to ${max}, got ${describeValue(value)}`);
  }
}

function modelChoiceProblems(problems: Problems, model: unknown): void {
  const obj = asObject(model, '`model`', "{provider: 'anthropic' | 'scripted' | 'custom', ...}");
  if (typeof obj === 'string') return void problems.push(obj);
  switch (obj.provider) {
    case 'scripted':
      text(problems, obj, 'script', { required: true, max: 4_096, nonEmpty: true });
      unknownFields(problems, obj, ['provider', 'script']);
      return;
    case 'custom':
      text(problems, obj, 'name', { required: true, max: MAX_ID_CHARS, nonEmpty: true });
      unknownFields(problems, obj, ['provider', 'name']);
      return;
    case 'anthropic': {
      text(problems, obj, 'model', { required: false, max: MAX_ID_CHARS, nonEmpty: true });
      integerIn(problems, obj, 'maxTokens', 1, 1_000_000, 'model.maxTokens');
      integerIn(problems, obj, 'contextWindowTokens', 1_000, 100_000_000, 'model.contextWindowTokens');
      const thinking = obj.thinking;
      if (thinking !== undefined) {
        const t = asObject(thinking, '`model.thinking`', "{type: 'enabled', budgetTokens} | {type: 'adaptive'}");
        if (typeof t === 'string') problems.push(t);
        else if (t.type === 'enabled') integerIn(problems, { budgetTokens: t.budgetTokens ?? null }, 'budgetTokens', 1_024, 1_000_000, 'model.thinking.budgetTokens');
        else if (t.type !== 'adaptive') problems.push("`model.thinking.type` must be 'enabled' or 'adaptive'");
      }
      unknownFields(problems, obj, ['provider', 'model', 'maxTokens', 'thinking', 'contextWindowTokens']);
      return;
    }
    default:
      problems.push(`\`model.provider\` must be 'anthropic', 'scripted' or 'custom', got ${describeValue(obj.provider)}`);
  }
}

/**
 * The task input as a client sent it. `resume` is only checked for shape here; whether it may be
 * used at all (only a run continued from this workflow carries one) is the workflow's to decide.
 */
export function taskInputProblem(input: unknown): string | undefined {
  const obj = asObject(input, 'the task input', '{agent, prompt, ...}');
  if (typeof obj === 'string') return obj;
  const problems: Problems = [];
  text(problems, obj, 'agent', { required: true, max: 64, nonEmpty: true });
  text(problems, obj, 'prompt', { required: true, max: MAX_PROMPT_CHARS, nonEmpty: true });
  text(problems, obj, 'startedBy', { required: false, max: MAX_ID_CHARS });
  identityFields(problems, obj, 'startedByRoles', 'startProof');
  integerIn(problems, obj, 'maxTurns', 1, 100_000);
  integerIn(problems, obj, 'continueAsNewEveryTurns', 1, 10_000);
  // Below Temporal's 2 MB payload limit with room for the rest of the input.
  integerIn(problems, obj, 'stateCeilingBytes', 16_384, 1_572_864);
  if (obj.model !== undefined) modelChoiceProblems(problems, obj.model);
  if (obj.budgets !== undefined) {
    const budgets = asObject(obj.budgets, '`budgets`', '{turns?, toolCalls?, toolCallsPerTurn?, correctionsPerTool?, tokens?, costUsd?}');
    if (typeof budgets === 'string') problems.push(budgets);
    else {
      integerIn(problems, budgets, 'turns', 1, 100_000, 'budgets.turns');
      integerIn(problems, budgets, 'toolCalls', 1, 1_000_000, 'budgets.toolCalls');
      integerIn(problems, budgets, 'toolCallsPerTurn', 1, 100, 'budgets.toolCallsPerTurn');
      integerIn(problems, budgets, 'correctionsPerTool', 1, 100, 'budgets.correctionsPerTool');
      integerIn(problems, budgets, 'tokens', 1, MAX_BUDGET, 'budgets.tokens');
      integerIn(problems, budgets, 'summaryTokens', 1, MAX_BUDGET, 'budgets.summaryTokens');
      if (budgets.summaryCostUsd !== undefined && !(typeof budgets.summaryCostUsd === 'number' && budgets.summaryCostUsd > 0 && budgets.summaryCostUsd <= 1_000_000)) {
        problems.push(`\`budgets.summaryCostUsd\` must be a positive number up to 1000000, got ${describeValue(budgets.summaryCostUsd)}`);
      }
      if (budgets.costUsd !== undefined && !(typeof budgets.costUsd === 'number' && budgets.costUsd > 0 && budgets.costUsd <= 1_000_000)) {
        problems.push(`\`budgets.costUsd\` must be a positive number up to 1000000, got ${describeValue(budgets.costUsd)}`);
      }
      unknownFields(problems, budgets, ['turns', 'toolCalls', 'toolCallsPerTurn', 'correctionsPerTool', 'tokens', 'costUsd', 'summaryTokens', 'summaryCostUsd']);
    }
  }
  if (obj.resume !== undefined && (obj.resume === null || typeof obj.resume !== 'object')) problems.push('`resume` must be an object');
  unknownFields(problems, obj, ['agent', 'prompt', 'model', 'maxTurns', 'budgets', 'startedBy', 'startedByRoles', 'startProof', 'continueAsNewEveryTurns', 'stateCeilingBytes', 'resume']);
  return done(problems);
}
