/**
 * The shared store: one PostgreSQL table that every worker machine reaches.
 *
 * Why PostgreSQL and not S3: the docker-compose deployment already runs PostgreSQL for Temporal,
 * so a shared store costs one database, not another service, credentials and client. Blobs are
 * small (a tool result, a message: kilobytes to a few megabytes), written once and read a few
 * times, which a table with a primary key serves well; `put` is one idempotent upsert, and purging
 * a task is one indexed DELETE instead of listing and deleting objects page by page. Teams who
 * already run S3 (or MinIO) can add a store behind the same BlobStore interface.
 */
import type { Pool } from 'pg';
import { BlobMissingError, type BlobBodyStore } from './blob-store';
import { plainRecords, plainTextOf } from './blob-envelope';
import { checkBodyPlace, checkRecordPlace, checkScope, checkScopePrefix, putText } from './blob-id';
import { checkTableName, openPool, redactedUrl, TablesOnce } from '../storage/postgres';

export interface PostgresBlobStoreOptions {
  /** `postgres://user:password@host:port/database`. */
  url: string;
  /** Default `durable_agent_blobs`. */
  table?: string;
  /** Connections per process. Default 4: blob reads are short, and many workers share one server. */
  maxConnections?: number;
}

/** A record's row id: beside content ids (`sha256:…`) in the same table, never one of them. */
const RECORD_ID_PREFIX = 'record:';

export class PostgresBlobStore implements BlobBodyStore {
  readonly description: string;
  private readonly pool: Pool;
  private readonly table: string;
  private readonly tables: TablesOnce;

  constructor(options: PostgresBlobStoreOptions) {
    this.table = checkTableName(options.table ?? 'durable_agent_blobs', 63);
    this.description = `PostgreSQL ${redactedUrl(options.url)} (table ${this.table})`;
    this.pool = openPool(options.url, options.maxConnections ?? 4);
    this.tables = new TablesOnce(this.pool, this.table, [
      // COLLATE "C" lets the primary key's index serve `scope LIKE 'prefix%'` for purge.
      `CREATE TABLE IF NOT EXISTS ${this.table} (
          scope text COLLATE "C" NOT NULL,
          id text NOT NULL,
          body bytea NOT NULL,
          bytes integer NOT NULL,
          created_at timestamptz NOT NULL DEFAULT now(),
          PRIMARY KEY (scope, id)
        )`,
    ]);
  }

  /** Creates the table on first use. */
  private ensureTable(): Promise<void> {
    return this.tables.ensure();
  }

  put(scope: string, text: string): Promise<string> {
    // Stored as bytea, not text: PostgreSQL text cannot hold NUL, and tool output can.
    return putText(this, scope, text);
  }

  async get(scope: string, id: string): Promise<string> {
    return plainTextOf(await this.getBody(scope, id), scope, id, this.description);
  }

  async putBody(scope: string, id: string, body: Buffer): Promise<void> {
    checkBodyPlace(scope, id);
    await this.ensureTable();
    await this.pool.query(`INSERT INTO ${this.table} (scope, id, body, bytes) VALUES ($1, $2, $3, $4) ON CONFLICT (scope, id) DO NOTHING`, [scope, id, body, body.length]);
  }

  async getBody(scope: string, id: string): Promise<Buffer> {
    checkBodyPlace(scope, id);
    await this.ensureTable();
    const { rows } = await this.pool.query<{ body: Buffer }>(`SELECT body FROM ${this.table} WHERE scope = $1 AND id = $2`, [scope, id]);
    if (!rows[0]) throw new BlobMissingError(scope, id, this.description);
    return rows[0].body;
  }

  createRecord(scope: string, name: string, text: string): Promise<boolean> {
    return plainRecords(this).create(scope, name, text);
  }

  records(scope: string): Promise<{ name: string; text: string }[]> {
    return plainRecords(this).read(scope);
  }

  async createRecordBody(scope: string, name: string, body: Buffer): Promise<boolean> {
    checkRecordPlace(scope, name);
    await this.ensureTable();
    // The primary key decides: of any number of racing inserts, one adds the row and the rest add none.
    const { rowCount } = await this.pool.query(`INSERT INTO ${this.table} (scope, id, body, bytes) VALUES ($1, $2, $3, $4) ON CONFLICT (scope, id) DO NOTHING`, [
      scope,
      `${RECORD_ID_PREFIX}${name}`,
      body,
      body.length,
    ]);
    return rowCount === 1;
  }

  async recordBodies(scope: string): Promise<{ name: string; body: Buffer }[]> {
    checkScope(scope);
    await this.ensureTable();
    const { rows } = await this.pool.query<{ id: string; body: Buffer }>(`SELECT id, body FROM ${this.table} WHERE scope = $1 AND id LIKE 'record:%'`, [scope]);
    return rows.map((r) => ({ name: r.id.slice(RECORD_ID_PREFIX.length), body: r.body }));
  }

  async purge(scopePrefix: string): Promise<number> {
    checkScopePrefix(scopePrefix);
    await this.ensureTable();
    const pattern = `${scopePrefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    const { rowCount } = await this.pool.query(`DELETE FROM ${this.table} WHERE scope LIKE $1`, [pattern]);
    return rowCount ?? 0;
  }

  async purgeScope(scope: string): Promise<number> {
    checkScope(scope);
    await this.ensureTable();
    const { rowCount } = await this.pool.query(`DELETE FROM ${this.table} WHERE scope = $1`, [scope]);
    return rowCount ?? 0;
  }

  async scopes(): Promise<string[]> {
    await this.ensureTable();
    const { rows } = await this.pool.query<{ scope: string }>(`SELECT DISTINCT scope FROM ${this.table} ORDER BY scope`);
    return rows.map((r) => r.scope);
  }

  async ids(scope: string): Promise<string[]> {
    checkScope(scope);
    await this.ensureTable();
    const { rows } = await this.pool.query<{ id: string }>(`SELECT id FROM ${this.table} WHERE scope = $1 AND id LIKE 'sha256:%'`, [scope]);
    return rows.map((r) => r.id);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
