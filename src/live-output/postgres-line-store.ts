/**
 * Live output lines in PostgreSQL (beside the blob store), for workers on several machines. A
 * stream is a task id and the task's first run (`first_run_id`: a later task under the same id has
 * its own). An offset is the row's id, drawn before the line is made (a sealed line is bound to
 * it). Appends to one stream hold a per-stream advisory lock while they draw ids and insert, so its
 * ids are committed in the order they are drawn: a reader never sees a later line before an
 * earlier one (which it would then skip for good).
 */
import type { Pool } from 'pg';
import { checkTableName, inLockedTransaction, openPool, redactedUrl, TablesOnce } from '../storage/postgres';
import type { LineAt, LineStore, LiveStream } from './live-output-log';

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
      // Tables made before streams were keyed by first run: their rows keep '' and are never read as a task's.
      `ALTER TABLE ${this.table} ADD COLUMN IF NOT EXISTS first_run_id text NOT NULL DEFAULT ''`,
      `CREATE INDEX IF NOT EXISTS ${this.table}_stream ON ${this.table} (task_id, first_run_id, id)`,
    ]);
  }

  async append(stream: LiveStream, lines: readonly LineAt[]): Promise<void> {
    if (lines.length === 0) return;
    await this.tables.ensure();
    await inLockedTransaction(this.pool, `live-output:${stream.taskId}/${stream.firstRunId}`, async (client) => {
      const { rows } = await client.query<{ id: string }>(`SELECT nextval(pg_get_serial_sequence($1, 'id'))::text AS id FROM generate_series(1, $2) ORDER BY 1`, [this.table, lines.length]);
      const ids = rows.map((r) => r.id).sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
      const made = lines.map((make, i) => make(Number(ids[i])));
      await client.query(`INSERT INTO ${this.table} (id, task_id, first_run_id, line) SELECT unnest($1::bigint[]), $2, $3, unnest($4::text[])`, [ids, stream.taskId, stream.firstRunId, made]);
    });
  }

  async read(stream: LiveStream, from: number, limit: number): Promise<{ offset: number; line: string }[]> {
    await this.tables.ensure();
    const { rows } = await this.pool.query<{ id: string; line: string }>(`SELECT id, line FROM ${this.table} WHERE task_id = $1 AND first_run_id = $2 AND id >= $3 ORDER BY id LIMIT $4`, [
      stream.taskId,
      stream.firstRunId,
      from,
      limit,
    ]);
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
