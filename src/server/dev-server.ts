/**
 * The embedded default: `temporal server start-dev` on loopback, state persisted to a SQLite file,
 * this project's search attributes registered. The same code serves `durable-agent dev`, the demo,
 * the tests and the benchmarks.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, promises as fs } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { DurableAgentError } from '../errors/durable-agent-error';
import { SEARCH_ATTRIBUTES } from '../protocol/definitions';
import { provisionTemporalCli } from './temporal-cli';
import { stateDir } from './state-dir';

export interface DevServerOptions {
  /** Default 127.0.0.1. */
  ip?: string;
  /** gRPC port. Default: a free port. */
  port?: number;
  /** Web UI port; `false` runs headless. Default: headless. */
  uiPort?: number | false;
  /** The Web UI's remote codec endpoint (`--ui-codec-endpoint`), e.g. a `durable-agent codec-server`. Default: none. */
  uiCodecEndpoint?: string;
  /** SQLite file for persisted state. `null` keeps state in memory. Default `<stateDir>/temporal.db`. */
  dbFile?: string | null;
  /** SQLite pragmas for the server's database. Default: DEFAULT_SQLITE_PRAGMAS for a file, none in memory; `{}` leaves the CLI's own. */
  sqlitePragmas?: Record<string, string>;
  /** `--dynamic-config-value KEY=JSON` settings, over DEV_SERVER_DYNAMIC_CONFIG. */
  dynamicConfig?: Record<string, unknown>;
  /** Server log. Default `<stateDir>/temporal-server.log`. */
  logFile?: string;
  /** Path of the CLI. Default: provisionTemporalCli(). */
  binary?: string;
  /** Default 60 s: the first start on a new database takes a few seconds. */
  readyTimeoutMs?: number;
}

export interface DevServer {
  address: string;
  namespace: string;
  uiUrl?: string;
  dbFile: string | null;
  logFile: string;
  readonly process: ChildProcess;
  /**
   * On a state file: SIGTERM, then SIGKILL after 10 s. In memory: SIGKILL at once, since a clean
   * stop (at least 1 s, the frontend's fixed drain) keeps nothing that the exit does not discard.
   */
  stop(): Promise<void>;
  /** SIGKILL at once: a crash, for tests. */
  kill(): Promise<void>;
}

/**
 * The dev server runs one history shard, and each shard's queue processors poll their tasks at most
 * 20 times a second by default: once that burst is spent, every activity and workflow task waits
 * about 50 ms before it is dispatched (a 10 ms turn became 200 ms in the overhead benchmark).
 * A cluster spreads the same limit over hundreds of shards; one shard needs a higher one.
 */
/** Signals one run of a task accepts (decisions and messages); a continue-as-new starts a new count. */
export const MAX_SIGNALS_PER_RUN = 2_000;

export const DEV_SERVER_DYNAMIC_CONFIG: Record<string, unknown> = {
  'history.transferProcessorMaxPollRPS': 1000,
  'history.timerProcessorMaxPollRPS': 1000,
  'history.visibilityProcessorMaxPollRPS': 1000,
  // Timers (heartbeat timeouts, sticky-queue timeouts, retry backoffs) fire up to this late; the
  // default 1 s look-ahead made the next step after a SIGKILL ~0.7 s later (recovery median
  // 7.04 s -> 6.36 s with 100 ms). The price is more frequent timer-queue reads, within the RPS above.
  'history.timerProcessorMaxTimeShift': '100ms',
  // Eager activity dispatch: an activity scheduled by a workflow task goes back to the worker that
  // completed it, in the same response, instead of through the task queue and a poll (the SDK asks
  // for it when it has a free slot). Off by default before server 1.32; on in Temporal Cloud.
  'system.enableActivityEagerExecution': true,
  // Decisions can arrive as signals (recorded without a worker). A flood of them is refused by the
  // server past this many per run ("exceeded workflow execution limit for signal events"), well
  // before the history limits that would terminate the task (default 10,000 per run).
  'history.maximumSignalsPerExecution': MAX_SIGNALS_PER_RUN,
};

/**
 * The state file in write-ahead-log mode, synced at checkpoints rather than at every commit: what
 * LangGraph's SQLite checkpointer (through better-sqlite3) runs with too. A crash of the server
 * process loses nothing committed; a power cut may lose the last commits, never the file's
 * consistency. The CLI's own default (a rollback journal, synced at every commit) made every
 * turn ~60% slower on this project's machine (docs/performance.md).
 */
export const DEFAULT_SQLITE_PRAGMAS: Readonly<Record<string, string>> = { journal_mode: 'wal', synchronous: 'normal' };

export async function startDevServer(options: DevServerOptions = {}): Promise<DevServer> {
  if (options.port !== undefined) return startDevServerOn(options.port, options);
  // A free port is free when asked, not when the server binds it: another process (another test
  // file's server) may take it in between. Then the server exits at once, and another port is tried.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startDevServerOn(await freePort(options.ip ?? '127.0.0.1'), options);
    } catch (err) {
      if (!(err instanceof DevServerPortTakenError) || attempt >= 3) throw err;
    }
  }
}

/** The dev server exited at its start because a port it binds was taken (by another process, meanwhile). */
export class DevServerPortTakenError extends DurableAgentError {
  readonly code = 'dev_server_port_taken';
}

