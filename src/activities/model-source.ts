/**
 * The worker's models: a task's model choice made into a Model (one SDK client per Claude choice
 * for the worker's life; scripted models read afresh each call, so an edited script takes effect),
 * and each model's declared capabilities (model-capabilities.ts), checked before any task runs.
 */
import { createModel, type ModelEnvironment } from '../models/create-model';
import type { Model } from '../models/model';
import { checkModel, checkModels, type DeclaredCapabilities } from '../models/model-capabilities';
import type { ModelChoice } from '../protocol/task';
import type { ActivityDependencies } from './dependencies';

export interface ModelSource {
  env: ModelEnvironment;
  modelFor(choice: ModelChoice): Model;
  /** A model's declared capabilities (checked once per model object). */
  capabilitiesOf(model: Model): DeclaredCapabilities;
  /** The worker's own Model a custom choice names, if any. */
  ownModel(choice: ModelChoice): Model | undefined;
}

export function modelSource(deps: Pick<ActivityDependencies, 'modelEnv' | 'models'>): ModelSource {
  const env: ModelEnvironment = {
    anthropicApiKey: deps.modelEnv?.anthropicApiKey ?? process.env.ANTHROPIC_API_KEY,
    anthropicBaseURL: deps.modelEnv?.anthropicBaseURL ?? process.env.ANTHROPIC_BASE_URL,
    ...(deps.modelEnv?.anthropicTimeoutMs ? { anthropicTimeoutMs: deps.modelEnv.anthropicTimeoutMs } : {}),
    ...(deps.modelEnv?.scriptRoots ? { scriptRoots: deps.modelEnv.scriptRoots } : {}),
    ...(deps.modelEnv?.anthropicPromptCaching ? { anthropicPromptCaching: deps.modelEnv.anthropicPromptCaching } : {}),
  };
  const claudeModels = new Map<string, Model>();
  // The worker's own models, checked before any task runs: a bad capability is a TypeError naming it.
  checkModels(deps.models);
  return {
    env,
    modelFor(choice) {
      if (choice.provider !== 'anthropic') return createModel(choice, env, deps.models);
      const key = JSON.stringify(choice);
      let model = claudeModels.get(key);
      if (!model) claudeModels.set(key, (model = createModel(choice, env)));
      return model;
    },
    capabilitiesOf: (model) => checkModel(model, `Model "${model.id}"`),
    ownModel: (choice) => (choice.provider === 'custom' && deps.models && Object.hasOwn(deps.models, choice.name) ? deps.models[choice.name] : undefined),
  };
}
