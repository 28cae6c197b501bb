/**
 * Server-side compaction as the Messages API documents it (beta `compact-2026-01-12`, the
 * `compact_20260112` entry of `context_management.edits`): the names, the trigger's bounds and the
 * models that have it. Shared by the model activity, the workflow and the strict fake.
 */

export const COMPACTION_BETA = 'compact-2026-01-12';
export const COMPACTION_EDIT_TYPE = 'compact_20260112';
/** The API's default trigger, in input tokens. */
export const COMPACTION_DEFAULT_TRIGGER_TOKENS = 150_000;
/** The lowest trigger the API accepts. */
export const COMPACTION_MIN_TRIGGER_TOKENS = 50_000;

/**
 * Models with server-side compaction. The documentation lists Claude Mythos Preview, Opus 4.6,
 * Opus 4.7 and Sonnet 4.6, and shows it on Opus 5.5; the generations after 4.6 (Opus 4.8, the 5.x
 * Opus, Sonnet, Fable and Mythos models) carry the capability too. Haiku models and the 4.5 (and
 * older) generation do not: tasks on them get the durable summary instead.
 */
const NATIVE_COMPACTION = /^claude-(?:mythos-preview|opus-4-(?:6|7|8)|sonnet-4-6|(?:opus|sonnet|fable|mythos)-5(?:-\d+)?)(?:-\d{8})?$/;

export function supportsNativeCompaction(model: string): boolean {
  return NATIVE_COMPACTION.test(model);
}
