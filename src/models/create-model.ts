import type { ModelChoice } from '../protocol/task';
import { AnthropicModel, PROMPT_CACHING_MODES, type PromptCaching } from './anthropic-model';
import type { Model } from './model';
import { ScriptedModel } from './scripted-model';
import { defaultScriptRoots } from './script-roots';
import { ToolFailure } from '../errors/tool-failure';

// Where they were first defined; callers that need only the folders import script-roots.ts.
export { defaultScriptRoots, scriptsDir } from './script-roots';

export interface ModelEnvironment {
  /** Default: process.env.ANTHROPIC_API_KEY. */
  anthropicApiKey?: string;
  /** Default: process.env.ANTHROPIC_BASE_URL (read by the SDK). */
  anthropicBaseURL?: string;
  /** Per request, ms. Default 120 000. A slower answer is a transient timeout, retried by Temporal. */
  anthropicTimeoutMs?: number;
  /**
   * The only folders a scripted model's file is read from (symlinks resolved). A task's input names
   * the file, and anyone who can start a task controls it. Default: defaultScriptRoots().
   */
  scriptRoots?: string[];
  /** Prompt-cache breakpoints for Claude. Default: DURABLE_AGENT_PROMPT_CACHING, else `conversation`. */
  anthropicPromptCaching?: PromptCaching;
}

export function createModel(choice: ModelChoice, env: ModelEnvironment = {}, custom: Record<string, Model> = {}): Model {
  switch (choice.provider) {
    case 'custom': {
      const model = custom[choice.name];
      if (!model) {
        throw new ToolFailure('permanent', 'unknown_model', `No model named "${choice.name}" is registered on this worker (known: ${Object.keys(custom).join(', ') || 'none'}).`);
      }
      return model;
    }
    case 'scripted':
      return ScriptedModel.fromFile(choice.script, env.scriptRoots ?? defaultScriptRoots());
    case 'anthropic':
      return new AnthropicModel({
        ...(choice.model ? { model: choice.model } : {}),
        ...(choice.maxTokens ? { maxTokens: choice.maxTokens } : {}),
        ...(env.anthropicApiKey ? { apiKey: env.anthropicApiKey } : {}),
        ...(env.anthropicBaseURL ? { baseURL: env.anthropicBaseURL } : {}),
        ...(env.anthropicTimeoutMs ? { timeoutMs: env.anthropicTimeoutMs } : {}),
        ...(choice.thinking ? { thinking: choice.thinking } : {}),
        ...(choice.contextWindowTokens ? { contextWindowTokens: choice.contextWindowTokens } : {}),
        promptCaching: env.anthropicPromptCaching ?? promptCachingFromEnv(),
      });
  }
}

/** DURABLE_AGENT_PROMPT_CACHING, checked: a typo must not silently change what a task costs. */
export function promptCachingFromEnv(env: NodeJS.ProcessEnv = process.env): PromptCaching {
  const value = env.DURABLE_AGENT_PROMPT_CACHING;
  if (value === undefined || value === '') return 'conversation';
  if (!(PROMPT_CACHING_MODES as readonly string[]).includes(value)) {
    throw new ToolFailure('permanent', 'bad_configuration', `DURABLE_AGENT_PROMPT_CACHING is "${value}"; expected one of ${PROMPT_CACHING_MODES.join(', ')}.`);
  }
  return value as PromptCaching;
}
