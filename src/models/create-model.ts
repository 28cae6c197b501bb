import path from 'node:path';
import type { ModelChoice } from '../protocol/task';
import { stateDir } from '../server/state-dir';
import { AnthropicModel, PROMPT_CACHING_MODES, type PromptCaching } from './anthropic-model';
import type { Model } from './model';
import { SCRIPT_DIRS_SETTING, ScriptedModel } from './scripted-model';
import { ToolFailure } from '../errors/tool-failure';

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

/**
 * The built-in demo scripts, every folder in DURABLE_AGENT_SCRIPT_DIRS (path-delimited), and
 * `<state dir>/scripts`, where the CLI's `start --script` copies a user's script.
 */
export function defaultScriptRoots(env: NodeJS.ProcessEnv = process.env): string[] {
  const extra = (env[SCRIPT_DIRS_SETTING] ?? '').split(path.delimiter).filter((dir) => dir.trim() !== '');
  return [path.resolve(__dirname, '../demo'), ...extra.map((dir) => path.resolve(dir)), scriptsDir()];
}

/** `<state dir>/scripts`. */
export function scriptsDir(): string {
  return path.join(stateDir(), 'scripts');
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
