/**
 * The hint-following model (issue 49, item 8): the same tasks and trajectories as the scripted
 * trajectory model (trajectory-model.ts), but it reads a structured tool error (the body
 * `{"error": {error_class, code, detail, hint, retryable}}` that durable-agent sends, the seeds'
 * ToolError) the way a model that follows instructions does, instead of calling the same tool with
 * the same arguments again:
 *
 * - a refusal that says the effect is in place (`duplicate_write`, "It is done") is read as done, as
 *   is the store's own "already cancelled" / "already refunded" (as the trajectory model does);
 * - a call refused as repeated (`repeated_failed_call`, `loop_detected`, `retry_budget_exceeded`) is
 *   not made again: a write is left undone and the model moves on to its next step; a read whose
 *   answer later steps need ends the task with an answer that says what could not be read;
 * - an answer that was cut, with a smaller query in the hint ("A smaller query that fits: {...}",
 *   or "... asks for less: {...} (filter on `f`, one of "a", "b", one value at a time ...)"), is
 *   asked again narrowed: the query the hint gives, or one call per filter value, merged;
 * - a write whose outcome is unknown, with a hint to check with a read first, is looked up
 *   (get_order): in place, it is done; not in place, it is sent again with the same arguments only
 *   when the hint says that is safe (the same idempotency key); otherwise the model tells the user;
 * - an error the hint calls final ("don't retry with the same arguments", `retryable: false`) with
 *   nothing narrower to ask ends the task with an answer that says so (a read), or moves on (a write);
 * - an error marked `retryable: true` is tried again with the same arguments, as the trajectory model does.
 *
 * A tool result that is not a structured error (the peers hand the model the store's raw answer: a
 * truncated body, a drifted schema, "Error: HTTP 409 ...") carries no hint, so it is read exactly as
 * the trajectory model reads it: the same call again, up to MAX_ATTEMPTS_PER_STEP.
 */
import type { FakeReply } from '../../src/testing/fake-messages-api';
import { type Answers, defaultCheck, MAX_ATTEMPTS_PER_STEP, type Step, type Trajectory } from './tasks';
import { type IssuedCall, resultText, text, type ToolResult, TrajectoryModel, usableAnswer } from './trajectory-model';

/** The fields of a structured tool error this model reads. */
export interface HintedError {
  error_class: string;
  code: string;
  detail?: string;
  hint?: string;
  retryable?: boolean;
}

export interface HintModelStats {
  /** Refusals read as done (duplicate_write, "already cancelled"). */
  readAsDone: number;
  /** Calls not repeated because the engine refused them as repeated. */
  stoppedRepeating: number;
  /** Narrower queries asked because a hint gave one. */
  narrowed: number;
  /** Looks (get_order) before repeating a write of unknown outcome. */
  checked: number;
  /** Writes left undone, the model moving on. */
  movedOn: number;
  /** Tasks ended with an answer that says what could not be done, because a hint said not to retry. */
  stoppedOnHint: number;
}

/** Codes that refuse a call because it was made before: never made again as it was. */
const REPEAT_REFUSALS = new Set(['repeated_failed_call', 'loop_detected', 'retry_budget_exceeded']);
/** Codes that say a write may or may not have happened. */
const UNKNOWN_OUTCOME = new Set(['outcome_unknown', 'unreconciled', 'timeout', 'connection_reset', 'response_timeout', 'connection_timeout', 'conflict_retry_later']);
const WRITES = new Set(['refund_order', 'cancel_order', 'change_address']);

/** The structured error of a tool result, if it is one (durable-agent's `{"error": ToolError}`). */
export function hintedError(block: ToolResult): HintedError | undefined {
  let value: unknown;
  try {
    value = JSON.parse(resultText(block));
  } catch {
    return undefined;
  }
  const error = value && typeof value === 'object' ? (value as { error?: unknown }).error : undefined;
  if (!error || typeof error !== 'object') return undefined;
  const e = error as Record<string, unknown>;
  if (typeof e.error_class !== 'string' || typeof e.code !== 'string') return undefined;
  return {
    error_class: e.error_class,
    code: e.code,
    ...(typeof e.detail === 'string' ? { detail: e.detail } : {}),
    ...(typeof e.hint === 'string' ? { hint: e.hint } : {}),
    ...(typeof e.retryable === 'boolean' ? { retryable: e.retryable } : {}),
  };
}

