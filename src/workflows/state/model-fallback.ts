/**
 * The task's move to its next model (docs/model-fallback.md). Decided in workflow code from a
 * model call's failure as Temporal recorded it, so a replay, or a worker killed during the next
 * model's call, finds the same decision and never makes it twice. Sticky: once on a fallback, the
 * task stays on it (an overloaded model is not asked again every turn).
 */
import type { ToolError } from '../../protocol/tool-error';
import { FALLBACK_AFTER_ATTEMPTS, FALLBACK_REASON_TEXT, fallbackReasonOf, skipReasonFor, withoutForeignThinking, type FallbackStatus } from '../../protocol/model-fallback';
import { oneLine } from '../base/one-line';
import type { TaskState } from './task-state';

/** The task's fallback models: its input's, else its Claude model choice's. None for other providers. */
export function fallbacksOf(state: TaskState): readonly string[] {
  const choice = state.manifest?.model;
  if (choice?.provider !== 'anthropic') return [];
  return state.input.fallbackModels ?? choice.fallbacks ?? [];
}

/** The model calls go to now: a person's `unblock --model` first, else the fallback the task moved to. */
export function modelIdNow(state: TaskState): string | undefined {
  return state.modelOverride.model ?? fallbackNow(state);
}

/**
 * The fallback the task moved to, while it is still one of the task's fallbacks: a fork started
 * with another model (and none of these fallbacks), or an agent whose fallbacks changed, goes back
 * to its own model instead of one its configuration no longer names.
 */
function fallbackNow(state: TaskState): string | undefined {
  const model = state.fallback?.model;
  return model !== undefined && fallbacksOf(state).includes(model) ? model : undefined;
}

/** The activity's early give-up, only while a next model remains (absent: exactly the call of a task without fallbacks). */
export function fallbackAfterAttempts(state: TaskState): { fallbackAfterAttempts?: number } {
  return nextCandidates(state).length > 0 ? { fallbackAfterAttempts: FALLBACK_AFTER_ATTEMPTS } : {};
}

function ownModel(state: TaskState): string {
  const choice = state.manifest?.model;
  return (choice?.provider === 'anthropic' ? choice.model : undefined) ?? state.model;
}

/** The fallbacks after the one answering now; none once a person chose the model (unblock --model). */
function nextCandidates(state: TaskState): readonly string[] {
  if (state.modelOverride.model) return [];
  const chain = fallbacksOf(state);
  const current = fallbackNow(state);
  return current === undefined ? chain : chain.slice(chain.indexOf(current) + 1);
}

/**
 * Moves the task to its next model when `error` is a reason to (overloaded, rate-limited past its
 * retries, no longer served), passing over models that cannot take the conversation (recorded), and
 * makes the conversation valid for the new one. Returns the model now answering, or undefined: not
 * a reason, or no model left (the failure then goes where it always went).
 */
export function fallBack(state: TaskState, error: ToolError): string | undefined {
  const reason = fallbackReasonOf(error);
  const candidates = reason ? nextCandidates(state) : [];
  if (!reason || candidates.length === 0) return undefined;
  const progress = (state.fallback ??= { switches: [], skipped: [] });
  const from = fallbackNow(state) ?? ownModel(state);
  for (const model of candidates) {
    const skip = skipReasonFor(model, state.messages);
    if (skip) {
      progress.skipped.push({ at: state.now(), turn: state.turn, model, reason: skip });
      state.audit.record('model_fallback', `passed over ${model}: ${skip}`);
      continue;
    }
    const removed = withoutForeignThinking(state.messages);
    progress.model = model;
    progress.switches.push({ at: state.now(), turn: state.turn, from, to: model, reason, code: error.code, detail: oneLine(error.detail) });
    const note = removed ? `; ${removed} thinking block${removed > 1 ? 's' : ''} signed by another model left out` : '';
    state.audit.record('model_fallback', `${from} ${FALLBACK_REASON_TEXT[reason]}: calls go to ${model} from now on${note} (${error.code}: ${oneLine(error.detail)})`);
    return model;
  }
  state.audit.record('model_fallback', `${from} ${FALLBACK_REASON_TEXT[reason]} and no fallback model can take the conversation`);
  return undefined;
}

/** What status shows: only for a task that has fallbacks. */
export function fallbackStatusOf(state: TaskState): FallbackStatus | undefined {
  const fallbacks = fallbacksOf(state);
  if (fallbacks.length === 0) return undefined;
  const progress = state.fallback;
  return {
    fallbacks: [...fallbacks],
    current: modelIdNow(state) ?? ownModel(state),
    ...(fallbackNow(state) ? { model: fallbackNow(state) } : {}),
    switches: (progress?.switches ?? []).map((s) => ({ ...s })),
    skipped: (progress?.skipped ?? []).map((s) => ({ ...s })),
  };
}
