/**
 * A throwaway PostgreSQL server for one test file, as real as the one docker-compose runs: initdb
 * into a temp folder, `postgres` on a free loopback port with its socket in that folder, one
 * database, and stop() that shuts it down and removes everything. No Docker needed.
 */
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, mkdtempSync, openSync, readFileSync, rmSync, closeSync } from 'node:fs';
import { freePort } from '../../src/server/dev-server';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { postgresAccount } from '../../scripts/postgres-account';

export interface PostgresServer {
  /** `postgres://postgres@127.0.0.1:PORT/DATABASE` (trust authentication on loopback). */
  url: string;
  port: number;
  /** The server's folder (data, socket, log); removed by stop(). */
  dir: string;
  /** A URL for another database on the same server, created now. */
  createDatabase(name: string): Promise<string>;
  /** Stops the server (fast shutdown: sessions end) and starts it again on the same port and data. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

const run = promisify(execFile);
const SCRIPT = path.resolve(__dirname, '../../scripts/ensure-postgres.mjs');

/** The server binaries' folder, installed first if this machine has none (see scripts/ensure-postgres.mjs). */
function postgresBin(): string {
  try {
    return execFileSync(process.execPath, [SCRIPT], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 10 * 60_000 }).trim();
  } catch (err) {
    const stderr = String((err as { stderr?: unknown }).stderr ?? '').trim();
    throw new Error(`No PostgreSQL server binaries for the tests: ${stderr || (err as Error).message}`);
  }
}

/** initdb refuses to run as root: as root, the server runs as the `postgres` account in a folder that account owns. */
function runAs(dir: string): string[] {
  const account = postgresAccount();
  if (!account) return [];
  chownSync(dir, account.uid, account.gid);
  return account.prefix;
}

export interface StartPostgresOptions {
  database?: string;
  timeoutMs?: number;
  /** Server settings (`-c NAME=VALUE`) over the fast, crash-unsafe defaults below; a benchmark that times commits sets the durability it compares. */
  settings?: Record<string, string>;
}

export async function startPostgres(options: StartPostgresOptions = {}): Promise<PostgresServer> {
  const started = Date.now();
  const deadline = started + (options.timeoutMs ?? 60_000);
  const bin = postgresBin();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-pg-'));
  const data = path.join(dir, 'data');
  const logFile = path.join(dir, 'server.log');
  const prefix = runAs(dir);
  const command = (tool: string, args: string[]) => (prefix.length ? [prefix[0]!, [...prefix.slice(1), path.join(bin, tool), ...args]] : [path.join(bin, tool), args]) as [string, string[]];
  const log = () => {
    try {
      return readFileSync(logFile, 'utf8').trim().split('\n').slice(-15).join('\n');
    } catch {
      return '(no server log)';
    }
  };

  let child: ChildProcess | undefined;
  const killOnExit = () => child?.kill('SIGKILL');
  try {
    // --no-sync and the -c settings below trade crash safety for speed: this data lives for one test file.
    const [initdb, initArgs] = command('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions']);
    await run(initdb, initArgs, { cwd: dir, timeout: Math.max(1, deadline - Date.now()) }).catch((err: Error & { stderr?: string }) => {
      throw new Error(`initdb failed: ${err.stderr?.trim() || err.message}`);
    });

    const port = await freePort();
    const [postgres, serverArgs] = command('postgres', [
      '-D',
      data,
      '-p',
      String(port),
      '-h',
      '127.0.0.1',
      '-k',
      dir,
      '-c',
      'fsync=off',
      '-c',
      'synchronous_commit=off',
      '-c',
      'full_page_writes=off',
      '-c',
      'max_connections=40',
      '-c',
      'shared_buffers=16MB',
      // A later -c for the same setting wins.
      ...Object.entries(options.settings ?? {}).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
    ]);
    // The server process of the moment: restart() replaces it on the same port and data.
    let exited!: Promise<number | null>;
    const launch = async (until: number) => {
      const logFd = openSync(logFile, 'a');
      const started = spawn(postgres, serverArgs, { cwd: dir, stdio: ['ignore', logFd, logFd] });
      closeSync(logFd);
      child = started;
      exited = new Promise<number | null>((resolve) => started.once('exit', (code) => resolve(code)));
      await waitUntilReady(`${admin}/postgres`, until, exited, log);
    };
    const shutdown = async () => {
      const server = child!;
      if (server.exitCode === null && server.signalCode === null) {
        server.kill('SIGINT'); // "fast" shutdown: ends sessions, no waiting for clients.
        const timer = setTimeout(() => server.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
    };
    process.once('exit', killOnExit);
    const admin = `postgres://postgres@127.0.0.1:${port}`;
    await launch(deadline);

    const createDatabase = async (name: string) => {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new TypeError(`database name ${name}: lower-case letters, digits and _`);
      const client = new Client({ connectionString: `${admin}/postgres` });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${name}`);
      } finally {
        await client.end();
      }
      return `${admin}/${name}`;
    };
    const url = await createDatabase(options.database ?? 'durable_agent_test');
    return {
      url,
      port,
      dir,
      createDatabase,
      async restart() {
        await shutdown();
        await launch(Date.now() + (options.timeoutMs ?? 60_000));
      },
      async stop() {
        process.removeListener('exit', killOnExit);
        await shutdown();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    process.removeListener('exit', killOnExit);
    child?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

async function waitUntilReady(url: string, deadline: number, exited: Promise<number | null>, log: () => string): Promise<void> {
  let gone: number | null | undefined;
  void exited.then((code) => (gone = code));
  for (;;) {
    if (gone !== undefined) throw new Error(`PostgreSQL exited (code ${gone}) before accepting connections:\n${log()}`);
    const client = new Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
    try {
      await client.connect();
      await client.end();
      return;
    } catch {
      await client.end().catch(() => undefined);
    }
    if (Date.now() > deadline) throw new Error(`PostgreSQL did not accept connections in time:\n${log()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
