/**
 * Issue 38, "no worker, no server": `status` answers from the search attributes and memo when the
 * task's worker is gone (not after a query's deadline), `worker` and `dev` wait for a server that is
 * starting and end with one line (exit 4) when none comes, and `dev` refuses a port that holds a
 * server it did not start unless --reuse.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { provisionTemporalCli } from '../../src/server/temporal-cli';
import { freePort, startDevServer, type DevServer } from '../../src/server/dev-server';
import { useHarness, answer, callTool, spawnWorker } from '../support/harness';
import { runCli, sigkill, spawnCli, waitFor } from '../support/processes';

const h = useHarness();

const at = () => ['--address', h.server.address, '--task-queue', h.taskQueue];

/** Collects a child's stderr; resolves when `pattern` shows in it. */
function stderrOf(child: ChildProcess) {
  let text = '';
  child.stderr!.on('data', (d) => (text += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { text: () => text, exited, until: (pattern: RegExp, what: string) => waitFor(what, () => (pattern.test(text) ? true : undefined), 60_000) };
}

test('status of a task whose worker was just killed answers from the search attributes and memo, and says so', async () => {
  const worker = spawnWorker(h);
  const log = stderrOf(worker);
  try {
    await log.until(/worker: .* namespace default/, 'the worker to start');
    const taskId = h.taskId('gone');
    const script = h.script([callTool('delete_file', { path: 'inbox/customer-note.txt' }), answer('done')]);
    const started = await runCli(['start', 'tidy up', '--agent', 'demo', '--script', script, '--id', taskId, ...at()]);
    expect(started.code).toBe(0);
    await waitFor('the task to wait for an approval', async () => ((await h.client.describe(taskId)).waitingFor ? true : undefined));
    // The server still lists the killed worker as a poller for minutes: it is its process that is gone.
    await sigkill(worker);

    const status = await runCli(['status', taskId, '--json', ...at()]);
    expect(status.code).toBe(0);
    const view = JSON.parse(status.stdout);
    expect(view.status).toBeUndefined();
    expect(view.summary).toMatchObject({ taskId, executionStatus: 'RUNNING', agentStatus: 'awaiting_approval', waitingFor: expect.stringContaining('delete_file') });
    expect(view.note).toContain(`no worker serves agent "demo" on queue "${h.taskQueue}"`);
    expect(view.note).toContain('Showing the search attributes and memo (no live status)');
    const text = await runCli(['status', taskId, ...at()]);
    expect(text.stdout).toContain('note: no worker serves agent');
  } finally {
    await sigkill(worker);
  }
}, 120_000);

test('a worker started before its server waits for it, a line per attempt, then serves; with no server at all it ends with one line and exit 4', async () => {
  const port = await freePort();
  const address = `127.0.0.1:${port}`;
  const early = spawnCli(['worker', '--address', address, '--task-queue', h.taskQueue, '--workspace', h.workspaceDir, '--orders-url', h.orders.url], { DURABLE_AGENT_SERVER_WAIT: '60' });
  const log = stderrOf(early);
  let server: DevServer | undefined;
  try {
    await log.until(/not reachable yet \(connection refused\); attempt 1/, 'the first retry line');
    server = await startDevServer({ port, dbFile: null, logFile: path.join(h.tmpDir, 'late-server.log') });
    await log.until(new RegExp(`worker: ${address} namespace default`), 'the worker to connect once the server is up');
    expect(log.text()).toMatch(/^worker: Temporal at 127\.0\.0\.1:\d+ not reachable yet \(connection refused\); attempt 1, retrying in 0\.5 s \(gives up 60 s after the first\)$/m);
    expect(log.text()).not.toMatch(/TransportError|\n\s+at /);
  } finally {
    await sigkill(early);
    await server?.stop();
  }

  const never = await runCli(['worker', '--address', address, '--task-queue', h.taskQueue, '--workspace', h.workspaceDir, '--orders-url', h.orders.url], { DURABLE_AGENT_SERVER_WAIT: '2' });
  expect(never.code).toBe(4);
  const lines = never.stderr.trim().split('\n');
  expect(lines.filter((l) => l.includes('not reachable yet')).length).toBeGreaterThanOrEqual(1);
  expect(lines.at(-1)).toMatch(new RegExp(`^durable-agent worker: Cannot reach Temporal at ${address} \\(namespace default\\): connection refused after \\d+ attempts in \\d+ s\\. Start one with`));
  expect(never.stderr).not.toMatch(/TransportError|\n\s+at /);
}, 180_000);

test('dev refuses a port that holds a server it did not start (exit 1, one line), and --reuse with nothing coming ends with exit 4', async () => {
  const port = h.server.address.split(':').pop()!;
  const refused = await runCli(['dev', '--port', port, '--headless', '--workspace', path.join(h.tmpDir, 'dev-refused')]);
  expect(refused.code).toBe(1);
  expect(refused.stderr.trim()).toBe(
    `durable-agent dev: Port ${port} already holds a Temporal server that this command did not start. Use it with --reuse, or choose another port with --port N (README: "Ports").`,
  );

  // Something that listens but never becomes Temporal: --reuse waits (bounded), then one line, exit 4.
  const net = await import('node:net');
  const squatter = net.createServer((socket) => socket.destroy());
  const squatted = await freePort();
  await new Promise<void>((resolve) => squatter.listen(squatted, '127.0.0.1', resolve));
  try {
    const run = await runCli(['dev', '--port', String(squatted), '--reuse', '--headless', '--workspace', path.join(h.tmpDir, 'dev-squat')], { DURABLE_AGENT_SERVER_WAIT: '5' });
    expect(run.code).toBe(4);
    expect(run.stderr).toMatch(/^dev: Temporal at 127\.0\.0\.1:\d+ not reachable yet \(timed out\); attempt 1/m);
    expect(run.stderr.trim().split('\n').at(-1)).toMatch(/^durable-agent dev: Cannot reach Temporal at 127\.0\.0\.1:\d+ \(namespace default\): timed out after \d+ attempts in \d+ s\./);
  } finally {
    await new Promise((resolve) => squatter.close(resolve));
  }
}, 120_000);

test('a server an earlier dev of this folder left running (the dev was SIGKILLed) is taken back without --reuse', async () => {
  const port = await freePort();
  const home = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-dev-home-'));
  const cli = await provisionTemporalCli();
  // A state folder of its own (not the project's database), with the same Temporal CLI.
  const env = { DURABLE_AGENT_HOME: home, DURABLE_AGENT_TEMPORAL_CLI: cli, DURABLE_AGENT_SERVER_WAIT: '30' };
  const args = ['dev', '--port', String(port), '--headless', '--workspace', path.join(home, 'workspace')];
  const first = spawnCli(args, env);
  const firstLog = stderrOf(first);
  let serverPid: number | undefined;
  let second: ChildProcess | undefined;
  try {
    await firstLog.until(/Ready\./, 'the first dev');
    serverPid = (JSON.parse(readFileSync(path.join(home, 'dev-server.json'), 'utf8')) as { pid: number }).pid;
    // SIGKILL of the dev process alone (as `kill -9 PID` in a terminal): its server outlives it.
    await sigkill(first);
    second = spawnCli(args, env);
    const secondLog = stderrOf(second);
    await secondLog.until(/Ready\./, 'the second dev');
    expect(secondLog.text()).toContain(`Temporal: the server on port ${port} is the one an earlier dev here started and left running (server pid ${serverPid})`);
    expect(secondLog.text()).not.toContain('already holds');
  } finally {
    if (second) await sigkill(second);
    await sigkill(first);
    if (serverPid) {
      try {
        process.kill(serverPid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  }
}, 240_000);
