/**
 * The vault as workers and the CLI use it: a backend (file or PostgreSQL, vault-store.ts) with the
 * environment as a read-only fallback (`DURABLE_AGENT_SECRET_<NAME>`), and the one resolution rule:
 * the person's own entry when a person is named and has one, else the agent's entry, else the
 * environment. A revoked entry stays revoked: neither a person's revoked entry falls back to the
 * agent's, nor a revoked agent entry to the environment.
 */
import { secretEnvName, SECRET_ENV_PREFIX } from './vault-names';
import { entryLabel, VaultConfigError, type VaultEntryInfo, type VaultStore, type WriteOptions } from './vault-store';

export type Resolution = { state: 'live'; value: string; version: number; source: string; person?: string } | { state: 'revoked'; entry: VaultEntryInfo } | { state: 'missing'; envName: string };

export class Vault {
  constructor(
    readonly store: VaultStore,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  get description(): string {
    return this.store.description;
  }

  /** The value a call gets for `name`, asked for `person` (the task's verified starter) when there is one. */
  async resolve(name: string, person?: string): Promise<Resolution> {
    if (person !== undefined) {
      const own = await this.store.read(name, person);
      if (own?.state === 'live') return { state: 'live', value: own.value, version: own.version, source: own.source, person };
      if (own?.state === 'revoked') return { state: 'revoked', entry: own };
    }
    const shared = await this.store.read(name);
    if (shared?.state === 'live') return { state: 'live', value: shared.value, version: shared.version, source: shared.source };
    if (shared?.state === 'revoked') return { state: 'revoked', entry: shared };
    const envName = secretEnvName(name);
    const fromEnv = this.env[envName];
    if (fromEnv !== undefined && fromEnv !== '') return { state: 'live', value: fromEnv, version: 0, source: 'env' };
    return { state: 'missing', envName };
  }

  /** Entries of the backend (no values) and the names of the fallback's environment variables. */
  async list(): Promise<{ entries: VaultEntryInfo[]; environment: string[] }> {
    const entries = await this.store.list();
    const environment = Object.keys(this.env)
      .filter((key) => key.startsWith(SECRET_ENV_PREFIX) && key.length > SECRET_ENV_PREFIX.length && this.env[key] !== '')
      .sort();
    return { entries: entries.sort((a, b) => a.name.localeCompare(b.name) || (a.person ?? '').localeCompare(b.person ?? '')), environment };
  }

  set(name: string, value: string, options: WriteOptions = {}): Promise<VaultEntryInfo> {
    return this.store.write(name, value, options);
  }

  /** A new value for a live entry, version + 1 (compare-and-swap on the version read). */
  async rotate(name: string, value: string, person?: string): Promise<VaultEntryInfo> {
    const current = await this.store.read(name, person);
    if (current?.state !== 'live') {
      const inEnv = person === undefined && this.env[secretEnvName(name)] ? ` (${secretEnvName(name)} is set, but the environment is read-only)` : '';
      throw new VaultConfigError(`vault ${this.store.description} has no live entry ${entryLabel(name, person)} to rotate${inEnv}; use \`durable-agent vault set ${name}\``);
    }
    return this.store.write(name, value, { ...(person !== undefined ? { person } : {}), expectedVersion: current.version });
  }

  /**
   * Compare-and-swap for one who read `expectedVersion` (an OAuth refresh): writes `value` only if
   * nobody changed the entry since; VaultConflictError otherwise (read again: the winner's value).
   */
  compareAndSwap(name: string, expectedVersion: number, value: string, person?: string): Promise<VaultEntryInfo> {
    return this.store.write(name, value, { ...(person !== undefined ? { person } : {}), expectedVersion });
  }

  revoke(name: string, person?: string): Promise<VaultEntryInfo | undefined> {
    return this.store.revoke(name, person !== undefined ? { person } : {});
  }

  close(): Promise<void> {
    return this.store.close();
  }
}
