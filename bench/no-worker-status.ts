/**
 * `status` with no worker (issue 38): how long the view takes once the task's worker was killed a
 * moment ago (the server still lists it as a poller), answered from the search attributes and memo;
 * beside it the same with the worker running (a live query). The CLI rows include the process start
 * (node + tsx, about 1 s on the machine this was measured on).
 */
import { TaskClient } from '../src/client/task-client';
import { answer, callTool, spawnWorker, type Harness } from '../test/support/harness';
import { runCli, sigkill, waitFor } from '../test/support/processes';
import { summarize, type Summary } from './stats';

const ROUNDS = 5;

export interface NoWorkerStatus {
  rounds: number;
  /** TaskClient.view with the worker running: a live status query. */
  viewLiveMs: Summary;
  /** TaskClient.view right after the worker was SIGKILLed: from the memo, no query. */
  viewNoWorkerMs: Summary;
  /** `durable-agent status` right after, process start to exit. */
  cliNoWorkerMs: Summary;
  /** Views right after the kill that were answered from the memo (of all asked). */
  answeredFromMemo: string;
}

export async function measureNoWorkerStatus(h: Harness): Promise<NoWorkerStatus> {
  const client = new TaskClient(h.client.client, h.taskQueue);
  const live: number[] = [];
  const gone: number[] = [];
  const cli: number[] = [];
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
    await client.client.workflow.getHandle(taskId).terminate('bench done');
  }
  return { rounds: ROUNDS, viewLiveMs: summarize(live), viewNoWorkerMs: summarize(gone), cliNoWorkerMs: summarize(cli), answeredFromMemo: `${fromMemo}/${ROUNDS}` };
}

export function noWorkerStatusTable(r: NoWorkerStatus): string {
  const row = (what: string, s: Summary) => `| ${what} | ${s.median} ms | ${s.p95} ms | ${s.n} |`;
  return [
    '| what | median | p95 | n |',
    '|---|---|---|---|',
    row('TaskClient.view with the worker running (live query)', r.viewLiveMs),
    row(`TaskClient.view just after the worker was SIGKILLed (from the memo: ${r.answeredFromMemo}; a 5 s query deadline before)`, r.viewNoWorkerMs),
    row('`durable-agent status` just after, process start to exit', r.cliNoWorkerMs),
  ].join('\n');
}
