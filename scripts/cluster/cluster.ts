/**
 * The local multi-shard cluster, as one unit: PostgreSQL, Temporal (built from its Go module) on it,
 * the orders service the demo agent calls, and worker processes. `up` brings up whatever is not
 * running, `stop` stops everything it started (recorded by pid in the state file), `status` says what
 * runs. Used by scripts/cluster.ts, the cluster tests and the cluster benchmarks.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { connectClient } from '../../src/client/client-connection';
import { DEFAULT_TASK_QUEUE } from '../../src/protocol/definitions';
import { BLOB_DB, CLUSTER_ADDRESS, CLUSTER_NAMESPACE, CLUSTER_PORTS, DEFAULT_HISTORY_SHARDS, DEFAULT_WORKERS, TEMPORAL_SERVER_VERSION, clusterPaths, pgUrl, type ClusterPaths } from './layout';
import { initPostgres, preparePostgres, startPostgresServer } from './postgres';
import { isRunning, sleep, startDetached, stopProcess, tail, type ManagedProcess } from './processes';
import { ensureTemporalBinaries } from './temporal-build';
import { writeTemporalConfig } from './temporal-config';
import { describeCluster, prepareTemporal, setupSchemas, startTemporalServer } from './temporal-server';

const ROOT = path.resolve(__dirname, '../..');

export interface ClusterState {
  address: string;
  namespace: string;
  taskQueue: string;
  serverVersion: string;
  historyShards: number;
  /** The workers' shared blob store (a database on the cluster's PostgreSQL). */
  blobStore: string;
  ordersUrl: string;
  /** Folders the workers read scripted-model files from (DURABLE_AGENT_SCRIPT_DIRS). */
  scriptDirs: string[];
  schemaVersions: Record<string, string>;
  startedAt: string;
  processes: ManagedProcess[];
}

/** What the database was created with: the shard count can never change for it. */
interface ClusterIdentity {
  historyShards: number;
  serverVersion: string;
}

export interface UpOptions {
  workers?: number;
  /** History shards for a new cluster (refused if it differs from an existing cluster's). */
  shards?: number;
  /** A `worker --agents` module for the cluster's workers. Default: the built-in demo agent. */
  agents?: string;
  taskQueue?: string;
  /** More folders the workers may read scripts from. */
  scriptDirs?: string[];
  log?: (line: string) => void;
  paths?: ClusterPaths;
}

export function readState(paths = clusterPaths()): ClusterState | undefined {
  try {
    return JSON.parse(readFileSync(paths.stateFile, 'utf8')) as ClusterState;
  } catch {
    return undefined;
  }
}

function writeState(paths: ClusterPaths, state: ClusterState): void {
  writeFileSync(paths.stateFile, JSON.stringify(state, null, 2) + '\n');
}

function identityFile(paths: ClusterPaths): string {
  return path.join(paths.root, 'cluster.json');
}

/** True when every process of the recorded cluster is alive. */
export function isClusterRunning(state = readState()): state is ClusterState {
  return !!state && state.processes.length > 0 && state.processes.every(isRunning);
}

/**
 * Brings the cluster up from nothing (or from a stopped one: data survives a stop) and returns its
 * state; returns the running cluster as it is when everything already runs.
 */
