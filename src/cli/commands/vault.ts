/**
 * `durable-agent vault`: the credentials agents use by reference (`credentials: { github:
 * 'vault:github-token' }`), kept in the vault the workers read at each tool call (src/vault,
 * docs/credentials.md). Values come from stdin only and are never printed.
 */
import type { z } from 'zod';
import { secretEnvName, personProblem, vaultNameProblem } from '../../vault/vault-names';
import { openVault, VAULT_ENV } from '../../vault/open-vault';
import { grantProblem } from '../../vault/oauth';
import type { Vault } from '../../vault/vault';
import { entryLabel, VaultConfigError, VaultConflictError, type VaultEntryInfo } from '../../vault/vault-store';
import { parse } from '../args';
import { CliError, EXIT, usageError } from '../cli-error';
import { printJson } from '../json-output';
import { vaultChangeJson, vaultListJson } from '../json-vault';
import { readSecretValue } from '../read-secret';
import { safeLine } from '../render';
import { actionsOf, VERB_ARGS } from '../verb-args';

export const vaultHelp = `durable-agent vault set NAME [--for PERSON] [--json]      (the value on stdin)
durable-agent vault rotate NAME [--for PERSON] [--json]   (the new value on stdin)
durable-agent vault revoke NAME [--for PERSON] [--json]
durable-agent vault list [--for PERSON] [--json]
  Credentials agents name as 'vault:NAME', resolved on the worker at each tool call, never in a
  task's history. set: a new value (version 1, or +1); rotate: a new value for an entry that has one
  (compare-and-swap on its version); revoke: the value goes (a running task's next call blocks until
  the entry is set again); list: names, people, versions and times, never values. The value is read
  from stdin (piped: all of it less one trailing newline; on a terminal: typed without echo), never
  from the command line; an empty value is refused. An OAuth 2 refresh-token grant (JSON with "type":
  "oauth2_refresh") gives tools access tokens, refreshed when due. --for PERSON: that person's own entry, used by
  the tasks they start. Vault: --vault SPEC, else ${VAULT_ENV} (file:/abs/dir | postgres://...), else
  beside a PostgreSQL blob store, else .durable-agent/vault. Read-only fallback: DURABLE_AGENT_SECRET_<NAME>.
  See docs/credentials.md.`;

const ACTIONS = actionsOf('vault');
type Action = keyof typeof VERB_ARGS.vault.actions.table;

export async function vaultCommand(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parse(argv, VERB_ARGS.vault.options, VERB_ARGS.vault.positionals);
  } catch (err) {
    // The extra argument may be the secret itself, typed where it does not belong: never echo it.
    if (err instanceof CliError && /^unexpected argument/.test(err.message)) throw usageError('vault takes an action and one NAME; the value is read from stdin, never from the command line');
    throw err;
  }
  const { values, positionals } = parsed;
  const action = positionals[0] as Action;
  if (!ACTIONS.includes(action)) throw usageError(`unknown vault action "${safeLine(String(action)).slice(0, 40)}" (${ACTIONS.join(', ')})`);
  const name = positionals[1];
  if (action === 'list' && name !== undefined) throw usageError(`vault list takes no NAME (got "${safeLine(name).slice(0, 60)}")`);
  if (action !== 'list') {
    if (name === undefined) throw usageError(`vault ${action} needs a NAME, e.g. github-token`);
    const problem = vaultNameProblem(name);
    if (problem) throw usageError(problem);
  }
  const person = values.for;
  if (person !== undefined) {
    const problem = personProblem(person);
    if (problem) throw usageError(`--for: ${problem}`);
  }
  let vault: Vault;
  try {
    vault = openVault(values.vault !== undefined ? { env: { ...process.env, [VAULT_ENV]: values.vault } } : {});
  } catch (err) {
    if (err instanceof VaultConfigError) throw usageError(err.message);
    throw err;
  }
  const print = <S extends z.ZodType>(schema: S, data: z.output<S>, text: string) => (values.json ? printJson(schema, data, 2) : console.log(text));
  const changed = (verb: 'set' | 'rotated' | 'revoked', entry: VaultEntryInfo) =>
    print(vaultChangeJson, { action: verb, store: vault.description, entry }, `${verb} ${entryLabel(entry.name, entry.person)}: version ${entry.version} (${vault.description})`);
  try {
    switch (action) {
      case 'list': {
        const { entries, environment } = await vault.list();
        const shown = person === undefined ? entries : entries.filter((e) => e.person === person);
        const lines = shown.map((e) => `${e.name}\t${e.person ?? '(agent)'}\tv${e.version}\t${e.revokedAt ? `revoked ${e.revokedAt}` : `updated ${e.updatedAt}`}`);
        if (environment.length) lines.push(`read-only from the environment: ${environment.join(', ')}`);
        print(
          vaultListJson,
          { store: vault.description, entries: shown, environment },
          lines.length ? lines.join('\n') : `no entries${person === undefined ? '' : ` for ${person}`} (${vault.description})`,
        );
        return EXIT.ok;
      }
      case 'set':
      case 'rotate': {
        const value = await readSecretValue(`Value for ${entryLabel(name!, person)} (not shown): `);
        if (value === '') throw usageError(`refusing an empty value for ${name}: pipe it on stdin (e.g. \`printf %s "$TOKEN" | durable-agent vault ${action} ${name}\`) or type it at the prompt`);
        const grant = grantProblem(value);
        if (grant) throw usageError(`${name}: ${grant} (docs/credentials.md, "OAuth 2 refresh-token grants")`);
        if (action === 'set') changed('set', await vault.set(name!, value, person !== undefined ? { person } : {}));
        else changed('rotated', await vault.rotate(name!, value, person));
        return EXIT.ok;
      }
      case 'revoke': {
        const revoked = await vault.revoke(name!, person);
        if (!revoked) {
          const env = person === undefined && process.env[secretEnvName(name!)] ? ` (${secretEnvName(name!)} is set in this environment: unset it on the workers to revoke that one)` : '';
          throw new CliError(`the vault has no live entry ${entryLabel(name!, person)} to revoke${env}`, EXIT.failed);
        }
        changed('revoked', revoked);
        return EXIT.ok;
      }
    }
  } catch (err) {
    if (err instanceof VaultConflictError || err instanceof VaultConfigError) throw new CliError(err.message, EXIT.failed);
    throw err;
  } finally {
    await vault.close();
  }
  return EXIT.failed;
}
