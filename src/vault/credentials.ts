/**
 * Credentials at a tool call: the agent's references (`{ github: 'vault:github-token' }`) resolved
 * in the activity, at each call, into the values the tool reads as `ctx.credentials.github`. Values
 * are never returned to the workflow: a failure names the credential and the vault entry, never a
 * value, and anything a tool sends back (output, error text) has every resolved value, and its
 * common encodings (URL, JSON, base64, hex: redaction.ts), replaced by `[credential NAME]` before it
 * can reach history, blobs or logs.
 *
 * A credential that cannot be had is a `resource` error: not retried, and the task blocks with the
 * command that fixes it (`durable-agent vault set NAME`), to be unblocked once it is done.
 */
import { DurableAgentError } from '../errors/durable-agent-error';
import { toolError, type ToolError } from '../protocol/tool-error';
import { vaultRefName, secretEnvName } from './vault-names';
import { accessToken, grantOf } from './oauth';
import type { Vault } from './vault';
import { entryLabel, VaultConfigError, VaultUnreadableError } from './vault-store';
import { credentialRedactor } from './redaction';

export interface CallCredentials {
  /** Credential name -> value, what the tool reads. */
  values: Record<string, string>;
  /** Replaces every resolved value, and its common encodings (redaction.ts), in `value` (strings, deeply) with `[credential NAME]`. */
  redact<T>(value: T): T;
  /** Whose entries the values came from: `person` when any came from that person's own entry, else `agent`. */
  of: string;
}

/**
 * The credentials a tool gets: the names it declares (`credentials: ['github']`). A tool that declares
 * none gets none, unless its agent sets `credentialsForAllTools`: then it gets every one of the agent's.
 */
export function credentialNamesFor(agentCredentials: Record<string, string> | undefined, toolCredentials: readonly string[] | undefined, forAllTools: boolean | undefined): string[] {
  if (!agentCredentials) return [];
  if (toolCredentials) return [...toolCredentials];
  return forAllTools ? Object.keys(agentCredentials) : [];
}

export async function resolveCredentials(
  vault: Vault,
  agentCredentials: Record<string, string>,
  names: readonly string[],
  person?: string,
): Promise<{ credentials: CallCredentials } | { error: ToolError }> {
  const values: Record<string, string> = {};
  let of = 'agent';
  for (const name of names) {
    const entry = vaultRefName(agentCredentials[name]);
    if (entry === undefined) {
      return { error: toolError('permanent', 'credential_undeclared', `This tool reads credential "${name}", which the agent does not declare.`, 'Use another tool.') };
    }
    const found = await resolveEntry(vault, `Credential "${name}" (vault:${entry})`, entry, person);
    if ('error' in found) return found;
    values[name] = found.value;
    if (person !== undefined && found.person === person) of = person;
  }
  return { credentials: { values, redact: credentialRedactor(values), of } };
}

/** The worker's vault, opened at first use; a setting or key that cannot work is a `resource` error (a person fixes the worker's configuration). */
export function openedVault(open: () => Vault): { vault: Vault } | { error: ToolError } {
  try {
    return { vault: open() };
  } catch (err) {
    return {
      error: toolError(
        'resource',
        'vault_misconfigured',
        `The worker's vault cannot be opened: ${(err as Error)?.message ?? err}`,
        "Do not retry this call: the task waits for a person to fix the workers' vault setting (docs/credentials.md) and unblock it.",
      ),
    };
  }
}

/** A credential that could not be had where no ToolError can be returned (an MCP server's Authorization header): thrown, classified by what it carries. */
export class CredentialUnavailableError extends DurableAgentError {
  readonly code: string;
  constructor(readonly toolError: ToolError) {
    super(toolError.detail);
    this.code = toolError.code;
  }
}

/** The value of a `vault:NAME` reference (an MCP server's `authorization`); CredentialUnavailableError when there is none. */
export async function resolveVaultRef(vault: Vault, ref: string, label: string): Promise<string> {
  const entry = vaultRefName(ref);
  if (entry === undefined) throw new CredentialUnavailableError(toolError('permanent', 'credential_undeclared', `${label} names ${JSON.stringify(ref)}, which is not a vault:NAME reference.`));
  const found = await resolveEntry(vault, `${label} (vault:${entry})`, entry);
  if ('error' in found) throw new CredentialUnavailableError(found.error);
  return found.value;
}

/** One vault entry's value for `person` (else the agent's, else the environment), or the ToolError that says why not. */
async function resolveEntry(vault: Vault, label: string, entry: string, person?: string): Promise<{ value: string; person?: string } | { error: ToolError }> {
  const fix = `A person must run \`durable-agent vault set ${entry}\`${person ? ` (or \`durable-agent vault set ${entry} --for ${person}\`)` : ''}, then unblock the task.`;
  const wait = 'Do not retry this call: the task waits for a person to fix the credential and unblock it.';
  let found;
  try {
    found = await vault.resolve(entry, person);
  } catch (err) {
    if (err instanceof VaultUnreadableError || err instanceof VaultConfigError) {
      return { error: toolError('resource', 'credential_unreadable', `${label} cannot be read from the vault: ${err.message}. ${fix}`, wait) };
    }
    return { error: toolError('transient', 'vault_unavailable', `The vault (${vault.description}) could not be reached for ${label}: ${(err as Error)?.message ?? err}`) };
  }
  if (found.state === 'missing') {
    return { error: toolError('resource', 'credential_missing', `${label} is not in the vault (${vault.description}) nor in ${secretEnvName(entry)}. ${fix}`, wait) };
  }
  if (found.state === 'revoked') {
    return { error: toolError('resource', 'credential_revoked', `${label}: vault entry ${entryLabel(found.entry.name, found.entry.person)} was revoked at ${found.entry.revokedAt}. ${fix}`, wait) };
  }
  // An OAuth grant gives its access token, refreshed when due; a plain secret is itself.
  // (Only from the vault's backend: the environment is read-only, so it cannot keep a refreshed token.)
  const own = found.person !== undefined ? { person: found.person } : {};
  if (found.source !== 'env' && grantOf(found.value)) {
    const token = await accessToken(vault, label, entry, found.person);
    return 'error' in token ? token : { ...token, ...own };
  }
  return { value: found.value, ...own };
}
