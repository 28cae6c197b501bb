/** Loads the agents a `durable-agent worker --agents FILE` module exports, with a clear error for each way it can be wrong. */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { AgentDefinition } from '../agents/define-agent';
import type { Model } from '../models/model';
import { checkModel } from '../models/model-capabilities';
import { AGENTS_MODULE_EXTENSIONS, importAgentsModule, loadFailureHint } from './agents-module';
import { usageError } from './cli-error';

/** What a module's function is given: the worker's settings, never the demo's. */
export interface AgentsModuleEnvironment {
  /** The folder `--workspace` names (default `<state dir>/workspace`), for tools that work on files. */
  workspaceDir: string;
}

export type AgentsModule = AgentDefinition[] | ((env: AgentsModuleEnvironment) => AgentDefinition[] | Promise<AgentDefinition[]>);

/** An agents module as the worker uses it: its agents and the custom models they may choose by name. */
export interface LoadedAgentsModule {
  agents: AgentDefinition[];
  /** The module's `models` export: Model objects by name, chosen by `{ provider: 'custom', name }`. Empty without one. */
  models: Record<string, Model>;
}

/** The agents a module exports (default export). */
export async function loadAgents(file: string, env: AgentsModuleEnvironment): Promise<AgentDefinition[]> {
  return (await loadAgentsModule(file, env)).agents;
}

/**
 * The agents a module exports (default export) and its custom models: a named export `models`, an
 * object of Model (`{ id, complete }`) by name, or a function of the worker's settings returning one.
 * An agent whose `model` names a custom model the module does not export is refused here.
 */
export async function loadAgentsModule(file: string, env: AgentsModuleEnvironment): Promise<LoadedAgentsModule> {
  const absolute = path.resolve(file);
  if (!existsSync(absolute)) throw usageError(`--agents: no file ${absolute}`);
  if (!(AGENTS_MODULE_EXTENSIONS as readonly string[]).includes(path.extname(absolute).toLowerCase())) {
    throw usageError(`--agents: ${absolute} is not a module; an agents module is a ${AGENTS_MODULE_EXTENSIONS.join(', ')} file`);
  }
  let loaded: { default?: unknown; models?: unknown };
  try {
    loaded = (await importAgentsModule(absolute)) as { default?: unknown; models?: unknown };
  } catch (err) {
    throw usageError(`--agents: could not load ${absolute}: ${firstLines(err)}; ${loadFailureHint(absolute, err)}`);
  }
  // `module.exports = [...]` has no default; a CommonJS module compiled from `export default` arrives wrapped once more.
  let exported: unknown = loaded.default ?? loaded;
  let namedModels: unknown = loaded.models;
  if (exported && typeof exported === 'object' && !Array.isArray(exported) && 'default' in exported) {
    namedModels ??= (exported as { models?: unknown }).models;
    exported = (exported as { default: unknown }).default;
  }
  const agents = typeof exported === 'function' ? await (exported as (e: AgentsModuleEnvironment) => unknown)(env) : exported;
  if (!Array.isArray(agents) || agents.length === 0 || !agents.every(isAgent)) {
    throw usageError(`--agents: ${absolute} must export (default) a non-empty array of defineAgent(...) results, or a function returning one`);
  }
  const names = agents.map((a) => a.name);
  const repeated = names.find((n, i) => names.indexOf(n) !== i);
  if (repeated) throw usageError(`--agents: two agents are named "${repeated}"`);
  const models = modelsOf(typeof namedModels === 'function' ? await (namedModels as (e: AgentsModuleEnvironment) => unknown)(env) : namedModels);
  for (const agent of agents) {
    const choice = agent.model;
    if (choice?.provider === 'custom' && !Object.hasOwn(models, choice.name)) {
      throw usageError(
        `--agents: agent "${agent.name}" uses the custom model "${choice.name}", which ${absolute} does not export in \`models\` (${Object.keys(models).length ? `it exports: ${Object.keys(models).join(', ')}` : 'export const models = { "' + choice.name + '": yourModel }'})`,
      );
    }
  }
  return { agents, models };
}

/** The `models` export checked: absent is none; else an object whose every value is a Model. */
function modelsOf(value: unknown): Record<string, Model> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw usageError('--agents: `models` must be an object of Model objects by name ({ "my-model": { id, complete } }), or a function returning one');
  }
  for (const [name, model] of Object.entries(value)) {
    if (!name.trim() || name.length > 200) throw usageError(`--agents: a model name must be 1-200 characters, got ${JSON.stringify(name.slice(0, 60))}`);
    const m = model as Partial<Model> | null;
    if (typeof m !== 'object' || m === null || typeof m.id !== 'string' || typeof m.complete !== 'function') {
      throw usageError(`--agents: models["${name}"] is not a model: a model is an object with a string \`id\` and a \`complete(request)\` method (docs/package.md)`);
    }
    try {
      checkModel(m, `models["${name}"]`);
    } catch (err) {
      throw usageError(`--agents: ${(err as Error).message} (docs/package.md, "Your own model")`);
    }
  }
  return value as Record<string, Model>;
}

/**
 * One line of the error: its first line (a stack or a code frame would follow), and the next one when
 * the first only announces it (tsx's "Transform failed with 1 error:").
 */
function firstLines(err: unknown): string {
  const lines = String((err as Error | undefined)?.message ?? err)
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  const [first = 'unknown error', second] = lines;
  return (first.endsWith(':') && second ? `${first} ${second}` : first).slice(0, 300);
}

function isAgent(value: unknown): value is AgentDefinition {
  return typeof value === 'object' && value !== null && typeof (value as AgentDefinition).name === 'string' && typeof (value as AgentDefinition).manifest === 'function';
}
