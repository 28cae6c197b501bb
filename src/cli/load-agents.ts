/** Loads the agents a `durable-agent worker --agents FILE` module exports, with a clear error for each way it can be wrong. */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AgentDefinition } from '../agents/define-agent';
import { usageError } from './cli-error';

/** What a module's function is given: the worker's settings, never the demo's. */
export interface AgentsModuleEnvironment {
  /** The folder `--workspace` names (default `<state dir>/workspace`), for tools that work on files. */
  workspaceDir: string;
}

export type AgentsModule = AgentDefinition[] | ((env: AgentsModuleEnvironment) => AgentDefinition[] | Promise<AgentDefinition[]>);

export async function loadAgents(file: string, env: AgentsModuleEnvironment): Promise<AgentDefinition[]> {
  const absolute = path.resolve(file);
  if (!existsSync(absolute)) throw usageError(`--agents: no file ${absolute}`);
  let loaded: { default?: unknown };
  try {
    loaded = (await loadModule(absolute)) as { default?: unknown };
  } catch (err) {
    throw usageError(`--agents: could not load ${absolute}: ${(err as Error).message.replace(/\s+/g, ' ').slice(0, 500)}`);
  }
  // `module.exports = [...]` has no default; a CommonJS module compiled from `export default` arrives wrapped once more.
  let exported: unknown = loaded.default ?? loaded;
  if (exported && typeof exported === 'object' && !Array.isArray(exported) && 'default' in exported) {
    exported = (exported as { default: unknown }).default;
  }
  const agents = typeof exported === 'function' ? await (exported as (e: AgentsModuleEnvironment) => unknown)(env) : exported;
  if (!Array.isArray(agents) || agents.length === 0 || !agents.every(isAgent)) {
    throw usageError(
      `--agents: ${absolute} must export (default) a non-empty array of defineAgent(...) results, or a function returning one`,
    );
  }
  const names = agents.map((a) => a.name);
  const repeated = names.find((n, i) => names.indexOf(n) !== i);
  if (repeated) throw usageError(`--agents: two agents are named "${repeated}"`);
  return agents;
}

/** require() first: the CLI runs under tsx's CommonJS hook, which is what makes a .ts file loadable; import() for ES modules. */
async function loadModule(file: string): Promise<unknown> {
  try {
    return require(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ERR_REQUIRE_ESM') throw err;
    return import(pathToFileURL(file).href);
  }
}

function isAgent(value: unknown): value is AgentDefinition {
  return typeof value === 'object' && value !== null && typeof (value as AgentDefinition).name === 'string' && typeof (value as AgentDefinition).manifest === 'function';
}
