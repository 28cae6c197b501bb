/**
 * The cluster's PostgreSQL: Debian's server binaries (scripts/ensure-postgres.mjs finds or installs
 * them), a data folder kept under the cluster's state folder, the server on 127.0.0.1 only.
 * Authentication as a server would have it: local socket connections trust the OS account (used once
 * here to create the role), TCP connections need the `temporal` role's password.
 */
import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { BLOB_DB, CLUSTER_HOST, CLUSTER_PORTS, PG_PASSWORD, PG_USER, type ClusterPaths } from './layout';
import { startDetached, tail, type ManagedProcess } from './processes';
import { postgresAccount } from '../postgres-account';

const run = promisify(execFile);
const ENSURE_POSTGRES = path.resolve(__dirname, '../ensure-postgres.mjs');

/**
 * Server settings. Durability is PostgreSQL's default (fsync on, synchronous commits): this is the
 * production path, not a test fixture. Connections: one Temporal process runs four services, each
 * with its own pools (see temporal-config.ts), plus the workers' blob-store pools.
 */
const SERVER_SETTINGS = ['max_connections=200', 'shared_buffers=128MB'];

function postgresBin(): string {
  return execFileSync(process.execPath, [ENSURE_POSTGRES], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 10 * 60_000 }).trim();
}

/** As root, PostgreSQL runs as the `postgres` account (see postgres-account.ts). */
function runAsPrefix(): { prefix: string[]; uid?: number; gid?: number } {
  return postgresAccount() ?? { prefix: [] };
}

function command(prefix: string[], binary: string, args: string[]): [string, string[]] {
  return prefix.length ? [prefix[0]!, [...prefix.slice(1), binary, ...args]] : [binary, args];
}

/** Creates the data folder on first use (initdb); later runs reuse it. */
export async function initPostgres(paths: ClusterPaths, log: (line: string) => void): Promise<void> {
  if (existsSync(path.join(paths.pgData, 'PG_VERSION'))) return;
  const bin = postgresBin();
  const { prefix, uid, gid } = runAsPrefix();
  mkdirSync(paths.pgData, { recursive: true });
  if (uid !== undefined && gid !== undefined) {
    chownSync(paths.pgSocket, uid, gid);
    chownSync(paths.pgData, uid, gid);
  }
  log(`Initialising PostgreSQL (${path.basename(path.dirname(bin))}) in ${paths.pgData}...`);
  const [initdb, args] = command(prefix, path.join(bin, 'initdb'), [
    '-D',
    paths.pgData,
    '-U',
    'postgres',
    '-E',
    'UTF8',
    '--locale=C',
    '--auth-local=trust',
    '--auth-host=scram-sha-256',
    '--no-instructions',
  ]);
  await run(initdb, args, { cwd: paths.pgSocket, timeout: 5 * 60_000 }).catch((err: Error & { stderr?: string }) => {
    throw new Error(`initdb failed: ${err.stderr?.trim() || err.message}`);
  });
}

export function startPostgresServer(paths: ClusterPaths): ManagedProcess {
  const bin = postgresBin();
  const { prefix } = runAsPrefix();
  const postgres = path.join(bin, 'postgres');
  const [cmd, args] = command(prefix, postgres, ['-D', paths.pgData, '-p', String(CLUSTER_PORTS.postgres), '-h', CLUSTER_HOST, '-k', paths.pgSocket, ...SERVER_SETTINGS.flatMap((s) => ['-c', s])]);
  return startDetached('postgres', cmd, args, { logFile: path.join(paths.logs, 'postgres.log'), cwd: paths.pgSocket, marker: paths.pgData });
}

/** Waits for the server, then creates the `temporal` role and the workers' blob database when missing. */
export async function preparePostgres(paths: ClusterPaths, server: ManagedProcess, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const admin = () => new Client({ host: paths.pgSocket, port: CLUSTER_PORTS.postgres, user: 'postgres', database: 'postgres', connectionTimeoutMillis: 1_000 });
  let client: Client;
  for (;;) {
    client = admin();
    try {
      await client.connect();
      break;
    } catch {
      await client.end().catch(() => undefined);
    }
    if (Date.now() > deadline) throw new Error(`PostgreSQL did not accept connections in time:\n${tail(server.logFile)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  try {
    const role = await client.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [PG_USER]);
    if (role.rowCount === 0) await client.query(`CREATE ROLE ${PG_USER} LOGIN CREATEDB PASSWORD '${PG_PASSWORD}'`);
    const db = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [BLOB_DB]);
    if (db.rowCount === 0) await client.query(`CREATE DATABASE ${BLOB_DB} OWNER ${PG_USER}`);
  } finally {
    await client.end();
  }
}