async function startDevServerOn(port: number, options: DevServerOptions): Promise<DevServer> {
  const ip = options.ip ?? '127.0.0.1';
  const dbFile = options.dbFile === undefined ? path.join(stateDir(), 'temporal.db') : options.dbFile;
  const logFile = options.logFile ?? path.join(stateDir(), 'temporal-server.log');
  const binary = options.binary ?? (await provisionTemporalCli());
  const address = `${ip}:${port}`;

  if (await isTemporalServing(address)) {
    throw new Error(`Something already answers on ${address}; stop it or choose another port.`);
  }
  await fs.mkdir(path.dirname(logFile), { recursive: true });
  if (dbFile) await fs.mkdir(path.dirname(dbFile), { recursive: true });

  const args = ['server', 'start-dev', '--ip', ip, '--port', String(port), '--log-level', 'warn'];
  if (options.uiPort) args.push('--ui-port', String(options.uiPort));
  else args.push('--headless');
  if (options.uiPort && options.uiCodecEndpoint) args.push('--ui-codec-endpoint', options.uiCodecEndpoint);
  if (dbFile) args.push('--db-filename', dbFile);
  // The defaults are about a file's journal; a database in memory gets only the pragmas asked for.
  for (const [key, value] of Object.entries(options.sqlitePragmas ?? (dbFile ? DEFAULT_SQLITE_PRAGMAS : {}))) args.push('--sqlite-pragma', `${key}=${value}`);
  for (const [key, value] of Object.entries({ ...DEV_SERVER_DYNAMIC_CONFIG, ...options.dynamicConfig })) args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
  for (const key of SEARCH_ATTRIBUTES) args.push('--search-attribute', `${key.name}=Keyword`);

  // The server writes its log to the file itself, not through a pipe to this process: a server that
  // outlives a SIGKILLed dev (taken back by the next one) would die of SIGPIPE at its next log line.
  // What this start writes to the log (it is appended to): an earlier start's lines are not its cause.
  const logStart = (await fs.stat(logFile).catch(() => undefined))?.size ?? 0;
  const logFd = openSync(logFile, 'a');
  const child = spawn(binary, args, { stdio: ['ignore', logFd, logFd], detached: false });
  closeSync(logFd);
  let exited: string | undefined;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exited = signal ? `killed by ${signal}` : `exited with code ${code}`;
      resolve();
    }),
  );

  const deadline = Date.now() + (options.readyTimeoutMs ?? 60_000);
  while (!(await isTemporalServing(address))) {
    if (exited || Date.now() > deadline) {
      child.kill('SIGKILL');
      const log = ((await fs.readFile(logFile).catch(() => undefined)) ?? Buffer.alloc(0)).subarray(logStart).toString('utf8');
      // The cause is the first error line; a panic that follows it fills the tail with its stack.
      const firstError = log.split('\n').find((line) => /level=ERROR|^panic:/.test(line));
      const tail = log.trim().split('\n').slice(-5).join('\n');
      const message = `Temporal dev server on ${address} ${exited ?? 'did not become ready in time'}.${firstError ? ` First error: ${firstError}` : ''} Last log lines (${logFile}):\n${tail}`;
      throw exited && /address already in use/.test(log) ? new DevServerPortTakenError(message) : new Error(message);
    }
    // Often: the server is up ~0.2 s after the spawn, and a probe of a closed port fails at once.
    await sleep(50);
  }

  const stopWith = async (signal: NodeJS.Signals) => {
    if (exited) return;
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exit;
    clearTimeout(timer);
  };
  return {
    address,
    namespace: 'default',
    ...(options.uiPort ? { uiUrl: `http://${ip}:${options.uiPort}` } : {}),
    dbFile,
    logFile,
    process: child,
    // The frontend drains for at least 1 s (server 1.29: max(1s, frontend.shutdownDrainDuration)),
    // held open by the server's own system workers' long polls; every test file paid it.
    stop: () => stopWith(dbFile ? 'SIGTERM' : 'SIGKILL'),
    kill: () => stopWith('SIGKILL'),
  };
}

/** True when a Temporal frontend answers at `address`. */
export async function isTemporalServing(address: string, timeoutMs = 2_000): Promise<boolean> {
  // A cheap TCP probe first: Connection.connect retries for a long time against a closed port.
  if (!(await isPortOpen(address, timeoutMs))) return false;
  let connection: Connection | undefined;
  try {
    connection = await Connection.connect({ address, connectTimeout: timeoutMs });
    await connection.workflowService.getSystemInfo({});
    return true;
  } catch {
    return false;
  } finally {
    await connection?.close().catch(() => undefined);
  }
}

/** True when something accepts TCP connections at `address` (a Temporal server, one still starting, or anything else). */
export async function isPortOpen(address: string, timeoutMs = 2_000): Promise<boolean> {
  const [host, portText] = splitAddress(address);
  return new Promise<boolean>((resolve) => {
    const socket = net.connect({ host, port: Number(portText) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * Ports the kernel never hands out for outgoing connections on Linux (from 32768), macOS or Windows
 * (from 49152). A port asked of the kernel (port 0) comes from that ephemeral range, where every
 * client socket of every other process takes ports too: under load one took a chosen port before
 * the server bound it. Below it, only another server that picks the same random port can.
 */
const QUIET_PORTS = { from: 20_000, to: 32_000 } as const;

export async function freePort(ip = '127.0.0.1'): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const candidate = QUIET_PORTS.from + Math.floor(Math.random() * (QUIET_PORTS.to - QUIET_PORTS.from));
    if (await canBind(candidate, ip)) return candidate;
  }
  return listenOn(0, ip);
}

async function canBind(port: number, ip: string): Promise<boolean> {
  return listenOn(port, ip).then(
    () => true,
    () => false,
  );
}

function listenOn(port: number, ip: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(port, ip, () => {
      const bound = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(bound));
    });
  });
}

function splitAddress(address: string): [string, string] {
  const i = address.lastIndexOf(':');
  return [address.slice(0, i), address.slice(i + 1)];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
