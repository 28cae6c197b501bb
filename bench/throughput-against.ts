/**
 * `npm run bench -- throughput --against REF`: this build and an older one (REF, any commit) in one
 * run, alternating (this, REF, REF, this, ...) so that a busy machine slows both alike, with both
 * cache sizes. Each measurement gets a fresh dev server started by this build (the same settings
 * for both: a SQLite file in WAL mode) and a worker process of its own build
 * (throughput-run.ts, copied into REF's tree). REF is checked out as a git worktree under
 * os.tmpdir(); its node_modules are this checkout's when its lock resolves every package to the same
 * version (a subset of ours: the same code), else installed from its own lock with `npm ci`.
 */
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, lstatSync, mkdirSync, readFileSync, rmSync, symlinkSync, unlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startDevServer } from '../src/server/dev-server';
import type { ThroughputRow } from './throughput';

const ROOT = path.resolve(__dirname, '..');
const RUNNER = 'bench/throughput-run.ts';

export interface Build {
  /** `this` or the commit asked for. */
  label: string;
  commit: string;
  dir: string;
}

export interface AgainstMeasurement extends ThroughputRow {
  build: string;
  round: number;
  /** CPU time of the worker process (all threads) and of the dev server over the run, per task. */
  workerCpuMsPerTask: number;
  serverCpuMsPerTask: number;
  /** 1-minute load average before and after the measurement (2 cores here: above 2 means waiting). */
  loadBefore: number;
  loadAfter: number;
}

export interface AgainstResult {
  measuredAt: string;
  builds: Build[];
  nodeModules: 'linked' | 'npm ci';
  tasks: number;
  rounds: number;
  measurements: AgainstMeasurement[];
}

export interface AgainstOptions {
  ref: string;
  rounds?: number;
  tasks?: number;
  caches?: number[];
  /** A folder for each worker's --cpu-prof profiles (one per thread), when asked. */
  cpuProfDir?: string;
}

function git(args: string[], cwd = ROOT): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();
}

/**
 * True when every package REF's lock resolves is resolved the same (version and integrity) by ours:
 * our node_modules then hold REF's exact dependency code (and some it does not use).
 */
export function lockIsSubset(refLock: string, ourLock: string): boolean {
  const ref = (JSON.parse(refLock) as { packages?: Record<string, { version?: string; integrity?: string }> }).packages ?? {};
  const ours = (JSON.parse(ourLock) as { packages?: Record<string, { version?: string; integrity?: string }> }).packages ?? {};
  return Object.entries(ref).every(([key, pkg]) => key === '' || (ours[key]?.version === pkg.version && ours[key]?.integrity === pkg.integrity));
}

