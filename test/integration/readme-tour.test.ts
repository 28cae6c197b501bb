/**
 * Issue 27 item 6: the README's tour runs as written in a fresh clone. The commands are read from the
 * tour's ```bash blocks, checked against the list below (so the README and this test change
 * together), and run in order through bash in a copy of the repository's files as a clone has them
 * (tracked and not ignored: no dist/, no .durable-agent/ state), with the real CLI and the real
 * embedded dev server. Two things differ from a person's first run, neither in the commands: the
 * packages are linked from this checkout (a fresh `npm ci` takes minutes), and the Temporal CLI is
 * placed in the clone's cache folder (.durable-agent/bin) where the first run would download it.
 * TEMPORAL_ADDRESS points every command, `dev` and `demo` included, at a free port rather than
 * 7233, which the machine may share.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../src/server/dev-server';
import { provisionTemporalCli } from '../../src/server/temporal-cli';

const ROOT = path.resolve(__dirname, '../..');
jest.setTimeout(15 * 60_000);

/** The tour's commands, continuation lines joined, in README order. */
function tourCommands(readme: string): string[] {
  const start = readme.indexOf('## A 5-minute tour');
  const end = readme.indexOf('\n## ', start + 1);
  const tour = readme.slice(start, end);
  const commands: string[] = [];
  for (const block of tour.matchAll(/```bash\n([\s\S]*?)```/g)) {
    const joined = block[1]!.replace(/\\\n\s*/g, '');
    for (const line of joined.split('\n').map((l) => l.trim())) if (line && !line.startsWith('#')) commands.push(line);
  }
  return commands;
}

const TOUR = [
  'npm run demo',
  'npx durable-agent dev',
  `npx durable-agent start "Summarise C-9921's shipped orders" --agent demo --id tour-orders --script src/demo/demo-script.json --watch`,
  'npx durable-agent status tour-orders',
  'npx durable-agent result tour-orders --json',
  'npx durable-agent list --status completed',
  `.durable-agent/bin/temporal workflow list --query "AgentStatus='completed'"`,
  'npx durable-agent start "Delete inbox/customer-note.txt" --agent demo --id tour-delete --script test/fixtures/delete-note.json',
  'npx durable-agent list --status awaiting_approval',
  'npx durable-agent approve tour-delete --as ana',
  'npx durable-agent watch tour-delete',
  'npx durable-agent dev --orders-fault slow:always',
  `npx durable-agent start "Summarise C-9921's shipped orders" --agent demo --id tour-crash --script src/demo/demo-script.json`,
  'npx durable-agent dev',
  'npx durable-agent result tour-crash',
  'npx durable-agent dev --orders-fault truncate:always',
  `npx durable-agent start "Summarise C-9921's shipped orders" --agent demo --id tour-fault --script src/demo/demo-script.json --watch`,
];

let clone: string;
let env: NodeJS.ProcessEnv;
let dev: ChildProcess | undefined;

/** The files a clone has: tracked, plus new ones not ignored; timestamps kept. */
function copyAsClone(target: string): void {
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
  for (const file of files) {
    const from = path.join(ROOT, file);
    let stat;
    try {
      stat = statSync(from);
    } catch {
      continue; // deleted in the working tree, not yet committed
    }
    if (!stat.isFile()) continue;
    mkdirSync(path.dirname(path.join(target, file)), { recursive: true });
    copyFileSync(from, path.join(target, file));
    utimesSync(path.join(target, file), stat.atime, stat.mtime);
  }
}

/**
 * node_modules as a folder of links to this checkout's packages: `npm ci`, were it ever run there,
 * removes the links and never the packages. Its lock marker is newer than the lock, as after an install.
 */
function linkPackages(target: string): void {
  const modules = path.join(target, 'node_modules');
  mkdirSync(modules);
  for (const entry of readdirSync(path.join(ROOT, 'node_modules'))) {
    if (entry === '.package-lock.json') continue;
    symlinkSync(path.join(ROOT, 'node_modules', entry), path.join(modules, entry));
  }
  writeFileSync(path.join(modules, '.package-lock.json'), readFileSync(path.join(ROOT, 'node_modules/.package-lock.json')));
}

interface Run {
  code: number | null;
  out: string;
  err: string;
}

function bash(command: string, timeoutMs = 5 * 60_000): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', command], { cwd: clone, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} did not finish in ${timeoutMs} ms:\n${out.slice(-3_000)}\n${err.slice(-3_000)}`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

/** The standard output of a command that must succeed. */
async function ok(command: string): Promise<string> {
  const run = await bash(command);
  if (run.code !== 0) throw new Error(`${command} exited with ${run.code}:\n${run.out.slice(-3_000)}\n${run.err.slice(-3_000)}\n--- dev ---\n${devOutput.slice(-3_000)}`);
  return run.out;
}

let devOutput = '';

