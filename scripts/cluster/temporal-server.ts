/**
 * Temporal on the cluster's PostgreSQL: the two databases and their schema through Temporal's own
 * `temporal-sql-tool` (create-database, setup-schema -v 0.0, update-schema from the module's
 * versioned schema folder, as Temporal's Makefile and auto-setup image do), the server process,
 * then the default namespace and this project's search attributes.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { msToTs } from '@temporalio/common/lib/time';
import { Client } from 'pg';
import { connectClient } from '../../src/client/client-connection';
import { isTemporalServing } from '../../src/server/dev-server';
import { ensureSearchAttributes } from '../../src/server/search-attributes';
import { CLUSTER_ADDRESS, CLUSTER_HOST, CLUSTER_NAMESPACE, CLUSTER_PORTS, NAMESPACE_RETENTION_DAYS, PG_PASSWORD, PG_USER, TEMPORAL_DB, VISIBILITY_DB, pgUrl, type ClusterPaths } from './layout';
import { startDetached, tail, type ManagedProcess } from './processes';
import type { TemporalBinaries } from './temporal-build';
import { TEMPORAL_ENV } from './temporal-config';

const run = promisify(execFile);
/** gRPC status 6: registerNamespace on a namespace that exists (a restarted cluster). */
const GRPC_ALREADY_EXISTS = 6;

async function sqlTool(bins: TemporalBinaries, database: string, args: string[]): Promise<void> {
  const common = ['--endpoint', CLUSTER_HOST, '--port', String(CLUSTER_PORTS.postgres), '--user', PG_USER, '--plugin', 'postgres12', '--database', database];
  try {
    // The password through the tool's environment variable, not the command line (which `ps` shows).
    await run(bins.sqlTool, [...common, ...args], { timeout: 5 * 60_000, env: { ...process.env, SQL_PASSWORD: PG_PASSWORD } });
  } catch (err) {
    const e = err as Error & { stdout?: string; stderr?: string };
    throw new Error(`temporal-sql-tool ${args.join(' ')} (database ${database}) failed:\n${(e.stderr || e.stdout || e.message).trim()}`);
  }
}

async function query<T>(database: string, text: string, params: unknown[] = []): Promise<T[]> {
  const client = new Client({ connectionString: pgUrl(database) });
  await client.connect();
  try {
    return (await client.query(text, params)).rows as T[];
  } finally {
    await client.end();
  }
}

/** The version the schema tool recorded in a database, or undefined before setup-schema. */
async function schemaVersion(database: string): Promise<string | undefined> {
  const [table] = await query<{ t: string | null }>(database, "SELECT to_regclass('schema_version')::text AS t");
  if (!table?.t) return undefined;
  const rows = await query<{ curr_version: string }>(database, 'SELECT curr_version FROM schema_version');
  return rows[0]?.curr_version;
}

/**
 * Both databases at the schema version of this server build: created and set up on the first run,
 * brought up to date on later ones (update-schema applies only the versions not yet applied).
 */
export async function setupSchemas(bins: TemporalBinaries, log: (line: string) => void): Promise<Record<string, string>> {
  const versions: Record<string, string> = {};
  for (const [database, dir] of [
    [TEMPORAL_DB, 'temporal'],
    [VISIBILITY_DB, 'visibility'],
  ] as const) {
    const exists = await query('postgres', 'SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (exists.length === 0) {
      log(`temporal-sql-tool: create-database ${database}`);
      await sqlTool(bins, database, ['create-database']);
    }
    if ((await schemaVersion(database)) === undefined) {
      log(`temporal-sql-tool: setup-schema -v 0.0 (${database})`);
      await sqlTool(bins, database, ['setup-schema', '-v', '0.0']);
    }
    const versioned = path.join(bins.postgresSchemaDir, dir, 'versioned');
    log(`temporal-sql-tool: update-schema -d ${path.relative(path.dirname(path.dirname(bins.postgresSchemaDir)), versioned)} (${database})`);
    await sqlTool(bins, database, ['update-schema', '-d', versioned]);
    versions[database] = (await schemaVersion(database)) ?? 'unknown';
  }
  return versions;
}

export function startTemporalServer(paths: ClusterPaths, bins: TemporalBinaries): ManagedProcess {
  // --root is the folder that --config is relative to; the config loads `<config>/cluster.yaml`.
  return startDetached('temporal', bins.server, ['--root', paths.root, '--config', path.relative(paths.root, paths.temporalConfig), '--env', TEMPORAL_ENV, '--allow-no-auth', 'start'], {
    logFile: path.join(paths.logs, 'temporal.log'),
    cwd: paths.root,
    marker: bins.server,
  });
}

/** Waits for the frontend, registers the default namespace and the search attributes. */
export async function prepareTemporal(server: ManagedProcess, isAlive: () => boolean, log: (line: string) => void, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await isTemporalServing(CLUSTER_ADDRESS))) {
    if (!isAlive()) throw new Error(`The Temporal server exited during start:\n${tail(server.logFile)}`);
    if (Date.now() > deadline) throw new Error(`The Temporal server did not answer on ${CLUSTER_ADDRESS} in time:\n${tail(server.logFile)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
  const connection = await connectClient({ address: CLUSTER_ADDRESS });
  try {
    try {
      await connection.workflowService.registerNamespace({
        namespace: CLUSTER_NAMESPACE,
        workflowExecutionRetentionPeriod: msToTs(`${NAMESPACE_RETENTION_DAYS} days`),
      });
      log(`Registered namespace ${CLUSTER_NAMESPACE} (retention ${NAMESPACE_RETENTION_DAYS} days).`);
    } catch (err) {
      if ((err as { code?: number }).code !== GRPC_ALREADY_EXISTS) throw err;
    }
    // A new namespace reaches the frontend's namespace cache some seconds after registration; the
    // search attributes and the workers need it there.
    for (;;) {
      const attrs = await ensureSearchAttributes(connection, CLUSTER_NAMESPACE);
      if (!attrs.error) {
        if (attrs.added.length) log(`Registered search attributes ${attrs.added.join(', ')}.`);
        break;
      }
      if (Date.now() > deadline) throw new Error(`Could not register the search attributes: ${attrs.error}`);
      await new Promise((r) => setTimeout(r, 1_000));
    }
    // Visibility must answer a query on them before a `list --status` works.
    for (;;) {
      try {
        await connection.workflowService.listWorkflowExecutions({ namespace: CLUSTER_NAMESPACE, query: "AgentStatus = 'running'", pageSize: 1 });
        break;
      } catch (err) {
        if (Date.now() > deadline) throw new Error(`Visibility does not answer queries on AgentStatus: ${(err as Error).message}`);
        await new Promise((r) => setTimeout(r, 1_000));
      }
    }
  } finally {
    await connection.close();
  }
}

/** The cluster's shard count as the server reports it (GetClusterInfo, what `temporal operator cluster describe` shows). */
export async function describeCluster(address = CLUSTER_ADDRESS): Promise<{ historyShardCount: number; serverVersion: string; persistenceStore: string; visibilityStore: string }> {
  const connection = await connectClient({ address, connectTimeout: 5_000 });
  try {
    const info = await connection.workflowService.getClusterInfo({});
    return {
      historyShardCount: info.historyShardCount ?? 0,
      serverVersion: info.serverVersion ?? '',
      persistenceStore: info.persistenceStore ?? '',
      visibilityStore: info.visibilityStore ?? '',
    };
  } finally {
    await connection.close();
  }
}
