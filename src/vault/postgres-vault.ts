/**
 * The shared vault: a table beside the PostgreSQL blob store, for workers on several machines. Each
 * value is sealed (sealed-secret.ts) with the project's keyring before it leaves the process, so
 * the database (and its backups) never hold a value in plain text; a PostgreSQL vault therefore
 * needs DURABLE_AGENT_ENCRYPTION_KEYS (or _KEY_FILE) on every worker and CLI that uses it.
 *
 * Compare-and-swap is one statement: `UPDATE ... WHERE version = $expected` (or an INSERT that a
 * concurrent INSERT of the same entry makes fail on the primary key).
 */
import type { Pool } from 'pg';
import type { Keyring } from '../codec/encryption-keys';
import { checkTableName, openPool, redactedUrl, TablesOnce } from '../storage/postgres';
import { openSecret, sealSecret } from './sealed-secret';
import { checkVersion, entryLabel, VaultConflictError, type VaultEntryInfo, type VaultRead, type VaultStore, type WriteOptions } from './vault-store';

export interface PostgresVaultOptions {
  url: string;
  /** Default `durable_agent_vault`. */
  table?: string;
  keyring: Keyring;
}

interface Row {
  name: string;
  person: string;
  version: number;
  updated_at: Date;
  revoked_at: Date | null;
  sealed: string | null;
}

export class PostgresVault implements VaultStore {
  readonly description: string;
  private readonly pool: Pool;
  private readonly table: string;
  private readonly tables: TablesOnce;
  private readonly keyring: Keyring;

  constructor(options: PostgresVaultOptions) {
    this.table = checkTableName(options.table ?? 'durable_agent_vault', 63);
    this.description = `PostgreSQL ${redactedUrl(options.url)} (table ${this.table})`;
    this.keyring = options.keyring;
    this.pool = openPool(options.url, 2);
    this.tables = new TablesOnce(this.pool, this.table, [
      // person '' is the agent's own entry (a primary key column cannot be NULL).
      `CREATE TABLE IF NOT EXISTS ${this.table} (
          name text NOT NULL,
          person text NOT NULL DEFAULT '',
          version integer NOT NULL,
          sealed text,
          updated_at timestamptz NOT NULL DEFAULT now(),
          revoked_at timestamptz,
          PRIMARY KEY (name, person)
        )`,
    ]);
  }

  async read(name: string, person?: string): Promise<VaultRead> {
    await this.tables.ensure();
    const { rows } = await this.pool.query<Row>(`SELECT * FROM ${this.table} WHERE name = $1 AND person = $2`, [name, person ?? '']);
    const row = rows[0];
    if (!row) return undefined;
    const info = infoOf(row);
    if (row.revoked_at !== null || row.sealed === null) return { state: 'revoked', ...info };
    return { state: 'live', ...info, value: openSecret(this.keyring, name, person, row.version, row.sealed) };
  }

  async list(): Promise<VaultEntryInfo[]> {
    await this.tables.ensure();
    const { rows } = await this.pool.query<Row>(`SELECT name, person, version, updated_at, revoked_at, NULL AS sealed FROM ${this.table} ORDER BY name, person`);
    return rows.map(infoOf);
  }

  async write(name: string, value: string, options: WriteOptions = {}): Promise<VaultEntryInfo> {
    await this.tables.ensure();
    const { person, expectedVersion } = options;
    for (let tries = 0; ; tries++) {
      const current = await this.versionOf(name, person);
      checkVersion(name, person, expectedVersion, current ?? 0);
      const version = (current ?? 0) + 1;
      const sealed = sealSecret(this.keyring, name, person, version, value);
      const { rows } =
        current === undefined
          ? await this.pool.query<Row>(
              `INSERT INTO ${this.table} (name, person, version, sealed) VALUES ($1, $2, $3, $4) ON CONFLICT (name, person) DO NOTHING RETURNING name, person, version, updated_at, revoked_at, NULL AS sealed`,
              [name, person ?? '', version, sealed],
            )
          : await this.pool.query<Row>(
              `UPDATE ${this.table} SET version = $3, sealed = $4, updated_at = now(), revoked_at = NULL WHERE name = $1 AND person = $2 AND version = $5 RETURNING name, person, version, updated_at, revoked_at, NULL AS sealed`,
              [name, person ?? '', version, sealed, current],
            );
      if (rows[0]) return infoOf(rows[0]);
      // Someone wrote between our read and our write: a conditional write has lost; an unconditional one tries again.
      if (expectedVersion !== undefined) throw new VaultConflictError(entryLabel(name, person), expectedVersion, (await this.versionOf(name, person)) ?? 0);
      if (tries >= 10) throw new VaultConflictError(entryLabel(name, person), current ?? 0, (await this.versionOf(name, person)) ?? 0);
    }
  }

  async revoke(name: string, options: WriteOptions = {}): Promise<VaultEntryInfo | undefined> {
    await this.tables.ensure();
    const { person, expectedVersion } = options;
    const condition = expectedVersion === undefined ? '' : ' AND version = $3';
    const { rows } = await this.pool.query<Row>(
      `UPDATE ${this.table} SET version = version + 1, sealed = NULL, updated_at = now(), revoked_at = now() WHERE name = $1 AND person = $2 AND revoked_at IS NULL${condition} RETURNING name, person, version, updated_at, revoked_at, NULL AS sealed`,
      expectedVersion === undefined ? [name, person ?? ''] : [name, person ?? '', expectedVersion],
    );
    if (rows[0]) return infoOf(rows[0]);
    if (expectedVersion !== undefined) {
      const actual = await this.versionOf(name, person);
      if (actual !== undefined && actual !== expectedVersion) throw new VaultConflictError(entryLabel(name, person), expectedVersion, actual);
    }
    return undefined;
  }

  close(): Promise<void> {
    return this.pool.end();
  }

  private async versionOf(name: string, person: string | undefined): Promise<number | undefined> {
    const { rows } = await this.pool.query<{ version: number }>(`SELECT version FROM ${this.table} WHERE name = $1 AND person = $2`, [name, person ?? '']);
    return rows[0]?.version;
  }
}

function infoOf(row: Row): VaultEntryInfo {
  return {
    name: row.name,
    ...(row.person !== '' ? { person: row.person } : {}),
    version: row.version,
    updatedAt: row.updated_at.toISOString(),
    ...(row.revoked_at ? { revokedAt: row.revoked_at.toISOString() } : {}),
    source: 'postgres',
  };
}