/** `dev` as the first terminal runs it: in the background until it says it is ready. */
async function startDev(command: string): Promise<void> {
  // Its own process group, as a terminal's foreground job: Ctrl-C and kill reach npx, the CLI and the server it started.
  const child = spawn('bash', ['-c', command], { cwd: clone, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  dev = child;
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const seen = (d: Buffer) => {
      out += d;
      devOutput += d;
      if (out.includes('Ready.')) resolve();
    };
    child.stdout!.on('data', seen);
    child.stderr!.on('data', seen);
    child.once('exit', (code) => reject(new Error(`${command} exited with ${code} before it was ready:\n${out.slice(-3_000)}`)));
  });
}

async function stopDev(signal: 'SIGINT' | 'SIGKILL'): Promise<void> {
  const child = dev;
  dev = undefined;
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  process.kill(-child.pid!, signal);
  await exited;
  if (signal === 'SIGINT') await groupGone(child.pid!);
}

/** Until no process of the group is left (npx's children exit after the shell that started them). */
async function groupGone(pgid: number): Promise<void> {
  // Checked often: a signal to a live group costs nothing, and the next step waits on this.
  for (let i = 0; i < 600; i++) {
    try {
      process.kill(-pgid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  process.kill(-pgid, 'SIGKILL');
}

async function until(what: string, probe: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    // Each probe is itself a CLI command (a second or more): no need to rest long between them.
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  clone = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'durable-agent-tour-')));
  copyAsClone(clone);
  linkPackages(clone);
  mkdirSync(path.join(clone, '.durable-agent/bin'), { recursive: true });
  symlinkSync(await provisionTemporalCli(), path.join(clone, '.durable-agent/bin/temporal'));
  // A port whose Web UI port (+1000) is free too: `dev` serves both.
  let port = await freePort();
  while (port > 64_000) port = await freePort();
  const plain: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (key.toLowerCase().startsWith('npm_') || key.startsWith('DURABLE_AGENT_') || key.startsWith('TEMPORAL_') || key === 'NODE_OPTIONS' || key === 'INIT_CWD') continue;
    plain[key] = value;
  }
  env = { ...plain, TEMPORAL_ADDRESS: `127.0.0.1:${port}`, ANTHROPIC_API_KEY: '', DURABLE_AGENT_LOG_LEVEL: 'ERROR' };
}, 5 * 60_000);

afterAll(async () => {
  await stopDev('SIGINT').catch(() => undefined);
  if (clone) {
    rmSync(clone, { recursive: true, force: true });
  }
});

test("the tour's commands in the README are the ones this test runs", () => {
  expect(tourCommands(readFileSync(path.join(ROOT, 'README.md'), 'utf8'))).toEqual(TOUR);
});

test('every command of the tour runs as written in a fresh clone, in order, on the embedded dev server', async () => {
  const [demo, dev1, startOrders, status, result, listCompleted, temporalList, startDelete, listWaiting, approve, watchDelete, devSlow, startCrash, devAgain, resultCrash, devFault, startFault] =
    TOUR as [string, ...string[]] & { length: 17 };

  // 1. The demo: server, worker, task, summary file.
  const demoOut = await ok(demo);
  expect(demoOut).toContain('Total shipped: $492.99 in 3 orders.');
  expect(demoOut).toContain('shipping');

  // 2-3. A server and a worker in the first terminal; a task, and looking at it, from the second.
  await startDev(dev1!);
  expect(await ok(startOrders!)).toContain('started tour-orders');
  expect(await ok(status!)).toContain('completed');
  expect(JSON.parse(await ok(result!))).toMatchObject({ outcome: 'answered', model: 'scripted:demo-script.json' });
  expect(await ok(listCompleted!)).toContain('tour-orders');
  expect(await ok(temporalList!)).toContain('tour-orders');

  // 4. An approval, answered from another terminal.
  expect(await ok(startDelete!)).toContain('started tour-delete');
  await until('the deletion to wait for an approval', async () => (await ok(listWaiting!)).includes('tour-delete'));
  expect(await ok(listWaiting!)).toContain('delete_file');
  await ok(approve!);
  expect(await ok(watchDelete!)).toMatch(/answered/);

  // 5. Ctrl-C, slow orders, a task, kill -9 mid-task, dev again: the task completes.
  await stopDev('SIGINT');
  await startDev(devSlow!);
  expect(await ok(startCrash!)).toContain('started tour-crash');
  await until('the task to be mid-way', async () => JSON.parse(await ok('npx durable-agent status tour-crash --json')).status?.toolCalls.total >= 1);
  const killed = dev!.pid!;
  await stopDev('SIGKILL');
  await groupGone(killed);
  await startDev(devAgain!);
  expect(await ok(resultCrash!)).toContain('totalling $492.99');

  // 6. A truncating orders service: the model is told schema_mismatch.
  await stopDev('SIGINT');
  await startDev(devFault!);
  expect(await ok(startFault!)).toContain('schema_mismatch');
});
