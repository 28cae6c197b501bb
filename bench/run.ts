/**
 * `npm run bench [-- NAME...]`: runs the benchmarks (all, or the named ones) and writes
 * bench/results/ (JSON per benchmark, Markdown tables, and the per-turn plot).
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startHarness, type Harness } from '../test/support/harness';
import { costTable, measureCostOfFailure } from './cost-of-failure';
import { cacheTable, measureConversationCache } from './conversation-cache';
import { cacheResumesTable, measureCacheResumes } from './cache-resumes';
import { clusterTables, measureCluster } from './cluster';
import { clusterRecoveryTable, measureClusterRecovery } from './cluster-recovery';
import { measureFlatness, measureOverhead, peerVersions } from './overhead';
import { lineChartSvg } from './plot';
import { measureRecovery, recoveryTable } from './recovery';
import { leversTable, measureLevers } from './levers';
import { measureThroughput, TOOL_CALLS_PER_TASK, WORKER_SETTINGS } from './throughput';
import { type AgainstResult, againstTable, measureAgainst } from './throughput-against';
import { measureWaitingMemory } from './waiting-memory';
import { decisionTable, measureDecisionCost } from './decisions';
import { measureNoWorkerStatus, noWorkerStatusTable } from './no-worker-status';
import { measureSteering, steeringTable } from './steering';
import { measureStreaming, streamingTable } from './streaming';
import { measureRealSizes, REAL_SIZE_TURNS } from './real-sizes';
import { measureReplay, replayTable } from './replay';
import { measureSubagents, subagentsTable } from './subagents';
import { forkTable, measureFork } from './fork';
import { journalTable, measureJournal } from './journal';
import { familiesTable, measureFamilies } from './families';
import { deployTable, measureDeploy } from './deploy';
import { measureMoveAtContinueAsNew, moveTable } from './deploy-move';
import { DEFAULT_MAX_CACHED_WORKFLOWS } from '../src/worker/create-worker';
import { DEFAULT_SQLITE_PRAGMAS } from '../src/server/dev-server';
import { measureReliability, parseReliabilityArgs } from './reliability';

const out = path.join(__dirname, 'results');
// Recorded with each result: the embedded server's defaults (a SQLite file in WAL mode, normal syncs).
const SQLITE_PRAGMAS = DEFAULT_SQLITE_PRAGMAS;

function save(name: string, data: unknown): void {
  mkdirSync(out, { recursive: true });
  const machine = { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, memoryGb: Math.round(os.totalmem() / 2 ** 30), node: process.version };
  writeFileSync(path.join(out, name), JSON.stringify({ measuredAt: new Date().toISOString(), machine, ...(data as object) }, null, 2) + '\n');
}

/** A dev server with its state in a SQLite file (WAL), as the embedded default keeps it. */
async function withServer<T>(run: (h: Harness) => Promise<T>): Promise<T> {
  const dbDir = path.join(os.tmpdir(), `durable-agent-bench-${process.pid}`);
  mkdirSync(dbDir, { recursive: true });
  const h = await startHarness({ dbFile: path.join(dbDir, `temporal-${Date.now()}.db`) });
  try {
    return await run(h);
  } finally {
    await h.close();
    rmSync(dbDir, { recursive: true, force: true });
  }
}

/** throughput.json holds the plain run's rows and the last comparison with an older build (--against): each run replaces its own part. */
function saveThroughput(part: Record<string, unknown>): void {
  const file = path.join(out, 'throughput.json');
  const previous = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>) : {};
  // The rows keep their own measuredAt (previous's overrides save's); a comparison carries its own.
  if ('against' in part) save('throughput.json', { ...previous, ...part });
  else save('throughput.json', { ...part, ...(previous.against ? { against: previous.against } : {}) });
}

/** `--name value` options (today only the throughput bench's); the rest are benchmark names. */
const flags = new Map<string, string>();
/** Options that take no value. */
const BOOLEAN_FLAGS = ['--quick', '--parallel', '--sequential'];

