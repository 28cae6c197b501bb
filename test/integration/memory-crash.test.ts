/**
 * A memory write whose worker is killed with SIGKILL after the write is stored but before the
 * activity reported back runs once: the retry on another worker finds the version by the call's
 * idempotency key and answers the first outcome. The kill is placed at an event, not a window:
 * the test holds a lock on the table of what tasks last read (written right after the version),
 * so the worker stops there with the version stored, and is killed then.
 */
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { Client } from 'pg';
import { PostgresMemoryLog } from '../../src/memory';
import { answer, callTool, parsedResults, startHarness, type Harness } from '../support/harness';
import { sigkill, spawnCli, waitFor } from '../support/processes';
import { startPostgres, type PostgresServer } from '../support/postgres';

let h: Harness;
let pg: PostgresServer;
const workers: ChildProcess[] = [];
jest.setTimeout(180_000);
beforeAll(async () => {
  [h, pg] = await Promise.all([startHarness(), startPostgres({ database: 'memory' })]);
});
afterAll(async () => {
  await Promise.all(workers.map(sigkill));
  await h?.close();
  await pg?.stop();
});

function memoryWorker(): ChildProcess {
  const child = spawnCli(['worker', '--address', h.server.address, '--task-queue', h.taskQueue, '--agents', path.join(__dirname, '../support/memory-agents.ts')], {
    DURABLE_AGENT_BLOB_STORE: pg.url,
    DURABLE_AGENT_SCRIPT_DIRS: h.tmpDir,
  });
  workers.push(child);
  return child;
}

test('a memory write retried after its worker was SIGKILLed with the write stored runs once, and the model is told it succeeded', async () => {
  const log = new PostgresMemoryLog({ url: pg.url });
  const scope = 'agent/rememberer';
  await log.latest(scope); // creates the tables, so the lock below has a table to hold
  const locker = new Client({ connectionString: pg.url });
  await locker.connect();
  await locker.query('BEGIN');
  // Reads of the table go on (ACCESS SHARE); the worker's markSeen after the append waits here.
  await locker.query('LOCK TABLE durable_agent_memory_seen IN EXCLUSIVE MODE');
  try {
    const script = h.script([
      callTool('memory', { command: 'create', path: '/memories/crash.md', file_text: 'written once' }),
      callTool('memory', { command: 'view', path: '/memories/crash.md' }),
      answer('done'),
    ]);
    const taskId = h.taskId('memory-crash');
    const doomed = memoryWorker();
    await h.client.start({ agent: 'rememberer', prompt: 'remember', model: { provider: 'scripted', script } }, { taskId });
    await waitFor('the version stored', async () => ((await log.history(scope, '/memories/crash.md')).length > 0 ? true : undefined), 120_000);
    expect(await sigkill(doomed)).toBe('SIGKILL');
    await locker.query('ROLLBACK');
    memoryWorker();
    const result = await h.client.result(taskId);
    expect(result.outcome).toBe('answered');

    const results = parsedResults(await h.client.transcript(taskId)) as unknown[];
    expect(results[0]).toBe('File created successfully at: /memories/crash.md');
    expect(results[1]).toBe("Here's the content of /memories/crash.md with line numbers:\n     1\twritten once");
    const history = await log.history(scope, '/memories/crash.md');
    expect(history.map((v) => [v.version, v.command])).toEqual([[1, 'create']]);
    // The activity really ran twice: its history shows the retry of the killed attempt.
    const events = (await h.client.history(taskId)).events ?? [];
    const started = events.filter((e) => e.activityTaskStartedEventAttributes).map((e) => e.activityTaskStartedEventAttributes!.attempt);
    expect(started).toContain(2);
  } finally {
    await locker.query('ROLLBACK').catch(() => undefined);
    await locker.end();
    await log.close();
  }
});
