import { createDataConverter } from '../../src/codec';
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { createDemoAgent } from '../../src/demo/demo-agent';
import { TaskClient } from '../../src/client/task-client';
import { DevServerPortTakenError, startDevServer } from '../../src/server/dev-server';
import { provisionTemporalCli } from '../../src/server/temporal-cli';
import { answer, callTool, runTask, startHarness, statusWhen } from '../support/harness';
import { probeEagerDispatch } from '../../bench/eager-probe';
import { listedWhen } from '../support/visibility';
import { restartServer } from '../support/restarted-server';

test('the embedded server keeps tasks in its state file across a restart, and restarts with its search attributes', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-db-'));
  const dbFile = path.join(dir, 'temporal.db');
  const h = await startHarness({ dbFile });
  let taskId: string;
  try {
    ({ taskId } = await runTask(h, { agent: 'demo', prompt: 'remember me', script: h.script([answer('persisted')]) }));
  } finally {
    await h.close();
  }

  // The state file is in write-ahead-log mode unless asked otherwise: SQLite's header says so in
  // bytes 18 and 19 (2 = WAL, 1 = rollback journal).
  const header = readFileSync(dbFile).subarray(0, 20);
  expect([header[18], header[19]]).toEqual([2, 2]);

  const again = await startDevServer({ dbFile, logFile: path.join(dir, 'server2.log') });
  const connection = await Connection.connect({ address: again.address });
  try {
    const client = new TaskClient(new Client({ connection, dataConverter: createDataConverter() }), h.taskQueue);
    expect(await client.describe(taskId)).toMatchObject({ executionStatus: 'COMPLETED', agentStatus: 'completed', agent: 'demo' });
    expect(await client.result(taskId)).toMatchObject({ text: 'persisted' });
    const completed = await listedWhen(
      'the completed task after a restart',
      () => client.list({ status: 'completed' }),
      (rows) => rows.some((t) => t.taskId === taskId),
    );
    expect(completed.map((t) => t.taskId)).toContain(taskId);
  } finally {
    await connection.close();
    await again.stop();
  }
});

test('sqlitePragmas {} leaves the CLI its own rollback journal', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-db-'));
  const dbFile = path.join(dir, 'temporal.db');
  const server = await startDevServer({ dbFile, sqlitePragmas: {}, logFile: path.join(dir, 'server.log') });
  await server.stop();
  const header = readFileSync(dbFile).subarray(0, 20);
  expect([header[18], header[19]]).toEqual([1, 1]);
});

test('stop() kills a server in memory at once (nothing to flush) and stops one on a state file with SIGTERM, which it exits cleanly from', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-stop-'));
  const inMemory = await startDevServer({ dbFile: null, logFile: path.join(dir, 'memory.log') });
  await inMemory.stop();
  expect(inMemory.process.signalCode).toBe('SIGKILL');
  const onFile = await startDevServer({ dbFile: path.join(dir, 'temporal.db'), logFile: path.join(dir, 'file.log') });
  await onFile.stop();
  expect({ code: onFile.process.exitCode, signal: onFile.process.signalCode }).toEqual({ code: 0, signal: null });
});

test('a start on a port where a server already answers is refused at once, not a hang', async () => {
  const h = await startHarness();
  try {
    const port = Number(h.server.address.split(':')[1]);
    await expect(startDevServer({ port, dbFile: null, logFile: path.join(h.tmpDir, 'clash.log') })).rejects.toThrow(/already answers on 127\.0\.0\.1:/);
  } finally {
    await h.close();
  }
});

test('a port that something else holds (not Temporal) fails the start with the cause named, not only the panic that follows it', async () => {
  const net = await import('node:net');
  const squatter = net.createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
  const port = (squatter.address() as import('node:net').AddressInfo).port;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-port-'));
  try {
    const logFile = path.join(dir, 'server.log');
    // An earlier start's lines in the same log are not this one's cause.
    writeFileSync(logFile, 'time=earlier level=ERROR msg="an older start failed otherwise"\n');
    const failed = startDevServer({ port, dbFile: null, logFile });
    await expect(failed).rejects.toThrow(/exited with code \d+\. First error: .*address already in use/);
    await expect(failed).rejects.toBeInstanceOf(DevServerPortTakenError);
    await expect(failed).rejects.not.toThrow(/an older start/);
  } finally {
    await new Promise((resolve) => squatter.close(resolve));
  }
});

