import type { ModelChoice } from '../protocol/task';
import { AnthropicModel } from './anthropic-model';
import type { Model } from './model';
import { ScriptedModel } from './scripted-model';
import { ToolFailure } from '../errors/tool-failure';

export interface ModelEnvironment {
  /** Default: process.env.ANTHROPIC_API_KEY. */
  anthropicApiKey?: string;
  /** Default: process.env.ANTHROPIC_BASE_URL (read by the SDK). */
  anthropicBaseURL?: string;
  /** Per request, ms. Default 120 000. A slower answer is a transient timeout, retried by Temporal. */
  anthropicTimeoutMs?: number;
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
      return ScriptedModel.fromFile(choice.script);
    case 'anthropic':
      return new AnthropicModel({
        ...(choice.model ? { model: choice.model } : {}),
        ...(choice.maxTokens ? { maxTokens: choice.maxTokens } : {}),
        ...(env.anthropicApiKey ? { apiKey: env.anthropicApiKey } : {}),
        ...(env.anthropicBaseURL ? { baseURL: env.anthropicBaseURL } : {}),
        ...(env.anthropicTimeoutMs ? { timeoutMs: env.anthropicTimeoutMs } : {}),
      });
  }
}

