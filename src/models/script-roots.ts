/**
 * The folders scripted models are read from, apart from the model code: the CLI's `start --script`
 * needs them without loading the model clients (the Anthropic SDK).
 */
import path from 'node:path';
import { stateDir } from '../server/state-dir';

/** The setting that adds script folders on a worker (path-delimited), named in every refusal so the fix is one step away. */
export const SCRIPT_DIRS_SETTING = 'DURABLE_AGENT_SCRIPT_DIRS';

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
