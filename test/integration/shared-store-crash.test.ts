/**
 * Workers on two processes that share only the Temporal server and a PostgreSQL blob store (a real
 * server this test provisions): a long task with 40 KB tool results moves from a worker killed with
 * SIGKILL mid-task to the other and completes, every reference resolved from the shared store.
 */
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { answer, callTool, startHarness, type Harness } from '../support/harness';
import { sigkill, spawnCli, waitFor } from '../support/processes';
import { startPostgres, type PostgresServer } from '../support/postgres';

let h: Harness;
let pg: PostgresServer;
const workers: ChildProcess[] = [];
beforeAll(async () => {
  [h, pg] = await Promise.all([startHarness(), startPostgres({ database: 'blobs' })]);
});
afterAll(async () => {
  await Promise.all(workers.map(sigkill));
  await h?.close();
  await pg?.stop();
});

function sharedStoreWorker(): ChildProcess {
  const child = spawnCli(['worker', '--address', h.server.address, '--task-queue', h.taskQueue, '--agents', path.join(__dirname, '../support/long-agents.ts')], {
    DURABLE_AGENT_BLOB_STORE: pg.url,
    DURABLE_AGENT_SCRIPT_DIRS: h.tmpDir,
    LONG_AGENT_RESULT_CHARS: '40000',
  });
  workers.push(child);
  return child;
}

test('a 150-turn task with 40 KB results survives a SIGKILL of its worker; the other worker, sharing only Temporal and PostgreSQL, finishes it', async () => {
  const script = h.script([...Array.from({ length: 150 }, (_, i) => callTool('big_read', { offset: i })), answer('all pages read')]);
  const taskId = h.taskId('shared-store');
  const first = sharedStoreWorker();
  await h.client.start({ agent: 'long', prompt: 'read every page', model: { provider: 'scripted', script }, budgets: { turns: 200, toolCalls: 200 } }, { taskId });
  await waitFor('turn 40', async () => ((await h.client.status(taskId).catch(() => undefined))?.turn ?? 0) >= 40 || undefined, 120_000);
  expect(await sigkill(first)).toBe('SIGKILL');
  sharedStoreWorker();
  const result = await h.client.result(taskId);
  expect(result).toMatchObject({ outcome: 'answered', text: 'all pages read', turns: 151, toolCalls: 150 });
}, 300_000);
