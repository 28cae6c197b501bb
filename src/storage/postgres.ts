/**
 * What every PostgreSQL-backed store shares (blobs, the memory log, the vault, live output): a pool
 * that lets a CLI command or a stopped worker exit and survives a server restart, a checked table
 * name, the URL without its password for messages, and tables created once per process under an
 * advisory lock (workers starting together would otherwise race on CREATE TABLE).
 */
import { Pool, type PoolClient } from 'pg';

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

/** A table name the stores accept (they build statements with it): lower-case letters, digits and _. */
export function checkTableName(table: string, maxLength: number): string {
  if (!new RegExp(`^[a-z_][a-z0-9_]{0,${maxLength - 1}}$`).test(table)) throw new TypeError(`table name "${table}": lower-case letters, digits and _ only`);
  return table;
}

export function openPool(url: string, maxConnections: number): Pool {
  // allowExitOnIdle: a CLI command or a stopped worker exits without waiting out idle connections.
  const pool = new Pool({ connectionString: url, max: maxConnections, connectionTimeoutMillis: 10_000, allowExitOnIdle: true });
  // An idle connection dropped by a server restart is reported here; without a listener Node
  // would crash the worker. The next query opens a new connection.
  pool.on('error', () => undefined);
  return pool;
}

/**
 * Runs `statements` (CREATE TABLE IF NOT EXISTS …) in one transaction under an advisory lock named
 * after `lockName`. A failure is not remembered: a database that was down at first use may be up at
 * the next, so the caller asks again (see TablesOnce).
 */
export async function createTables(pool: Pool, lockName: string, statements: string[]): Promise<void> {
  await inLockedTransaction(pool, lockName, async (client) => {
    for (const statement of statements) await client.query(statement);
  });
}

/**
 * Runs `work` in one transaction holding the advisory lock named after `lockName` (released at its
 * end), rolled back when `work` throws: what serialises writers that must not interleave.
 */
export async function inLockedTransaction(pool: Pool, lockName: string, work: (client: PoolClient) => Promise<void>): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`durable-agent:${lockName}`]);
    await work(client);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/** The tables, created at first use and once only, or again after a failed attempt. */
export class TablesOnce {
  private ready: Promise<void> | undefined;
  constructor(
    private readonly pool: Pool,
    private readonly lockName: string,
    private readonly statements: string[],
  ) {}

  ensure(): Promise<void> {
    this.ready ??= createTables(this.pool, this.lockName, this.statements).catch((err: unknown) => {
      this.ready = undefined;
      throw err;
    });
    return this.ready;
  }
}