/** A narrower query a hint gives: one query, or one per value of a filter. */
export function narrowerQueries(hint: string | undefined): Record<string, unknown>[] | undefined {
  if (!hint) return undefined;
  const fits = /A smaller query that fits: (\{.*?\}) \(/.exec(hint);
  if (fits)
    return parseObject(fits[1]!)
      .map((q) => [q])
      .at(0);
  const less = /A smaller query that asks for less: (\{.*?\}) \(filter on `([^`]+)`, one of (.*?), one value at a time/.exec(hint);
  if (!less) return undefined;
  const base = parseObject(less[1]!)[0];
  if (!base) return undefined;
  const values = [...less[3]!.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => JSON.parse(`"${m[1]}"`) as string);
  return values.length ? values.map((v) => ({ ...base, [less[2]!]: v })) : [base];
}

function parseObject(s: string): Record<string, unknown>[] {
  try {
    const v = JSON.parse(s);
    return v && typeof v === 'object' && !Array.isArray(v) ? [v as Record<string, unknown>] : [];
  } catch {
    return [];
  }
}

/** Answers of several narrower calls as one: their lists joined, the rest from the first. */
export function mergeAnswers(parts: unknown[]): unknown {
  const objects = parts.filter((p): p is Record<string, unknown> => !!p && typeof p === 'object' && !Array.isArray(p));
  if (objects.length !== parts.length || !objects.length) return parts[0];
  const merged: Record<string, unknown> = { ...objects[0] };
  for (const [k, v] of Object.entries(objects[0]!)) {
    if (Array.isArray(v)) merged[k] = objects.flatMap((o) => (Array.isArray(o[k]) ? (o[k] as unknown[]) : []));
  }
  if ('has_more' in merged) merged.has_more = objects.some((o) => o.has_more === true);
  return merged;
}

/** What a write that is in place answers, as far as the next steps need it. */
function doneValue(step: Step, input: Record<string, unknown>): Record<string, unknown> {
  return { order_id: input.order_id, done: true, tool: step.tool };
}

/** Whether the order, as read, shows the write `tool(input)` in place; `before` is the order's refunded total before the write, when known. */
export function writeInPlace(tool: string, input: { address?: { line1?: unknown; zip?: unknown }; amount_cents?: unknown }, read: unknown, before = 0): boolean {
  if (!read || typeof read !== 'object') return false;
  const order = read as { status?: unknown; address?: { line1?: unknown; zip?: unknown } | null; refunded_cents?: unknown };
  switch (tool) {
    case 'cancel_order':
      return order.status === 'cancelled';
    case 'change_address':
      return !!order.address && order.address.line1 === input.address?.line1 && order.address.zip === input.address?.zip;
    case 'refund_order':
      return typeof order.refunded_cents === 'number' && order.refunded_cents >= before + Number(input.amount_cents);
    default:
      return false;
  }
}

interface NarrowState {
  queries: Record<string, unknown>[];
  index: number;
  parts: unknown[];
}

interface CheckState {
  safeToRepeat: boolean;
  before: number;
}

export class HintFollowingModel extends TrajectoryModel {
  readonly hints: HintModelStats = { readAsDone: 0, stoppedRepeating: 0, narrowed: 0, checked: 0, movedOn: 0, stoppedOnHint: 0 };
  /** Per order, the refunded total last read (for the look before a refund of unknown outcome). */
  private readonly refundedSeen = new Map<string, number>();

  protected override afterResult(call: IssuedCall, block: ToolResult): FakeReply {
    const trajectory = this.lookup(call.key)!;
    if (call.aside) return this.afterAside(trajectory, call, block);
    const step = trajectory.steps[call.step]!;
    const answer = usableAnswer(step, call.input, block);
    if (answer.usable) {
      this.noteRefunded(answer.value);
      return this.next(trajectory, call, answer.value);
    }
    const error = hintedError(block);
    if (!error) return super.afterResult(call, block);
    return this.followHint(trajectory, call, step, error);
  }

  private followHint(trajectory: Trajectory, call: IssuedCall, step: Step, error: HintedError): FakeReply {
    const isWrite = WRITES.has(step.tool);
    const hint = error.hint ?? '';
    if (error.code === 'duplicate_write' || /\bIt is done\b/.test(hint)) {
      this.hints.readAsDone += 1;
      return this.next(trajectory, call, doneValue(step, call.input));
    }
    if (isWrite && (UNKNOWN_OUTCOME.has(error.code) || /check with a read/i.test(hint)) && typeof call.input.order_id === 'string') {
      this.hints.checked += 1;
      const state: CheckState = { safeToRepeat: /same idempotency key|cannot happen twice/i.test(hint), before: this.refundedSeen.get(call.input.order_id) ?? 0 };
      return this.issue(
        { ...call, aside: { tool: 'get_order', input: { order_id: call.input.order_id }, purpose: 'check', state } },
        `${step.tool} may or may not have happened; checking ${call.input.order_id} first, as the error says.`,
      );
    }
    const narrower = narrowerQueries(error.hint);
    if (narrower?.length) {
      this.hints.narrowed += 1;
      const state: NarrowState = { queries: narrower, index: 0, parts: [] };
      return this.issue({ ...call, aside: { tool: step.tool, input: narrower[0]!, purpose: 'narrow', state } }, `The answer was cut; asking for less, as the error suggests.`);
    }
    if (REPEAT_REFUSALS.has(error.code)) {
      this.hints.stoppedRepeating += 1;
      return this.giveUpOrMoveOn(trajectory, call, step, `the engine refused ${step.tool} as ${error.code}`);
    }
    if (error.retryable === true) return this.again(trajectory, call, step);
    // Final by the hint (schema_mismatch "don't retry with the same arguments", permanent, policy, model).
    return this.giveUpOrMoveOn(trajectory, call, step, `${step.tool} failed (${error.error_class}/${error.code}) and the error says not to repeat it`);
  }

  /** A write left undone: the model goes on to its next step. A read whose answer is missing: it answers with what failed. */
  private giveUpOrMoveOn(trajectory: Trajectory, call: IssuedCall, step: Step, why: string): FakeReply {
    if (WRITES.has(step.tool)) {
      this.hints.movedOn += 1;
      return this.next(trajectory, call, { order_id: call.input.order_id, skipped: why });
    }
    this.hints.stoppedOnHint += 1;
    this.stats.givenUp += 1;
    return text(`I could not finish: ${why}.`);
  }

  private afterAside(trajectory: Trajectory, call: IssuedCall, block: ToolResult): FakeReply {
    const aside = call.aside!;
    const step = trajectory.steps[call.step]!;
    if (aside.purpose === 'check') {
      const state = aside.state as CheckState;
      const look: Step = { tool: 'get_order', input: aside.input };
      const read = usableAnswer(look, aside.input, block);
      if (read.usable && writeInPlace(step.tool, call.input, read.value, state.before)) {
        this.noteRefunded(read.value);
        this.hints.readAsDone += 1;
        return this.next(trajectory, call, doneValue(step, call.input));
      }
      if (read.usable && state.safeToRepeat && call.attempt < MAX_ATTEMPTS_PER_STEP) {
        this.noteRefunded(read.value);
        return this.issue(
          { key: call.key, step: call.step, attempt: call.attempt + 1, answers: call.answers, input: call.input },
          `${call.input.order_id} does not show it yet; sending ${step.tool} again with the same arguments (the same idempotency key).`,
        );
      }
      return this.giveUpOrMoveOn(trajectory, call, step, read.usable ? `${step.tool} may not be safe to send again` : `the look at ${call.input.order_id} failed too`);
    }
    // A narrower query, or the next of several.
    const state = aside.state as NarrowState;
    const piece = usableAnswer({ tool: step.tool, input: aside.input, check: (a) => defaultCheck(step.tool, aside.input, a) }, aside.input, block);
    if (!piece.usable) return this.giveUpOrMoveOn(trajectory, call, step, `the narrower ${step.tool} failed too`);
    const parts = [...state.parts, piece.value];
    if (state.index + 1 < state.queries.length) {
      const next: NarrowState = { ...state, index: state.index + 1, parts };
      return this.issue({ ...call, aside: { ...aside, input: state.queries[next.index]!, state: next } }, `Next part: ${JSON.stringify(state.queries[next.index])}.`);
    }
    const merged = mergeAnswers(parts);
    this.noteRefunded(merged);
    return this.next(trajectory, call, merged);
  }

  /** The same call again (a transient error the engine says may clear), up to MAX_ATTEMPTS_PER_STEP, as the trajectory model does. */
  private again(trajectory: Trajectory, call: IssuedCall, step: Step): FakeReply {
    if (call.attempt >= MAX_ATTEMPTS_PER_STEP) {
      this.stats.givenUp += 1;
      return text(`I could not complete ${step.tool} after ${call.attempt} attempts; stopping here.`);
    }
    this.stats.repeats += 1;
    return this.stepReply(trajectory, call.step, call.attempt + 1, call.answers, call.input);
  }

  private next(trajectory: Trajectory, call: IssuedCall, value: unknown): FakeReply {
    const answers: Answers = [...call.answers, value];
    return this.stepReply(trajectory, call.step + 1, 1, answers);
  }

  private noteRefunded(value: unknown): void {
    const v = value as { id?: unknown; order_id?: unknown; refunded_cents?: unknown; refunded_total_cents?: unknown } | null;
    if (!v || typeof v !== 'object') return;
    const id = typeof v.id === 'string' ? v.id : typeof v.order_id === 'string' ? v.order_id : undefined;
    const total = typeof v.refunded_cents === 'number' ? v.refunded_cents : typeof v.refunded_total_cents === 'number' ? v.refunded_total_cents : undefined;
    if (id && total !== undefined) this.refundedSeen.set(id, total);
  }
}