export async function up(options: UpOptions = {}): Promise<{ state: ClusterState; started: boolean }> {
  const log = options.log ?? ((line: string) => console.error(line));
  const paths = options.paths ?? clusterPaths();
  const existing = readState(paths);
  if (isClusterRunning(existing)) return { state: existing, started: false };
  if (existing) {
    log('A previous cluster was left half-running; stopping what is left of it first.');
    await stop({ paths, log });
  }
  const shards = options.shards ?? DEFAULT_HISTORY_SHARDS;
  const identity = existsSync(identityFile(paths)) ? (JSON.parse(readFileSync(identityFile(paths), 'utf8')) as ClusterIdentity) : undefined;
  if (identity && options.shards !== undefined && identity.historyShards !== options.shards) {
    throw new Error(
      `This cluster's database was created with ${identity.historyShards} history shards; the count cannot change. Run \`npm run cluster -- reset\` for a new cluster with ${options.shards}.`,
    );
  }
  const historyShards = identity?.historyShards ?? shards;
  for (const dir of [paths.root, paths.pgSocket, paths.logs, paths.scripts, paths.workspace]) mkdirSync(dir, { recursive: true });

  const state: ClusterState = {
    address: CLUSTER_ADDRESS,
    namespace: CLUSTER_NAMESPACE,
    taskQueue: options.taskQueue ?? DEFAULT_TASK_QUEUE,
    serverVersion: TEMPORAL_SERVER_VERSION,
    historyShards,
    blobStore: pgUrl(BLOB_DB),
    ordersUrl: `http://127.0.0.1:${CLUSTER_PORTS.orders}`,
    scriptDirs: [paths.scripts, ...(options.scriptDirs ?? [])],
    schemaVersions: {},
    startedAt: new Date().toISOString(),
    processes: [],
  };
  const started = (p: ManagedProcess) => {
    state.processes.push(p);
    writeState(paths, state);
    return p;
  };
  const alive = (p: ManagedProcess, what: string) => {
    if (!isRunning(p)) throw new Error(`${what} exited during start (log ${p.logFile}):\n${tail(p.logFile)}`);
  };

  try {
    // The Go build is the long pole on a first run: it runs while PostgreSQL is set up.
    const binaries = ensureTemporalBinaries({ buildLog: path.join(paths.logs, 'temporal-build.log'), log });
    binaries.catch(() => undefined);

    await initPostgres(paths, log);
    const postgres = started(startPostgresServer(paths));
    await preparePostgres(paths, postgres);
    log(`PostgreSQL on 127.0.0.1:${CLUSTER_PORTS.postgres} (data ${paths.pgData}).`);

    const bins = await binaries;
    state.schemaVersions = await setupSchemas(bins, log);
    writeFileSync(identityFile(paths), JSON.stringify({ historyShards, serverVersion: bins.version } satisfies ClusterIdentity, null, 2) + '\n');
    writeTemporalConfig(paths, historyShards);
    const temporal = started(startTemporalServer(paths, bins));
    await prepareTemporal(temporal, () => isRunning(temporal), log);
    const info = await describeCluster();
    if (info.historyShardCount !== historyShards) throw new Error(`The server reports ${info.historyShardCount} history shards, expected ${historyShards}`);
    log(`Temporal ${info.serverVersion} on ${CLUSTER_ADDRESS}: ${info.historyShardCount} history shards, store ${info.persistenceStore}, visibility ${info.visibilityStore}.`);

    const orders = started(
      startDetached('orders', process.execPath, ['--require', 'tsx/cjs', path.join(__dirname, 'orders-process.ts'), String(CLUSTER_PORTS.orders)], {
        logFile: path.join(paths.logs, 'orders.log'),
        cwd: ROOT,
        marker: 'orders-process.ts',
      }),
    );
    const workerCount = options.workers ?? DEFAULT_WORKERS;
    for (let i = 1; i <= workerCount; i++) {
      const args = [
        '--require',
        'tsx/cjs',
        path.join(ROOT, 'src/cli/main.ts'),
        'worker',
        '--address',
        CLUSTER_ADDRESS,
        '--namespace',
        CLUSTER_NAMESPACE,
        // Without a queue of its own, each worker serves its agents' queues (where `durable-agent start`
        // sends tasks) and the shared durable-agent queue, whose pollers are counted below.
        ...(options.taskQueue ? ['--task-queue', options.taskQueue] : []),
        '--workspace',
        paths.workspace,
        // The demo agent takes the orders service as a flag; an agents module reads ORDERS_URL (below).
        ...(options.agents ? ['--agents', path.resolve(options.agents)] : ['--orders-url', state.ordersUrl]),
      ];
      started(
        startDetached(`worker-${i}`, process.execPath, args, {
          logFile: path.join(paths.logs, `worker-${i}.log`),
          cwd: ROOT,
          marker: paths.workspace,
          env: {
            ...process.env,
            DURABLE_AGENT_BLOB_STORE: state.blobStore,
            DURABLE_AGENT_SCRIPT_DIRS: state.scriptDirs.join(path.delimiter),
            ORDERS_URL: state.ordersUrl,
          },
        }),
      );
    }
    alive(orders, 'The orders service');
    await waitForPollers(state, workerCount, () => {
      for (const p of state.processes) if (p.name.startsWith('worker-')) alive(p, p.name);
    });
    log(
      `${workerCount} workers polling ${options.taskQueue ? `task queue ${state.taskQueue}` : `their agents' task queues (durable-agent.<agent>) and ${state.taskQueue}`} (blob store: database ${BLOB_DB}; orders ${state.ordersUrl}).`,
    );
    return { state, started: true };
  } catch (err) {
    log(`Start failed; stopping what was started. Logs: ${paths.logs}`);
    await stop({ paths, log: () => undefined });
    throw err;
  }
}

