/**
 * Model fallback (docs/model-fallback.md): which failures move a task to its next model, which
 * fallback ids are acceptable, and what a conversation must lose before another model may read it.
 * Pure rules: the workflow decides with them (from a failure recorded in its history, so a replay
 * or a killed worker decides the same), the activity gives up early with them, front ends check ids.
 */
import { supportsNativeCompaction } from './compaction';
import type { AssistantBlock, Message } from './messages';
import type { ToolError } from './tool-error';

/** At most this many fallbacks after the task's own model: each one is a full retry budget of waiting. */
export const MAX_FALLBACK_MODELS = 4;
/**
 * Attempts of an overloaded or rate-limited call before the task moves to its next model (each
 * attempt honours the API's retry-after). Without a next model the call keeps the model call's
 * whole retry budget, as it always did.
 */
export const FALLBACK_AFTER_ATTEMPTS = 3;
const MAX_MODEL_ID_CHARS = 200;
/** What a Messages API model id looks like (`claude-sonnet-5-5`, `claude-opus-4-5-20251101`). */
const MODEL_ID = /^[A-Za-z0-9][A-Za-z0-9._:@-]*$/;

/** Why a task may move to its next model: the only three. */
export type FallbackReason = 'overloaded' | 'rate_limited' | 'not_served';

/**
 * The reason a failed call may fall back, or undefined: an overloaded API (529, `overloaded_error`),
 * a rate limit that outlasted its retries (429 that is not a spend limit), a model the API no longer
 * serves (404 `not_found_error`). Never a request the API refused (400), a refusal or max_tokens (those
 * are answers, not failures), a spend limit, a key problem or a timeout: another model would not help.
 */
export function fallbackReasonOf(error: Pick<ToolError, 'code'>): FallbackReason | undefined {
  switch (error.code) {
    case 'overloaded':
    case 'stream_overloaded_error':
      return 'overloaded';
    case 'rate_limited':
    case 'stream_rate_limit_error':
      return 'rate_limited';
    case 'model_not_found':
    case 'stream_not_found_error':
      return 'not_served';
    default:
      return undefined;
  }
}

/** What each reason means to a person reading status or the audit trail. */
export const FALLBACK_REASON_TEXT: Record<FallbackReason, string> = {
  overloaded: 'overloaded (529)',
  rate_limited: 'rate-limited past its retries (429)',
  not_served: 'no longer served (404)',
};

/** Why `id` is not a model id, or undefined. `label` names where it came from (`--fallback-model`). */
export function modelIdProblem(id: unknown, label: string): string | undefined {
  if (typeof id !== 'string') return `${label} must be a model id (a string), got ${typeof id}`;
  if (id.length === 0 || id.length > MAX_MODEL_ID_CHARS) return `${label} must be 1-${MAX_MODEL_ID_CHARS} characters, got ${id.length}`;
  if (!MODEL_ID.test(id)) return `${label} ${JSON.stringify(id.slice(0, 60))} is not a model id (letters, digits, ".", "_", ":", "@" and "-", e.g. claude-haiku-5-5)`;
  return undefined;
}

/** Why `ids` is not a list of fallbacks for `primary` (undefined: the default model), or undefined. */
export function fallbacksProblem(ids: unknown, label: string, primary?: string): string | undefined {
  if (!Array.isArray(ids)) return `${label} must be a list of model ids`;
  if (ids.length === 0) return `${label} must name at least one model (leave it out for none)`;
  if (ids.length > MAX_FALLBACK_MODELS) return `${label} names ${ids.length} models; at most ${MAX_FALLBACK_MODELS}`;
  for (const id of ids) {
    const problem = modelIdProblem(id, label);
    if (problem) return problem;
  }
  const repeated = ids.find((id, i) => ids.indexOf(id) !== i);
  if (repeated !== undefined) return `${label} names ${JSON.stringify(repeated)} twice`;
  if (primary !== undefined && ids.includes(primary)) return `${label} names the task's own model ${JSON.stringify(primary)}; a fallback must be another model`;
  return undefined;
}

/**
 * Why `model` cannot take over this conversation, or undefined when it can (once it is made valid
 * for it: validConversationFor). A block of the API's native compaction stands for the turns it
 * replaced and only a model with native compaction reads it; nothing else can be rebuilt from it.
 */
export function skipReasonFor(model: string, messages: readonly Message[]): string | undefined {
  const compacted = messages.some((m) => m.role === 'assistant' && m.content.some((b) => b.type === 'compaction' && b.content !== null));
  if (compacted && !supportsNativeCompaction(model)) return "the conversation holds the API's compaction summary, which only a model with native compaction reads";
  return undefined;
}

/**
 * The conversation made valid for another model: thinking is signed by the model that thought it,
 * and another model refuses the signature, so every thinking block (and redacted thinking) leaves
 * the turns already taken. A turn left empty keeps a note, since the API refuses an empty message.
 * Messages that change are new objects (the run's sent-conversation tracking compares references);
 * the rest are the same objects. Returns how many blocks left.
 */
export function withoutForeignThinking(messages: Message[]): number {
  let removed = 0;
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    if (message.role !== 'assistant' || !message.content.some(isThinking)) continue;
    const kept = message.content.filter((b) => !isThinking(b));
    removed += message.content.length - kept.length;
    messages[i] = { role: 'assistant', content: kept.length ? kept : [{ type: 'text', text: '(thinking by another model, left out)' }] };
  }
  return removed;
}

function isThinking(block: AssistantBlock): boolean {
  return block.type === 'thinking' || block.type === 'redacted_thinking';
}

/**
 * Whether a call with thinking on would be refused for this conversation: mid tool loop, the API
 * wants the assistant turn that asked for the tools to open with its thinking. After a fallback that
 * turn lost another model's thinking, so the next call goes without thinking (the API accepts that),
 * and the model thinks again from its own next turn on.
 */
export function toolTurnLacksThinking(messages: readonly Message[]): boolean {
  const last = messages.at(-1);
  const assistant = messages.at(-2);
  if (!last || last.role !== 'user' || typeof last.content === 'string' || last.content[0]?.type !== 'tool_result') return false;
  if (!assistant || assistant.role !== 'assistant') return false;
  // A compaction block opens the turn it ends; the rule reads the blocks after it.
  const first = assistant.content.find((b) => b.type !== 'compaction');
  return first !== undefined && !isThinking(first);
}

/** A move to the next model, recorded once, when the task decided it (status, audit trail, exports). */
export interface FallbackSwitch {
  at: string;
  turn: number;
  from: string;
  to: string;
  reason: FallbackReason;
  /** The failure's code and the API's own words (e.g. `overloaded`, "Overloaded"). */
  code: string;
  detail: string;
}

/** A fallback passed over because it cannot take the conversation (skipReasonFor). */
export interface FallbackSkip {
  at: string;
  turn: number;
  model: string;
  reason: string;
}

/** A task's fallback progress: carried across continue-as-new and into forks (a decision, not configuration). */
export interface FallbackProgress {
  /** The fallback answering now; absent while the task's own model does. */
  model?: string;
  switches: FallbackSwitch[];
  skipped: FallbackSkip[];
}

/** What status shows of it. */
export interface FallbackStatus extends FallbackProgress {
  /** The task's fallbacks, in order. */
  fallbacks: string[];
  /** The model calls go to now. */
  current: string;
}
