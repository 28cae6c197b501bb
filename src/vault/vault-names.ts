/**
 * The names the vault knows: an entry's name (`github-token`), the person an entry belongs to, an
 * agent's reference to an entry (`vault:github-token`) and the environment variable a read-only
 * fallback is read from (`DURABLE_AGENT_SECRET_GITHUB_TOKEN`). docs/credentials.md.
 */

/** Letters, digits, `.`, `_` and `-`, starting with a letter or digit, at most 128 characters. */
export const VAULT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
/** A credential's name in an agent (what tools read as `ctx.credentials.NAME`): an identifier. */
export const CREDENTIAL_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
export const VAULT_REF_PREFIX = 'vault:';
/** The read-only fallback: `DURABLE_AGENT_SECRET_<NAME>`, the name upper-cased with every other character as `_`. */
export const SECRET_ENV_PREFIX = 'DURABLE_AGENT_SECRET_';
const MAX_PERSON_CHARS = 200;

/** Why `name` is not a vault entry's name, or undefined. */
export function vaultNameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string' || !VAULT_NAME.test(name)) return `vault name ${JSON.stringify(name)} must be 1-128 letters, digits, ".", "_" or "-", starting with a letter or digit`;
  return undefined;
}

/** Why `person` is not a person's id for the vault, or undefined. */
export function personProblem(person: unknown): string | undefined {
  if (typeof person !== 'string' || person.length === 0 || person.length > MAX_PERSON_CHARS || /[\s\p{Cc}]/u.test(person)) {
    return `person ${JSON.stringify(person)} must be 1-${MAX_PERSON_CHARS} characters without spaces or control characters`;
  }
  return undefined;
}

/** The vault name a reference names (`vault:github-token` -> `github-token`), or undefined when it is not one. */
export function vaultRefName(ref: unknown): string | undefined {
  if (typeof ref !== 'string' || !ref.startsWith(VAULT_REF_PREFIX)) return undefined;
  const name = ref.slice(VAULT_REF_PREFIX.length);
  return vaultNameProblem(name) ? undefined : name;
}

/** The environment variable the fallback reads for `name`. */
export function secretEnvName(name: string): string {
  return `${SECRET_ENV_PREFIX}${name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

/** Why an agent's `credentials` map is not one, or undefined. */
export function credentialsProblem(credentials: unknown): string | undefined {
  if (credentials === undefined) return undefined;
  if (typeof credentials !== 'object' || credentials === null || Array.isArray(credentials)) return 'credentials must map names to "vault:NAME" references';
  for (const [name, ref] of Object.entries(credentials)) {
    if (!CREDENTIAL_NAME.test(name)) return `credentials: the name "${name}" must be an identifier (letters, digits and _, not starting with a digit)`;
    if (vaultRefName(ref) === undefined) {
      const shown = typeof ref === 'string' ? `a string of ${ref.length} characters` : typeof ref;
      // Never echo the value: someone may have pasted the secret itself here.
      // `credentials: { use: 'all', refs: {...} }` is not a spelling: the agent-wide default is its own option.
      const hint =
        ref === 'all' || (typeof ref === 'object' && ref !== null) ? "; to give every tool that names no credentials all of the agent's, set credentialsForAllTools: true beside credentials" : '';
      return `credentials.${name} must be a reference "vault:NAME" (NAME: letters, digits, ".", "_" or "-"), got ${shown}; put the secret itself in the vault (durable-agent vault set NAME)${hint}`;
    }
  }
  return undefined;
}