/** Waits until `count` distinct workers poll the task queue for workflow tasks. */
async function waitForPollers(state: ClusterState, count: number, check: () => void, timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const connection = await connectClient({ address: state.address });
  try {
    for (;;) {
      check();
      if ((await pollers(connection, state)) >= count) return;
      if (Date.now() > deadline) throw new Error(`Fewer than ${count} workers poll ${state.taskQueue} after ${timeoutMs / 1000} s`);
      await sleep(1_000);
    }
  } finally {
    await connection.close();
  }
}

async function pollers(connection: Awaited<ReturnType<typeof connectClient>>, state: ClusterState): Promise<number> {
  const answer = await connection.workflowService.describeTaskQueue({
    namespace: state.namespace,
    taskQueue: { name: state.taskQueue },
    taskQueueType: 1, // TASK_QUEUE_TYPE_WORKFLOW
  });
  return new Set((answer.pollers ?? []).map((p) => p.identity)).size;
}

/** Stops every process the state file records, workers first, PostgreSQL last. Data stays. */
export async function stop(options: { paths?: ClusterPaths; log?: (line: string) => void } = {}): Promise<void> {
  const log = options.log ?? ((line: string) => console.error(line));
  const paths = options.paths ?? clusterPaths();
  const state = readState(paths);
  if (!state) {
    log('No cluster is recorded as running.');
    return;
  }
  const order = (p: ManagedProcess) => (p.name.startsWith('worker-') ? 0 : p.name === 'orders' ? 1 : p.name === 'temporal' ? 2 : 3);
  const byOrder = new Map<number, ManagedProcess[]>();
  for (const p of state.processes) byOrder.set(order(p), [...(byOrder.get(order(p)) ?? []), p]);
  for (const rank of [0, 1, 2, 3]) {
    await Promise.all(
      (byOrder.get(rank) ?? []).map(async (p) => {
        // Workers drain in-flight activities on SIGTERM; PostgreSQL's "fast" shutdown is SIGINT.
        const result = await stopProcess(p, p.name === 'postgres' ? 'SIGINT' : 'SIGTERM', p.name.startsWith('worker-') ? 20_000 : 30_000);
        log(`${p.name} (pid ${p.pid}): ${result}`);
      }),
    );
  }
  rmSync(paths.stateFile, { force: true });
}

/** Stops the cluster and deletes its data (database, config, logs). The built binaries stay cached. */
export async function reset(options: { paths?: ClusterPaths; log?: (line: string) => void } = {}): Promise<void> {
  const paths = options.paths ?? clusterPaths();
  await stop(options);
  rmSync(paths.root, { recursive: true, force: true });
}

export interface ClusterStatus {
  running: boolean;
  state?: ClusterState;
  processes: { name: string; pid: number; running: boolean; logFile: string }[];
  server?: Awaited<ReturnType<typeof describeCluster>>;
  workflowPollers?: number;
  error?: string;
}

export async function status(paths = clusterPaths()): Promise<ClusterStatus> {
  const state = readState(paths);
  if (!state) return { running: false, processes: [] };
  const processes = state.processes.map((p) => ({ name: p.name, pid: p.pid, running: isRunning(p), logFile: p.logFile }));
  const result: ClusterStatus = { running: processes.every((p) => p.running), state, processes };
  if (processes.find((p) => p.name === 'temporal')?.running) {
    try {
      result.server = await describeCluster(state.address);
      const connection = await connectClient({ address: state.address, connectTimeout: 5_000 });
      try {
        result.workflowPollers = await pollers(connection, state);
      } finally {
        await connection.close();
      }
    } catch (err) {
      result.error = (err as Error).message;
    }
  }
  return result;
}