describe('provisioning the Temporal CLI', () => {
  const saved = process.env.DURABLE_AGENT_TEMPORAL_CLI;
  afterEach(() => {
    if (saved === undefined) delete process.env.DURABLE_AGENT_TEMPORAL_CLI;
    else process.env.DURABLE_AGENT_TEMPORAL_CLI = saved;
  });

  test('a binary already in the cache folder is reused without downloading or building', async () => {
    delete process.env.DURABLE_AGENT_TEMPORAL_CLI;
    const cacheDir = mkdtempSync(path.join(os.tmpdir(), 'temporal-cache-'));
    const cached = path.join(cacheDir, 'temporal');
    writeFileSync(cached, '#!/bin/sh\necho cached\n');
    chmodSync(cached, 0o755);
    const lines: string[] = [];
    expect(await provisionTemporalCli({ cacheDir, ignorePath: true, log: (l) => lines.push(l) })).toBe(cached);
    expect(lines).toEqual([]);
  });

  test('DURABLE_AGENT_TEMPORAL_CLI naming a missing file is an error, not a silent fallback', async () => {
    process.env.DURABLE_AGENT_TEMPORAL_CLI = '/nonexistent/temporal';
    await expect(provisionTemporalCli()).rejects.toThrow('DURABLE_AGENT_TEMPORAL_CLI=/nonexistent/temporal is not an executable file');
  });
});

test('a pending approval survives a restart of the embedded server on the same state file', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-restart-'));
  const dbFile = path.join(dir, 'temporal.db');
  const h = await startHarness({ dbFile });
  const taskId = h.taskId('restart');
  writeFileSync(path.join(h.workspaceDir, 'victim.txt'), 'x');
  try {
    const worker = await h.worker();
    await worker.runUntil(async () => {
      const script = h.script([callTool('delete_file', { path: 'victim.txt' }), answer('deleted after the restart')]);
      await h.client.start({ agent: 'demo', prompt: 'x', model: { provider: 'scripted', script } }, { taskId });
      await statusWhen(h, taskId, (s) => s.agentStatus === 'awaiting_approval');
    });
  } finally {
    await h.close();
  }

  const restarted = await restartServer(h, dbFile, dir);
  try {
    const { client } = restarted;
    const worker = await restarted.worker([createDemoAgent({ workspaceDir: h.workspaceDir, ordersUrl: 'http://127.0.0.1:9' })]);
    await worker.runUntil(async () => {
      const [approval] = (await client.status(taskId)).pendingApprovals;
      expect(approval).toMatchObject({ tool: 'delete_file', input: { path: 'victim.txt' } });
      await client.approve(taskId, { approvalId: approval!.id, by: 'ana' });
      expect(await client.result(taskId)).toMatchObject({ text: 'deleted after the restart' });
    });
    expect(existsSync(path.join(h.workspaceDir, 'victim.txt'))).toBe(false);
  } finally {
    await restarted.close();
  }
});

test('the embedded server killed mid-task and started again on the same state file: the task continues and completes', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-midtask-'));
  const dbFile = path.join(dir, 'temporal.db');
  const h = await startHarness({ dbFile });
  const port = Number(h.server.address.split(':')[1]);
  let restarted: Awaited<ReturnType<typeof startDevServer>> | undefined;
  try {
    h.orders.inject({ kind: 'slow', delayMs: 3_000 }, 1);
    const script = h.script([
      callTool('write_file', { path: 'before-restart.txt', content: '1' }),
      callTool('search_orders', { customer_id: 'C-1001' }),
      callTool('write_file', { path: 'after-restart.txt', content: '2' }),
      answer('made it through the restart'),
    ]);
    const taskId = h.taskId('midtask');
    const worker = await h.worker();
    const result = await worker.runUntil(async () => {
      await h.client.start({ agent: 'demo', prompt: 'x', model: { provider: 'scripted', script } }, { taskId });
      await statusWhen(h, taskId, (s) => s.events.some((e) => e.kind === 'tool_called' && e.tool === 'search_orders'));
      await h.server.kill();
      restarted = await startDevServer({ port, dbFile, logFile: path.join(dir, 'restarted.log') });
      return h.client.result(taskId);
    });
    expect(result).toMatchObject({ outcome: 'answered', text: 'made it through the restart', toolCalls: 3 });
    expect(existsSync(path.join(h.workspaceDir, 'after-restart.txt'))).toBe(true);
  } finally {
    await h.close();
    await restarted?.stop();
  }
});

test('the embedded server hands activities to the worker eagerly, in the workflow task response (a server with it off makes the worker poll for each)', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-eager-'));
  // Counted by the SDK itself: its activity_task_received metric labels each task eager or not.
  const embedded = await startDevServer({ dbFile: null, logFile: path.join(dir, 'embedded.log') });
  try {
    const counts = await probeEagerDispatch(embedded.address, 3);
    // 4 model calls, 3 tool calls: each scheduled by a workflow task while a slot was free
    // (describeAgent runs within the first workflow task, a local activity).
    expect(counts).toEqual({ eager: 7, polled: 0 });
  } finally {
    await embedded.stop();
  }
  const off = await startDevServer({ dbFile: null, logFile: path.join(dir, 'off.log'), dynamicConfig: { 'system.enableActivityEagerExecution': false } });
  try {
    expect(await probeEagerDispatch(off.address, 3)).toEqual({ eager: 0, polled: 7 });
  } finally {
    await off.stop();
  }
}, 180_000);
