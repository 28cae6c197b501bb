/**
 * The agents' part of a build id (docs/deploy.md): a hash of what decides how the agents a worker
 * serves behave, so that a worker started with a new prompt, new tools or a new policy is a new
 * build, and the tasks pinned to the old build are not taken by new code. Each agent counts by its
 * version (agentVersionOf: prompt, model, tools' schemas and effects, policy, budgets, sub-agents,
 * outcome), its queue, the credentials its tools name, and its MCP servers as configured (where a
 * server's tools come from, not the secrets it is given: rotating a token is not a new build).
 */
import { createHash } from 'node:crypto';
import type { AgentDefinition } from '../agents/define-agent';
import { agentQueue } from '../agents/define-agent';
import type { McpServerConfig } from '../mcp/config';
import { agentVersionOf } from '../protocol/agent-version';
import { canonicalJson } from '../protocol/canonical-json';
import type { ModelChoice } from '../protocol/wire-shapes';

/** How many hex digits of the hash a build id carries. */
const FINGERPRINT_HEX = 8;

/** One agent's behaviour as the build sees it. */
function agentFingerprintEntry(agent: AgentDefinition): Record<string, unknown> {
  return {
    name: agent.name,
    version: agentVersionOf(agent.manifest((agent.model ?? null) as ModelChoice)),
    queue: agentQueue(agent),
    credentials: Object.keys(agent.credentials ?? {}).sort(),
    toolCredentials: agent.tools.map((t) => [t.name, t.credentials ?? null]),
    credentialsForAllTools: agent.credentialsForAllTools ?? false,
    mcpServers: (agent.mcpServers ?? []).map(mcpShape),
    subagents: (agent.subagents ?? []).map((s) => s.name).sort(),
  };
}

/** 8 hex digits over every agent served, in name order: equal for every worker serving the same agents. */
export function agentsFingerprint(agents: readonly AgentDefinition[]): string {
  const entries = [...agents].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).map(agentFingerprintEntry);
  return createHash('sha256')
    .update(canonicalJson(entries, { strict: false }))
    .digest('hex')
    .slice(0, FINGERPRINT_HEX);
}

function mcpShape(server: McpServerConfig): Record<string, unknown> {
  // env, headers and authorization hold secrets or their references: left out (see the header).
  const { env: _env, headers: _headers, authorization: _authorization, ...shape } = server as McpServerConfig & { env?: unknown; headers?: unknown; authorization?: unknown };
  return shape;
}
