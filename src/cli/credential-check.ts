/**
 * What a worker says at start about its agents' credentials: which tools get each credential (one
 * line per agent that has some), each credential no tool gets, and each `vault:NAME` an agent or one
 * of its MCP servers names that the vault cannot give now (missing, revoked, unreadable), with the
 * command that fixes it. Warnings only: the entry may be set later, and a call without it blocks its
 * task with the same words. Reads entries without refreshing OAuth grants; never prints a value.
 */
import type { AgentDefinition } from '../agents/define-agent';
import { isHttpServer } from '../mcp/config';
import { MEMORY_TOOL_NAME } from '../protocol/memory-tool';
import { credentialNamesFor } from '../vault/credentials';
import type { Vault } from '../vault/vault';
import { vaultRefName } from '../vault/vault-names';

/** Each of the agent's credentials with the tools that get it, by the rule runTool applies (credentialNamesFor; the memory tool gets none). */
export function credentialUsers(agent: AgentDefinition): Map<string, string[]> {
  const users = new Map(Object.keys(agent.credentials ?? {}).map((name) => [name, [] as string[]]));
  for (const tool of agent.tools) {
    if (tool.name === MEMORY_TOOL_NAME) continue;
    for (const name of credentialNamesFor(agent.credentials, tool.credentials, agent.credentialsForAllTools)) users.get(name)?.push(tool.name);
  }
  return users;
}

/** `credentials: crm -> lookup_customer, update_deal; github -> (all tools)` for an agent with credentials, else undefined. */
export function credentialUseLine(agent: AgentDefinition): string | undefined {
  const users = credentialUsers(agent);
  if (users.size === 0) return undefined;
  const tools = agent.tools.filter((t) => t.name !== MEMORY_TOOL_NAME).length;
  const who = (names: string[]) => (names.length === 0 ? '(no tool)' : agent.credentialsForAllTools && names.length === tools ? '(all tools)' : names.join(', '));
  return `credentials: ${[...users].map(([name, names]) => `${name} -> ${who(names)}`).join('; ')}`;
}

/** A credential an agent declares that none of its tools gets: said at start, not an error (nothing breaks; it is only never used). */
export function unusedCredentialWarnings(agents: readonly AgentDefinition[]): string[] {
  const warnings: string[] = [];
  for (const agent of agents) {
    for (const [name, names] of credentialUsers(agent)) {
      if (names.length > 0) continue;
      warnings.push(
        `agent ${agent.name} declares credential ${name} (${agent.credentials![name]}), but no tool of it names it, so none gets it: ` +
          `add it to the credentials of the tools that read it (defineTool({ credentials: ['${name}'] }))${agent.credentialsForAllTools ? '' : ', or set credentialsForAllTools: true'}, or remove it`,
      );
    }
  }
  return warnings;
}

export async function credentialWarnings(agents: readonly AgentDefinition[], open: () => Vault): Promise<string[]> {
  const users = new Map<string, string[]>();
  const use = (ref: string | undefined, who: string) => {
    const name = vaultRefName(ref);
    if (name !== undefined) users.set(name, [...(users.get(name) ?? []), who]);
  };
  for (const agent of agents) {
    for (const [name, ref] of Object.entries(agent.credentials ?? {})) use(ref, `${agent.name}'s ${name}`);
    for (const server of agent.mcpServers ?? []) if (isHttpServer(server)) use(server.authorization, `${agent.name}'s MCP server ${server.name}`);
  }
  if (users.size === 0) return [];
  let vault: Vault;
  try {
    vault = open();
  } catch (err) {
    return [`the vault cannot be opened (${(err as Error).message}); calls that need credentials will block their tasks`];
  }
  const warnings: string[] = [];
  try {
    for (const [name, who] of users) {
      const found = await vault.resolve(name).catch((err: unknown) => ({ state: 'error' as const, message: (err as Error).message }));
      const fix = `run \`durable-agent vault set ${name}\``;
      if (found.state === 'missing') warnings.push(`vault:${name} (${who.join(', ')}) is not in the vault (${vault.description}) nor in ${found.envName}: ${fix}`);
      else if (found.state === 'revoked') warnings.push(`vault:${name} (${who.join(', ')}) was revoked at ${found.entry.revokedAt}: ${fix}`);
      else if (found.state === 'error') warnings.push(`vault:${name} (${who.join(', ')}) cannot be read: ${found.message}`);
    }
  } finally {
    await vault.close().catch(() => undefined);
  }
  return warnings;
}