function positive(name: string): number {
  const n = Number(flags.get(name));
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} takes a whole number from 1, not ${flags.get(name)}`);
  return n;
}

const BENCHMARKS: Record<string, () => Promise<void>> = {
  overhead: () =>
    withServer(async (h) => {
      console.log('\nOverhead per turn (one zero-latency model call + one zero-latency tool call):');
      const inMemory = await startHarness();
      const overhead = await measureOverhead(h, inMemory).finally(() => inMemory.close());
      for (const [who, s] of Object.entries(overhead.perTurnMs)) console.log(`  ${who}: median ${s.median} ms, p95 ${s.p95} ms (n=${s.n})`);
      console.log(`  one more tool call in a turn: ${overhead.perToolCallMs} ms`);
      if (overhead.peerUnavailable) console.log(`  langgraph-sqlite: not measured (${overhead.peerUnavailable})`);
      console.log('\nFlatness (500-turn tasks, 3 runs each):');
      const flatness = await measureFlatness(h);
      for (const r of flatness.rows) console.log(`  ${r.contestant}: turns 1-20 ${r.early} ms, last 20 ${r.late} ms (x${r.ratio}; runs ${r.ratios.join(', ')})`);
      save('overhead.json', {
        sqlitePragmas: SQLITE_PRAGMAS,
        peer: peerVersions(),
        overhead,
        flatness: { turns: flatness.turns, runs: flatness.runs, rows: flatness.rows },
      });
      save('flatness-series.json', { series: flatness.series });
      const colors: Record<string, string> = { 'durable-agent': '#1f6feb', 'langgraph-sqlite': '#d4622a', floor: '#2da44e' };
      writeFileSync(
        path.join(out, 'per-turn.svg'),
        lineChartSvg(
          `Per-turn time over one ${flatness.turns}-turn task (rolling median of 10 turns)`,
          flatness.series.map((s) => ({ label: s.contestant, color: colors[s.contestant] ?? '#555', values: s.turnMs })),
        ),
      );
    }),
  levers: () =>
    withServer(async (h) => {
      console.log('\nLevers on the overhead per turn (each variant, the floor, the LangGraph and DBOS peers, rounds alternating):');
      // The same kind of server as the default one (a SQLite file in WAL mode), eager dispatch off.
      const dbFile = path.join(os.tmpdir(), `durable-agent-bench-eager-off-${process.pid}.db`);
      const eagerOff = await startHarness({ dbFile, dynamicConfig: { 'system.enableActivityEagerExecution': false } });
      const loadBefore = os.loadavg();
      const r = await measureLevers({ default: h, 'eager off': eagerOff }).finally(async () => {
        await eagerOff.close();
        for (const suffix of ['', '-wal', '-shm']) rmSync(dbFile + suffix, { force: true });
      });
      save('levers.json', { sqlitePragmas: SQLITE_PRAGMAS, loadAverage: { before: loadBefore, after: os.loadavg() }, ...r });
      writeFileSync(path.join(out, 'levers.md'), leversTable(r) + '\n');
      console.log(`\nactivities dispatched eagerly: default server ${JSON.stringify(r.eagerDispatch.default)}, eager off ${JSON.stringify(r.eagerDispatch['eager off'])}\n`);
      console.log(leversTable(r));
    }),
  throughput: async () => {
    const against = flags.get('against');
    if (against) {
      console.log(`\nThroughput on one worker, ${flags.get('tasks') ?? 1_000} tasks at once: this build and ${against}, alternating:`);
      const r = await measureAgainst({
        ref: against,
        ...(flags.has('rounds') ? { rounds: positive('rounds') } : {}),
        ...(flags.has('tasks') ? { tasks: positive('tasks') } : {}),
        ...(flags.has('caches') ? { caches: flags.get('caches')!.split(',').map(Number) } : {}),
        ...(flags.has('cpu-prof') ? { cpuProfDir: path.resolve(flags.get('cpu-prof')!) } : {}),
      });
      // The plain run's rows stay beside the comparisons; the last few runs are kept (each says when
      // it was measured, on which commits): one run on a busy machine is one sample.
      const file = path.join(out, 'throughput.json');
      const earlier = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { against?: AgainstResult | AgainstResult[] }).against : undefined;
      const runs = [...(earlier === undefined ? [] : Array.isArray(earlier) ? earlier : [earlier]), r].slice(-4);
      saveThroughput({ against: runs });
      writeFileSync(path.join(out, 'throughput.md'), runs.map((run) => `Measured ${run.measuredAt}, ${run.tasks} tasks at once:\n\n${againstTable(run)}`).join('\n\n') + '\n');
      console.log(`\n${againstTable(r)}`);
      return;
    }
    await withServer(async (h) => {
      console.log(`\nThroughput on one worker (${TOOL_CALLS_PER_TASK} tool calls per task):`);
      // 1,000 running tasks do not fit the default cache of 200: each workflow task then replays its
      // history. The last row shows the same load with a cache that holds them all.
      const rows = [...(await measureThroughput(h)), ...(await measureThroughput(h, [1_000], 2_000))];
      saveThroughput({ sqlitePragmas: SQLITE_PRAGMAS, worker: WORKER_SETTINGS, toolCallsPerTask: TOOL_CALLS_PER_TASK, rows });
    });
  },
  'real-sizes': () =>
    withServer(async (h) => {
      console.log(`\nLong tasks at real sizes (${REAL_SIZE_TURNS} turns, one distinct tool call per turn):`);
      const rows = await measureRealSizes(h);
      save('real-sizes.json', { sqlitePragmas: SQLITE_PRAGMAS, turns: REAL_SIZE_TURNS, rows });
    }),
  recovery: async () => {
    console.log("\nRecovery: SIGKILL of the worker running a tool call -> the retried tool call, and the task's next completed workflow task:");
    const r = await measureRecovery();
    save('recovery.json', r);
    writeFileSync(path.join(out, 'recovery.md'), recoveryTable(r) + '\n');
    console.log(`\nheartbeat timeout ${r.heartbeatTimeoutMs} ms; target for the median SIGKILL -> next workflow task: under ${r.targetMs} ms\n`);
    console.log(recoveryTable(r));
  },
  decisions: async () => {
    const h = await startHarness();
    const cost = await measureDecisionCost(h).finally(() => h.close());
    save('decisions.json', cost);
    writeFileSync(path.join(out, 'decisions.md'), decisionTable(cost) + '\n');
    console.log('\nA decision made while no worker runs (issue 28):\n');
    console.log(decisionTable(cost));
  },
  'no-worker-status': async () => {
    const h = await startHarness();
    const r = await measureNoWorkerStatus(h).finally(() => h.close());
    save('no-worker-status.json', r);
    writeFileSync(path.join(out, 'no-worker-status.md'), noWorkerStatusTable(r) + '\n');
    console.log('\n`status` with no worker (issue 38):\n');
    console.log(noWorkerStatusTable(r));
  },
  steering: () =>
    withServer(async (h) => {
      const r = await measureSteering(h);
      save('steering.json', r);
      writeFileSync(path.join(out, 'steering.md'), steeringTable(r) + '\n');
      console.log('\nSteering and schedules (issue 26):\n');
      console.log(steeringTable(r));
    }),
  streaming: () =>
    withServer(async (h) => {
      const r = await measureStreaming(h);
      save('streaming.json', r);
      writeFileSync(path.join(out, 'streaming.md'), streamingTable(r) + '\n');
      console.log('\nLive output: the API writes a token -> a subscriber has it:\n');
      console.log(streamingTable(r));
    }),
  memory: async () => {
    console.log('\nWorker memory with tasks waiting for approval:');
    const rows = await measureWaitingMemory([0, 1_000, 10_000]);
    save('waiting-memory.json', { maxCachedWorkflows: DEFAULT_MAX_CACHED_WORKFLOWS, rows });
  },
  cost: async () => {
    const h = await startHarness();
    const rows = await measureCostOfFailure(h).finally(() => h.close());
    save('cost-of-failure.json', { rows });
    writeFileSync(path.join(out, 'cost-of-failure.md'), costTable(rows) + '\n');
    console.log('\nCost of failure (same model, same faults; tool executions = requests that reached the service):\n');
    console.log(costTable(rows));
  },
  replay: async () => {
    const h = await startHarness();
    const r = await measureReplay(h).finally(() => h.close());
    save('replay.json', r);
    writeFileSync(path.join(out, 'replay.md'), replayTable(r) + '\n');
    console.log('\nReplay of a recorded task, every tool answered from the recording (issue 25):\n');
    console.log(replayTable(r));
  },
  fork: () =>
    withServer(async (h) => {
      console.log('\nFork at turn 500 of a 1,000-turn task, and what keeping every turn forkable costs (issue 25):\n');
      const r = await measureFork(h);
      save('fork.json', r);
      writeFileSync(path.join(out, 'fork.md'), forkTable(r) + '\n');
      console.log(forkTable(r));
    }),
  families: async () => {
    const sequences = flags.has('sequences') ? positive('sequences') : 200;
    // Fresh seeds by default (the test lanes run fixed ones); --first-seed replays a range.
    const firstSeed = flags.has('first-seed') ? positive('first-seed') : 1_000 + Math.floor(Math.random() * 1_000_000);
    console.log(`\nRandom task families, ${sequences} sequences from seed ${firstSeed} on each store (issue 47):\n`);
    const r = await measureFamilies(sequences, firstSeed);
    save('families.json', r);
    writeFileSync(path.join(out, 'families.md'), familiesTable(r) + '\n');
    console.log(familiesTable(r));
    if (r.results.some((s) => s.repeatsWithoutPerson > 0)) process.exitCode = 1;
  },
  journal: async () => {
    console.log('\nThe family effect journal: checking a write against 10,000 records (issue 35):\n');
    const r = await measureJournal();
    save('journal.json', r);
    writeFileSync(path.join(out, 'journal.md'), journalTable(r) + '\n');
    console.log(journalTable(r));
  },
  deploy: () =>
    withServer(async (h) => {
      console.log('\nRolling out a build: deploy check of 100 histories, promote to a task on the new build (issue 36):\n');
      const r = await measureDeploy(h);
      const move = await measureMoveAtContinueAsNew();
      save('deploy.json', { ...r, moveAtContinueAsNew: move });
      writeFileSync(path.join(out, 'deploy.md'), `${deployTable(r)}\n\n${moveTable(move)}\n`);
      console.log(`${deployTable(r)}\n\n${moveTable(move)}`);
    }),
  // Recovery from a SIGKILL with a standby worker on the cluster of `npm run cluster`, beside the dev server.
  'cluster-recovery': async () => {
    const r = await measureClusterRecovery();
    save('cluster-recovery.json', r);
    writeFileSync(path.join(out, 'cluster-recovery.md'), clusterRecoveryTable(r) + '\n');
    console.log(`\n${clusterRecoveryTable(r)}`);
  },
  // The multi-shard cluster of `npm run cluster` beside the dev server (see docs/cluster.md).
  cluster: async () => {
    console.log('\nCluster (4 shards, PostgreSQL) vs dev server, two worker processes each:');
    const r = await measureCluster();
    save('cluster.json', r);
    writeFileSync(path.join(out, 'cluster.md'), clusterTables(r) + '\n');
    console.log(`\n${clusterTables(r)}`);
  },
  subagents: () =>
    withServer(async (h) => {
      const r = await measureSubagents(h, () => os.loadavg());
      save('subagents.json', { sqlitePragmas: SQLITE_PRAGMAS, ...r });
      writeFileSync(path.join(out, 'subagents.md'), subagentsTable(r) + '\n');
      console.log('\nDelegation per turn: a lead with 10 parallel children of 20 turns vs a single task (issue 26):\n');
      console.log(subagentsTable(r));
    }),
  // Tasks under faults and kills, engine beside engine (issue 39): `-- reliability --quick` for the 5-task, k = 2 variant.
  reliability: () => measureReliability(parseReliabilityArgs(process.argv.slice(2)), out, path.join(__dirname, '..', 'docs', 'images')),
  caching: async () => {
    const h = await startHarness();
    const rows = await measureConversationCache(h).finally(() => h.close());
    save('conversation-cache.json', { rows });
    writeFileSync(path.join(out, 'conversation-cache.md'), cacheTable(rows) + '\n');
    console.log('\nWhat a long Claude task costs with and without the conversation cache (strict fake, list prices):\n');
    console.log(cacheTable(rows));
  },
  'cache-resumes': () =>
    withServer(async (h) => {
      const r = await measureCacheResumes(h);
      save('cache-resumes.json', r);
      writeFileSync(path.join(out, 'cache-resumes.md'), cacheResumesTable(r) + '\n');
      console.log('\nThe prompt cache across resumes: cache-read share after each kind of resume vs uninterrupted (issue 39):\n');
      console.log(cacheResumesTable(r));
    }),
};

async function main(): Promise<void> {
  // Options belong to the benchmark named before them: `--quick` and the like alone, the others with a value (`--engines a,b`, `--against REF`).
  const wanted: string[] = [];
  const args = process.argv.slice(2);
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith('--')) wanted.push(arg);
    else if (BOOLEAN_FLAGS.includes(arg)) flags.set(arg.slice(2), 'true');
    else if (args[i + 1] === undefined || args[i + 1]!.startsWith('--')) throw new Error(`${arg} needs a value`);
    else flags.set(arg.slice(2), args[++i]!);
  }
  const unknown = wanted.filter((name) => !BENCHMARKS[name]);
  if (unknown.length) {
    console.error(`Unknown benchmark(s) ${unknown.join(', ')}; known: ${Object.keys(BENCHMARKS).join(', ')}`);
    process.exit(2);
  }
  // `cluster` and `cluster-recovery` run only when named: they bring up PostgreSQL and a Temporal cluster (a Go build on first use);
  // so does `reliability`, whose full variant runs for hours.
  for (const name of wanted.length ? wanted : Object.keys(BENCHMARKS).filter((n) => n !== 'cluster' && n !== 'cluster-recovery' && n !== 'reliability')) await BENCHMARKS[name]!();
  console.log(`\nResults in ${path.relative(process.cwd(), out)}/`);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : err);
    process.exit(1);
  },
);
