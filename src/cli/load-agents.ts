/** Loads the agents a `durable-agent worker --agents FILE` module exports, with a clear error for each way it can be wrong. */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { AgentDefinition } from '../agents/define-agent';
import { AGENTS_MODULE_EXTENSIONS, importAgentsModule, loadFailureHint } from './agents-module';
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
  if (!(AGENTS_MODULE_EXTENSIONS as readonly string[]).includes(path.extname(absolute).toLowerCase())) {
    throw usageError(`--agents: ${absolute} is not a module; an agents module is a ${AGENTS_MODULE_EXTENSIONS.join(', ')} file`);
  }
  let loaded: { default?: unknown };
  try {
    loaded = (await importAgentsModule(absolute)) as { default?: unknown };
  } catch (err) {
    throw usageError(`--agents: could not load ${absolute}: ${firstLines(err)}; ${loadFailureHint(absolute, err)}`);
  }
  // `module.exports = [...]` has no default; a CommonJS module compiled from `export default` arrives wrapped once more.
  let exported: unknown = loaded.default ?? loaded;
  if (exported && typeof exported === 'object' && !Array.isArray(exported) && 'default' in exported) {
    exported = (exported as { default: unknown }).default;
  }
  const agents = typeof exported === 'function' ? await (exported as (e: AgentsModuleEnvironment) => unknown)(env) : exported;
  if (!Array.isArray(agents) || agents.length === 0 || !agents.every(isAgent)) {
    throw usageError(`--agents: ${absolute} must export (default) a non-empty array of defineAgent(...) results, or a function returning one`);
  }
  const names = agents.map((a) => a.name);
  const repeated = names.find((n, i) => names.indexOf(n) !== i);
  if (repeated) throw usageError(`--agents: two agents are named "${repeated}"`);
  return agents;
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
