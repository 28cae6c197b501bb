import path from 'node:path';

/**
 * Where the project keeps what it downloads, builds and persists (the Temporal CLI, the dev
 * server's database, demo workspaces). Default `./.durable-agent`; override with DURABLE_AGENT_HOME.
 */
export function stateDir(): string {
  // An empty DURABLE_AGENT_HOME is unset, not the working directory (which it would resolve to).
  return path.resolve(process.env.DURABLE_AGENT_HOME || path.join(process.cwd(), '.durable-agent'));
}