/** REF's tree under os.tmpdir(), with node_modules; removed by the returned function. */
export function checkout(ref: string): { build: Build; nodeModules: AgainstResult['nodeModules']; remove(): void } {
  const commit = git(['rev-parse', '--verify', `${ref}^{commit}`]);
  const dir = path.join(os.tmpdir(), `durable-agent-against-${commit.slice(0, 12)}-${process.pid}`);
  git(['worktree', 'add', '--detach', '--force', dir, commit]);
  const remove = () => {
    // A link to ours is unlinked, never followed; an installed folder is REF's own.
    const modules = path.join(dir, 'node_modules');
    if (existsSync(modules) && lstatSync(modules).isSymbolicLink()) unlinkSync(modules);
    else rmSync(modules, { force: true, recursive: true });
    git(['worktree', 'remove', '--force', dir]);
  };
  try {
    const ourLock = readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8');
    const refLock = readFileSync(path.join(dir, 'package-lock.json'), 'utf8');
    let nodeModules: AgainstResult['nodeModules'] = 'linked';
    if (refLock === ourLock || lockIsSubset(refLock, ourLock)) symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
    else {
      // From the local cache when it has them: the run needs no network for a lock it has installed before.
      execFileSync('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: dir, stdio: 'inherit' });
      nodeModules = 'npm ci';
    }
    // The same runner in both trees (it uses only what both builds have).
    mkdirSync(path.join(dir, 'bench'), { recursive: true });
    copyFileSync(path.join(ROOT, RUNNER), path.join(dir, RUNNER));
    return { build: { label: ref, commit, dir }, nodeModules, remove };
  } catch (err) {
    remove();
    throw err;
  }
}

/** One measurement: a fresh server, a worker process of `build`, N tasks. */
/** A process's CPU seconds so far (user + system), from /proc; 0 where there is none. */
function cpuSecondsOf(pid: number | undefined): number {
  try {
    // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

type OneRun = ThroughputRow & { workerCpuSeconds: number; serverCpuSeconds: number };

async function measureOnce(build: Build, tasks: number, cache: number, home: string, cpuProfDir?: string): Promise<OneRun> {
  const dbDir = path.join(os.tmpdir(), `durable-agent-against-db-${process.pid}`);
  mkdirSync(dbDir, { recursive: true });
  const server = await startDevServer({ dbFile: path.join(dbDir, `temporal-${Date.now()}.db`), logFile: path.join(dbDir, 'server.log') });
  try {
    const profile = cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${path.join(cpuProfDir, `${path.basename(build.dir)}-${cache}`)}`] : [];
    const serverCpuFrom = cpuSecondsOf(server.process.pid);
    const child = spawn(process.execPath, [...profile, '--import', 'tsx', RUNNER, server.address, String(tasks), String(cache)], {
      cwd: build.dir,
      // Each build bundles and stores blobs in a state folder of its own, the same across its rounds.
      env: { ...process.env, DURABLE_AGENT_HOME: home },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    const line = out.split('\n').find((l) => l.startsWith('THROUGHPUT '));
    if (code !== 0 || !line) throw new Error(`${build.label}: the throughput run exited ${code}: ${out.slice(-2000)}`);
    const row = JSON.parse(line.slice('THROUGHPUT '.length)) as ThroughputRow & { workerCpuSeconds: number };
    return { ...row, serverCpuSeconds: Number((cpuSecondsOf(server.process.pid) - serverCpuFrom).toFixed(2)) };
  } finally {
    await server.stop();
    rmSync(dbDir, { recursive: true, force: true });
  }
}

export async function measureAgainst(options: AgainstOptions): Promise<AgainstResult> {
  const rounds = options.rounds ?? 2;
  const tasks = options.tasks ?? 1_000;
  const caches = options.caches ?? [2_000, 200];
  if (caches.some((c) => !Number.isInteger(c) || c < 1)) throw new Error(`--caches takes whole numbers from 1 separated by commas, not ${caches.join(',')}`);
  const ref = checkout(options.ref);
  const homes = path.join(os.tmpdir(), `durable-agent-against-home-${process.pid}`);
  const ours: Build = { label: 'this', commit: git(['rev-parse', 'HEAD']), dir: ROOT };
  const measurements: AgainstMeasurement[] = [];
  try {
    for (let round = 1; round <= rounds; round++) {
      // Odd rounds this build first, even rounds REF first: a trend in the machine's load falls on both.
      const order = round % 2 === 1 ? [ours, ref.build] : [ref.build, ours];
      for (const cache of caches) {
        for (const build of order) {
          const loadBefore = os.loadavg()[0]!;
          const row = await measureOnce(build, tasks, cache, path.join(homes, build === ours ? 'this' : 'ref'), options.cpuProfDir);
          const { workerCpuSeconds, serverCpuSeconds, ...rest } = row;
          const m: AgainstMeasurement = {
            build: build.label,
            round,
            ...rest,
            workerCpuMsPerTask: round2((workerCpuSeconds * 1000) / tasks),
            serverCpuMsPerTask: round2((serverCpuSeconds * 1000) / tasks),
            loadBefore: round2(loadBefore),
            loadAfter: round2(os.loadavg()[0]!),
          };
          measurements.push(m);
          console.log(
            `  round ${round}, ${build.label === 'this' ? 'this build' : build.label}, cache ${cache}: ${m.tasksPerSecond} tasks/s, CPU per task: worker ${m.workerCpuMsPerTask} ms, server ${m.serverCpuMsPerTask} ms (load ${m.loadBefore} -> ${m.loadAfter})`,
          );
        }
      }
    }
  } finally {
    ref.remove();
    rmSync(homes, { recursive: true, force: true });
  }
  return { measuredAt: new Date().toISOString(), builds: [ours, { ...ref.build, dir: '(removed)' }], nodeModules: ref.nodeModules, tasks, rounds, measurements };
}

function round2(n: number): number {
  return Number(n.toFixed(2));
}

/** One row per round and cache size: both builds side by side, the load each ran under. */
export function againstTable(r: AgainstResult): string {
  const [ours, ref] = r.builds as [Build, Build];
  const head = `| round | maxCachedWorkflows | this build (${ours.commit.slice(0, 7)}) tasks/s | ${ref.label} (${ref.commit.slice(0, 7)}) tasks/s | ratio | worker CPU ms/task this; ref | server CPU ms/task this; ref | load avg (1 min) this; ref |`;
  const lines = [head, '|---:|---:|---:|---:|---:|---|---|---|'];
  const caches = [...new Set(r.measurements.map((m) => m.maxCachedWorkflows))];
  for (const cache of caches) {
    for (let round = 1; round <= r.rounds; round++) {
      const a = r.measurements.find((m) => m.round === round && m.maxCachedWorkflows === cache && m.build === 'this');
      const b = r.measurements.find((m) => m.round === round && m.maxCachedWorkflows === cache && m.build !== 'this');
      if (!a || !b) continue;
      lines.push(
        `| ${round} | ${cache} | ${a.tasksPerSecond} | ${b.tasksPerSecond} | x${(a.tasksPerSecond / b.tasksPerSecond).toFixed(2)} | ${a.workerCpuMsPerTask}; ${b.workerCpuMsPerTask} | ${a.serverCpuMsPerTask}; ${b.serverCpuMsPerTask} | ${a.loadBefore}-${a.loadAfter}; ${b.loadBefore}-${b.loadAfter} |`,
      );
    }
  }
  return lines.join('\n');
}
