/**
 * What a model declares it can do, once, on the model object (`capabilities`: ModelCapabilities,
 * part of the Model contract in model.ts), instead of being asked on every request. Whatever it
 * does not declare, the engine handles itself: a model without native compaction never sees a
 * `compaction` field and gets the durable summary (docs/context.md), one without thinking never
 * sees `thinking`, one that does not stream is not handed `onProgress`.
 * Checked when the model is handed to a worker: a bad value is a TypeError naming the field.
 */
import type { Model, ModelCapabilities } from './model';

/** Every capability with its value: what the engine goes by. */
export type DeclaredCapabilities = Required<Omit<ModelCapabilities, 'contextWindowTokens'>> & Pick<ModelCapabilities, 'contextWindowTokens'>;

const FLAGS = ['nativeCompaction', 'promptCaching', 'thinking', 'streaming'] as const;
const FIELDS: readonly string[] = [...FLAGS, 'contextWindowTokens'];
export const MIN_CONTEXT_WINDOW_TOKENS = 1_000;
export const MAX_CONTEXT_WINDOW_TOKENS = 100_000_000;

const checked = new WeakMap<object, DeclaredCapabilities>();

/**
 * A model object checked as the worker will use it: a non-empty string `id`, a `complete` method,
 * optional `plan` and `summarize` methods, and `capabilities` absent or an object of the fields
 * above. Throws a TypeError naming the model (`where`, e.g. `Model "my-model"`) and the field.
 */
export function checkModel(value: unknown, where: string): DeclaredCapabilities {
  if (typeof value !== 'object' || value === null) throw new TypeError(`${where} must be an object with a string \`id\` and a \`complete(request)\` method, got ${describe(value)}`);
  const known = checked.get(value);
  if (known) return known;
  const model = value as Partial<Record<keyof Model, unknown>>;
  if (typeof model.id !== 'string' || model.id.trim() === '') throw new TypeError(`${where}: id must be a non-empty string, got ${describe(model.id)}`);
  if (typeof model.complete !== 'function') throw new TypeError(`${where}: complete must be a method (request) => Promise<ModelTurn>, got ${describe(model.complete)}`);
  for (const method of ['plan', 'summarize'] as const) {
    if (model[method] !== undefined && typeof model[method] !== 'function') throw new TypeError(`${where}: ${method} must be a method when present, got ${describe(model[method])}`);
  }
  const declared = capabilitiesOf(model.capabilities, where);
  checked.set(value, declared);
  return declared;
}

function capabilitiesOf(value: unknown, where: string): DeclaredCapabilities {
  if (value === undefined) return { nativeCompaction: false, promptCaching: false, thinking: false, streaming: false };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(`${where}: capabilities must be an object {${FIELDS.join(', ')}} (each optional), got ${describe(value)}`);
  }
  const fields = value as Record<string, unknown>;
  const unknown = Object.keys(fields).find((key) => !FIELDS.includes(key));
  if (unknown !== undefined) throw new TypeError(`${where}: capabilities.${unknown} is not a capability (known: ${FIELDS.join(', ')})`);
  for (const flag of FLAGS) {
    if (fields[flag] !== undefined && typeof fields[flag] !== 'boolean') throw new TypeError(`${where}: capabilities.${flag} must be true or false, got ${describe(fields[flag])}`);
  }
  const window = fields.contextWindowTokens;
  if (window !== undefined && !(Number.isInteger(window) && (window as number) >= MIN_CONTEXT_WINDOW_TOKENS && (window as number) <= MAX_CONTEXT_WINDOW_TOKENS)) {
    throw new TypeError(`${where}: capabilities.contextWindowTokens must be a whole number of tokens from ${MIN_CONTEXT_WINDOW_TOKENS} to ${MAX_CONTEXT_WINDOW_TOKENS}, got ${describe(window)}`);
  }
  return {
    nativeCompaction: fields.nativeCompaction === true,
    promptCaching: fields.promptCaching === true,
    thinking: fields.thinking === true,
    streaming: fields.streaming === true,
    ...(window !== undefined ? { contextWindowTokens: window as number } : {}),
  };
}

/** Every model of a `models` option checked (`Model "name"` in each error); returns them unchanged. */
export function checkModels(models: unknown, where = 'models'): Record<string, Model> {
  if (models === undefined) return {};
  if (typeof models !== 'object' || models === null || Array.isArray(models))
    throw new TypeError(`${where} must be an object of models by name ({ "my-model": { id, complete } }), got ${describe(models)}`);
  for (const [name, model] of Object.entries(models)) checkModel(model, `Model "${name}"`);
  return models as Record<string, Model>;
}

function describe(value: unknown): string {
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'object') return 'an object';
  return String(value);
}
