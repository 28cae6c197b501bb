/**
 * What a worker says at start about its agents' credentials: each `vault:NAME` an agent or one of
 * its MCP servers names that the vault cannot give now (missing, revoked, unreadable), with the
 * command that fixes it. A warning only: the entry may be set later, and a call without it blocks its
 * task with the same words. Reads entries without refreshing OAuth grants; never prints a value.
 */
import type { AgentDefinition } from '../agents/define-agent';
import { isHttpServer } from '../mcp/config';
import type { Vault } from '../vault/vault';
import { vaultRefName } from '../vault/vault-names';

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
