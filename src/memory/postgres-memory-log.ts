/**
 * The memory log in PostgreSQL, for workers on several machines: one row per version, primary key
 * (scope, path, version), so of two workers appending version N of one file exactly one insert
 * succeeds. Content stays in the blob store; a row holds its id and the audit fields.
 */
import type { Pool } from 'pg';
import { checkTableName, openPool, redactedUrl, TablesOnce } from '../storage/postgres';
import type { MemoryLog, MemoryVersion } from './memory-log';

export interface PostgresMemoryLogOptions {
  url: string;
  /** Default `durable_agent_memory` (and `<table>_seen` for what each task last read). */
  table?: string;
}

interface Row {
  record: MemoryVersion;
}

export class PostgresMemoryLog implements MemoryLog {
  readonly description: string;
  private readonly pool: Pool;
  private readonly table: string;
  private readonly tables: TablesOnce;

  constructor(options: PostgresMemoryLogOptions) {
    this.table = checkTableName(options.table ?? 'durable_agent_memory', 57);
    this.description = `PostgreSQL ${redactedUrl(options.url)} (table ${this.table})`;
    this.pool = openPool(options.url, 2);
    this.tables = new TablesOnce(this.pool, this.table, [
      `CREATE TABLE IF NOT EXISTS ${this.table} (
          scope text NOT NULL,
          path text NOT NULL,
          version integer NOT NULL,
          record jsonb NOT NULL,
          PRIMARY KEY (scope, path, version)
        )`,
      `CREATE TABLE IF NOT EXISTS ${this.table}_seen (
          scope text NOT NULL,
          task text NOT NULL,
          path text NOT NULL,
          version integer NOT NULL,
          PRIMARY KEY (scope, task, path)
        )`,
    ]);
  }

  private ensureTables(): Promise<void> {
    return this.tables.ensure();
  }

  async history(scope: string, path: string): Promise<MemoryVersion[]> {
    await this.ensureTables();
    const { rows } = await this.pool.query<Row>(`SELECT record FROM ${this.table} WHERE scope = $1 AND path = $2 ORDER BY version`, [scope, path]);
    return rows.map((r) => r.record);
  }

  async append(scope: string, version: MemoryVersion): Promise<boolean> {
    await this.ensureTables();
    const { rowCount } = await this.pool.query(`INSERT INTO ${this.table} (scope, path, version, record) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`, [
      scope,
      version.path,
      version.version,
      JSON.stringify(version),
    ]);
    return rowCount === 1;
  }

  async latest(scope: string): Promise<MemoryVersion[]> {
    await this.ensureTables();
    const { rows } = await this.pool.query<Row>(`SELECT DISTINCT ON (path) record FROM ${this.table} WHERE scope = $1 ORDER BY path, version DESC`, [scope]);
    return rows.map((r) => r.record);
  }

  async seen(scope: string, task: string, path: string): Promise<number | undefined> {
    await this.ensureTables();
    const { rows } = await this.pool.query<{ version: number }>(`SELECT version FROM ${this.table}_seen WHERE scope = $1 AND task = $2 AND path = $3`, [scope, task, path]);
    return rows[0]?.version;
  }

  async markSeen(scope: string, task: string, path: string, version: number): Promise<void> {
    await this.ensureTables();
    await this.pool.query(`INSERT INTO ${this.table}_seen (scope, task, path, version) VALUES ($1, $2, $3, $4) ON CONFLICT (scope, task, path) DO UPDATE SET version = EXCLUDED.version`, [
      scope,
      task,
      path,
      version,
    ]);
  }

  async clear(scope: string, path?: string): Promise<number> {
    await this.ensureTables();
    const where = path === undefined ? 'scope = $1' : 'scope = $1 AND path = $2';
    const params = path === undefined ? [scope] : [scope, path];
    const { rows } = await this.pool.query<{ n: string }>(`SELECT count(DISTINCT path) AS n FROM ${this.table} WHERE ${where}`, params);
    await this.pool.query(`DELETE FROM ${this.table} WHERE ${where}`, params);
    await this.pool.query(`DELETE FROM ${this.table}_seen WHERE ${where}`, params);
    return Number(rows[0]?.n ?? 0);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
