/**
 * `npm run cluster [-- VERB] [options]`: a real Temporal cluster on this machine, without Docker.
 *   up (default)   PostgreSQL (Debian's package) + Temporal built from its Go module (several
 *                  history shards, schema set up with temporal-sql-tool) + the orders service + two
 *                  `durable-agent worker` processes; stays in the foreground, Ctrl-C stops it all.
 *   up --detach    the same, then returns and leaves it running (`stop` ends it).
 *   status [--json] what runs, the server's shard count, the workers polling.
 *   stop           stops everything `up` started (data stays for the next `up`).
 *   reset          stops it and deletes its data (a new database next time).
 * Options for up: --workers N (default 2), --shards N (new clusters only; default 4),
 *   --agents FILE (a `worker --agents` module), --task-queue Q (default durable-agent).
 * State, data and logs: .durable-agent/cluster/ (DURABLE_AGENT_CLUSTER_DIR overrides).
 */
import { parseArgs } from 'node:util';
import { CLUSTER_PORTS, clusterPaths } from './cluster/layout';
import { isRunning, sleep } from './cluster/processes';
import { readState, reset, status, stop, up, type ClusterState } from './cluster/cluster';

const USAGE = 'usage: npm run cluster -- [up [--detach] [--workers N] [--shards N] [--agents FILE] [--task-queue Q] | status [--json] | stop | reset]';

function positiveInt(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 1024) throw new Error(`--${name} must be an integer from 1 to 1024, got ${value}`);
  return n;
}

function summary(state: ClusterState): string {
  const paths = clusterPaths();
  return [
    '',
    `Temporal cluster ${state.serverVersion} with ${state.historyShards} history shards is up.`,
    `  address      ${state.address} (namespace ${state.namespace}, task queue ${state.taskQueue})`,
    `  PostgreSQL   127.0.0.1:${CLUSTER_PORTS.postgres} (databases temporal, temporal_visibility, durable_agent_blobs)`,
    `  workers      ${state.processes
      .filter((p) => p.name.startsWith('worker-'))
      .map((p) => `${p.name} pid ${p.pid}`)
      .join(', ')}`,
    `  logs         ${paths.logs}`,
    '',
    'Use it:',
    `  TEMPORAL_ADDRESS=${state.address} npx durable-agent start --agent demo --script src/demo/demo-script.json --watch "Summarise the shipped orders of C-9921"`,
    `  TEMPORAL_ADDRESS=${state.address} npx durable-agent list`,
    'Stop it: Ctrl-C here (in the foreground), or `npm run cluster -- stop` from anywhere; `npm run cluster -- status` says what runs.',
  ].join('\n');
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    args: process.argv.slice(2),
    allowPositionals: true,
    options: {
      detach: { type: 'boolean' },
      json: { type: 'boolean' },
      workers: { type: 'string' },
      shards: { type: 'string' },
      agents: { type: 'string' },
      'task-queue': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const verb = positionals[0] ?? 'up';
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (positionals.length > 1) throw new Error(USAGE);
  switch (verb) {
    case 'up':
    case 'start': {
      const workers = positiveInt(values.workers, 'workers');
      const shards = positiveInt(values.shards, 'shards');
      const { state, started } = await up({
        ...(workers ? { workers } : {}),
        ...(shards ? { shards } : {}),
        ...(values.agents ? { agents: values.agents } : {}),
        ...(values['task-queue'] ? { taskQueue: values['task-queue'] } : {}),
      });
      console.log(started ? summary(state) : `${summary(state)}\n(It was already running; nothing was started.)`);
      if (values.detach || verb === 'start' || !started) return 0;
      return foreground(state);
    }
    case 'status': {
      const s = await status();
      if (values.json) {
        console.log(JSON.stringify(s, null, 2));
      } else if (!s.state) {
        console.log('No cluster is running. Start one with `npm run cluster`.');
      } else {
        console.log(`Cluster at ${s.state.address}: ${s.running ? 'running' : 'NOT fully running'} (started ${s.state.startedAt})`);
        if (s.server) console.log(`  server ${s.server.serverVersion}, ${s.server.historyShardCount} history shards, store ${s.server.persistenceStore}, visibility ${s.server.visibilityStore}`);
        if (s.workflowPollers !== undefined) console.log(`  workers seen polling ${s.state.taskQueue} (last few minutes): ${s.workflowPollers}`);
        for (const p of s.processes) console.log(`  ${p.name.padEnd(9)} pid ${String(p.pid).padEnd(8)} ${p.running ? 'running' : 'NOT RUNNING'}  log ${p.logFile}`);
        if (s.error) console.log(`  error: ${s.error}`);
      }
      return s.running ? 0 : 3;
    }
    case 'stop':
      await stop();
      return 0;
    case 'reset':
      await reset();
      console.error(`Deleted ${clusterPaths().root}.`);
      return 0;
    default:
      throw new Error(`unknown verb ${verb}\n${USAGE}`);
  }
}

/** Stays until Ctrl-C (or SIGTERM), then stops everything; says so when one of its processes dies. */
async function foreground(state: ClusterState): Promise<number> {
  let stopping = false;
  const reported = new Set<string>();
  const done = new Promise<void>((resolve) => {
    const onSignal = () => {
      if (stopping) return;
      stopping = true;
      console.error('\nStopping the cluster...');
      void stop().then(resolve, (err) => {
        console.error(err);
        resolve();
      });
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
  const watch = (async () => {
    for (;;) {
      await sleep(2_000);
      if (stopping) return done;
      // Another terminal ran `stop`: nothing left to watch.
      if (!readState()) {
        if (!stopping) console.error('The cluster was stopped from elsewhere.');
        return;
      }
      for (const p of state.processes) {
        if (!stopping && !reported.has(p.name) && !isRunning(p)) {
          reported.add(p.name);
          console.error(`${p.name} (pid ${p.pid}) is no longer running; see ${p.logFile}`);
        }
      }
    }
  })();
  // Either Ctrl-C stopped everything, or another terminal's `stop` did.
  await Promise.race([done, watch]);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
