/**
 * `status` with no worker (issue 38): how long the view takes once the task's worker was killed a
 * moment ago (the server still lists it as a poller), answered from the search attributes and memo;
 * beside it the same with the worker running (a live query). The CLI rows include the process start:
 * from this checkout the CLI runs its TypeScript through tsx (about 1 s of it on the machine this was
 * measured on); the installed package runs the compiled dist/ with plain Node, which `npm run build`
 * makes and the bench times too.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { TaskClient } from '../src/client/task-client';
import { answer, callTool, spawnWorker, type Harness } from '../test/support/harness';
import { finished, runCli, sigkill, waitFor, type CliRun } from '../test/support/processes';
import { summarize, type Summary } from './stats';

const ROUNDS = 5;

export interface NoWorkerStatus {
  rounds: number;
  /** TaskClient.view with the worker running: a live status query. */
  viewLiveMs: Summary;
  /** TaskClient.view right after the worker was SIGKILLed: from the memo, no query. */
  viewNoWorkerMs: Summary;
  /** `durable-agent status` right after, process start to exit, from this checkout (tsx). */
  cliNoWorkerMs: Summary;
  /** The same from the compiled package (dist/, plain Node), as an installed `durable-agent` runs. */
  builtCliNoWorkerMs: Summary;
  /** Views right after the kill that were answered from the memo (of all asked). */
  answeredFromMemo: string;
}

export async function measureNoWorkerStatus(h: Harness): Promise<NoWorkerStatus> {
  const client = new TaskClient(h.client.client, h.taskQueue);
  const live: number[] = [];
  const gone: number[] = [];
  const cli: number[] = [];
  const builtCli: number[] = [];
  const built = buildPackage();
  let fromMemo = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const worker = spawnWorker(h);
    let stderr = '';
    worker.stderr!.on('data', (d) => (stderr += d));
    await waitFor('the worker', () => (/worker: .* namespace/.test(stderr) ? true : undefined), 60_000);
    const taskId = h.taskId('nows');
    await client.start(
      { agent: 'demo', prompt: 'tidy', model: { provider: 'scripted', script: h.script([callTool('delete_file', { path: 'inbox/customer-note.txt' }), answer('done')]) } },
      { taskId },
    );
    await waitFor('the approval', async () => ((await client.describe(taskId)).waitingFor ? true : undefined));
    let t0 = performance.now();
    const seen = await client.view(taskId);
    live.push(performance.now() - t0);
    if (!seen.status) throw new Error('no live status with the worker running');
    await sigkill(worker);
    t0 = performance.now();
    const view = await client.view(taskId);
    gone.push(performance.now() - t0);
    if (!view.status && view.note?.includes('search attributes and memo')) fromMemo++;
    t0 = performance.now();
    const run = await runCli(['status', taskId, '--address', h.server.address, '--task-queue', h.taskQueue]);
    cli.push(performance.now() - t0);
    if (run.code !== 0) throw new Error(`status exited ${run.code}: ${run.stderr}`);
    t0 = performance.now();
    const fromDist = await runBuiltCli(built, ['status', taskId, '--address', h.server.address, '--task-queue', h.taskQueue]);
    builtCli.push(performance.now() - t0);
    if (fromDist.code !== 0) throw new Error(`status (dist/) exited ${fromDist.code}: ${fromDist.stderr}`);
    await client.client.workflow.getHandle(taskId).terminate('bench done');
  }
  return {
    rounds: ROUNDS,
    viewLiveMs: summarize(live),
    viewNoWorkerMs: summarize(gone),
    cliNoWorkerMs: summarize(cli),
    builtCliNoWorkerMs: summarize(builtCli),
    answeredFromMemo: `${fromMemo}/${ROUNDS}`,
  };
}

export function noWorkerStatusTable(r: NoWorkerStatus): string {
  const row = (what: string, s: Summary) => `| ${what} | ${s.median} ms | ${s.p95} ms | ${s.n} |`;
  return [
    '| what | median | p95 | n |',
    '|---|---|---|---|',
    row('TaskClient.view with the worker running (live query)', r.viewLiveMs),
    row(`TaskClient.view just after the worker was SIGKILLed (from the memo: ${r.answeredFromMemo}; a 5 s query deadline before)`, r.viewNoWorkerMs),
    row('`durable-agent status` just after, process start to exit, from the checkout (tsx)', r.cliNoWorkerMs),
    row('the same from the built package (dist/, plain Node), as an installed `durable-agent` runs', r.builtCliNoWorkerMs),
  ].join('\n');
}

const ROOT = path.resolve(__dirname, '..');

/** `npm run build` (dist/ is ignored by git): the compiled CLI the published package runs. */
function buildPackage(): string {
  execFileSync(process.execPath, [path.join(ROOT, 'scripts/build.mjs')], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  const main = path.join(ROOT, 'dist/cli/main.js');
  if (!existsSync(main)) throw new Error('npm run build wrote no dist/cli/main.js');
  return main;
}

/** The compiled CLI run the way the package's bin runs it when there is no src/ beside it. */
function runBuiltCli(main: string, args: string[]): Promise<CliRun> {
  const child = spawn(process.execPath, ['-e', `require(${JSON.stringify(main)}).main(process.argv.slice(1)).then((code) => process.exit(code))`, ...args], {
    cwd: ROOT,
    env: { ...process.env, DURABLE_AGENT_LOG_LEVEL: 'ERROR' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return finished(child, args, 60_000);
}
