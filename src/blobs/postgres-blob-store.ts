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
import { Pool, type PoolConfig } from 'pg';
import { BlobMissingError, type BlobBodyStore } from './blob-store';
import { plainTextOf } from './blob-envelope';
import { checkBodyPlace, checkScope, checkScopePrefix, putText } from './blob-id';

export interface PostgresBlobStoreOptions {
  /** `postgres://user:password@host:port/database`. */
  url: string;
  /** Default `durable_agent_blobs`. */
  table?: string;
  /** Connections per process. Default 4: blob reads are short, and many workers share one server. */
  maxConnections?: number;
}

const TABLE_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** The URL without its password, for messages and logs. */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgres://(unparseable URL)';
  }
}

export class PostgresBlobStore implements BlobBodyStore {
  readonly description: string;
  private readonly pool: Pool;
  private readonly table: string;
  private ready: Promise<void> | undefined;

  constructor(options: PostgresBlobStoreOptions) {
    this.table = options.table ?? 'durable_agent_blobs';
    if (!TABLE_NAME.test(this.table)) throw new TypeError(`table name "${this.table}": lower-case letters, digits and _ only`);
    this.description = `PostgreSQL ${redactedUrl(options.url)} (table ${this.table})`;
    // allowExitOnIdle: a CLI command or a stopped worker exits without waiting out idle connections.
    const config: PoolConfig = { connectionString: options.url, max: options.maxConnections ?? 4, connectionTimeoutMillis: 10_000, allowExitOnIdle: true };
    this.pool = new Pool(config);
    // An idle connection dropped by a server restart is reported here; without a listener Node
    // would crash the worker. The next query opens a new connection.
    this.pool.on('error', () => undefined);
  }

  /** Creates the table on first use; an advisory lock keeps workers starting together from racing on CREATE TABLE. */
  private ensureTable(): Promise<void> {
    this.ready ??= (async () => {
      const client = await this.pool.connect();
      try {
        await client.query('BEGIN');
        await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`durable-agent:${this.table}`]);
        // COLLATE "C" lets the primary key's index serve `scope LIKE 'prefix%'` for purge.
        await client.query(`CREATE TABLE IF NOT EXISTS ${this.table} (
          scope text COLLATE "C" NOT NULL,
          id text NOT NULL,
          body bytea NOT NULL,
          bytes integer NOT NULL,
          created_at timestamptz NOT NULL DEFAULT now(),
          PRIMARY KEY (scope, id)
        )`);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
    })().catch((err: unknown) => {
      this.ready = undefined; // A database that was down at first use may be up at the next.
      throw err;
    });
    return this.ready;
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
    const { rows } = await this.pool.query<{ id: string }>(`SELECT id FROM ${this.table} WHERE scope = $1`, [scope]);
    return rows.map((r) => r.id);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
