/**
 * Live output lines in PostgreSQL (beside the blob store), for workers on several machines. An
 * offset is the row's id. Appends to one task hold a per-task advisory lock, so its ids are
 * committed in the order they are drawn: a reader never sees a later line before an earlier one
 * (which it would then skip for good).
 */
import type { Pool } from 'pg';
import { checkTableName, inLockedTransaction, openPool, redactedUrl, TablesOnce } from '../blobs/postgres-tables';
import type { LineStore } from './live-output-log';

export interface PostgresLineStoreOptions {
  url: string;
  /** Default `durable_agent_live_output`. */
  table?: string;
}

export class PostgresLineStore implements LineStore {
  readonly description: string;
  private readonly pool: Pool;
  private readonly table: string;
  private readonly tables: TablesOnce;

  constructor(options: PostgresLineStoreOptions) {
    this.table = checkTableName(options.table ?? 'durable_agent_live_output', 50);
    this.description = `PostgreSQL ${redactedUrl(options.url)} (table ${this.table})`;
    this.pool = openPool(options.url, 2);
    this.tables = new TablesOnce(this.pool, this.table, [
      `CREATE TABLE IF NOT EXISTS ${this.table} (
          id bigserial PRIMARY KEY,
          task_id text NOT NULL,
          line text NOT NULL
        )`,
      `CREATE INDEX IF NOT EXISTS ${this.table}_task ON ${this.table} (task_id, id)`,
    ]);
  }

  async append(taskId: string, lines: readonly string[]): Promise<void> {
    if (lines.length === 0) return;
    await this.tables.ensure();
    await inLockedTransaction(this.pool, `live-output:${taskId}`, async (client) => {
      await client.query(`INSERT INTO ${this.table} (task_id, line) SELECT $1, unnest($2::text[])`, [taskId, lines]);
    });
  }

  async read(taskId: string, from: number, limit: number): Promise<{ offset: number; line: string }[]> {
    await this.tables.ensure();
    const { rows } = await this.pool.query<{ id: string; line: string }>(`SELECT id, line FROM ${this.table} WHERE task_id = $1 AND id >= $2 ORDER BY id LIMIT $3`, [taskId, from, limit]);
    return rows.map((r) => ({ offset: Number(r.id), line: r.line }));
  }

  async remove(taskId: string): Promise<boolean> {
    await this.tables.ensure();
    const { rowCount } = await this.pool.query(`DELETE FROM ${this.table} WHERE task_id = $1`, [taskId]);
    return (rowCount ?? 0) > 0;
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
