/**
 * `durable-agent purge` against a real dev server and a blob folder: closed tasks' blobs go, a
 * running task's stay, other tasks (also those whose id starts with the purged one's and a `/`) are
 * untouched, exit codes say what happened.
 */
import { runMain, type CliOutput } from '../support/cli-in-process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LocalBlobStore } from '../../src/blobs/local-blob-store';
import { main } from '../../src/cli/main';
import { EXIT } from '../../src/cli/cli-error';
import { parseClosedBefore } from '../../src/cli/commands/purge';
import { useHarness } from '../support/harness';
import { listedWhen } from '../support/visibility';

const h = useHarness();
let dir: string;
let store: LocalBlobStore;
beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-purge-'));
  store = new LocalBlobStore(dir);
});
afterAll(async () => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Runs the CLI in this process; returns its exit code and what it printed. */
function cli(...args: string[]): Promise<CliOutput> {
  return runMain(['purge', ...args, '--address', h.server.address, '--blob-store', `file:${dir}`]);
}

/** A task that never gets a worker: it stays running until terminated. */
async function startTask(prefix: string): Promise<{ taskId: string; scope: string }> {
  const taskId = h.taskId(prefix);
  const handle = await h.client.start({ agent: 'demo', prompt: 'nothing', model: { provider: 'scripted', script: '/nonexistent.json' } }, { taskId });
  return { taskId, scope: `${taskId}/${handle.firstExecutionRunId}` };
}

async function blobsIn(scope: string): Promise<number> {
  return (await store.scopes()).includes(scope) ? 1 : 0;
}

test('purge TASK_ID refuses a running task (exit 1) and keeps its blobs', async () => {
  const running = await startTask('running');
  await store.put(running.scope, 'conversation of a running task');
  const { code, err } = await cli(running.taskId);
  expect(code).toBe(EXIT.failed);
  expect(err).toMatch(/is running/);
  expect(await blobsIn(running.scope)).toBe(1);
  await h.client.handle(running.taskId).terminate('test done');
});

test("purge TASK_ID deletes a closed task's blobs, and only its own (not task-1x when purging task-1)", async () => {
  const closed = await startTask('closed');
  const neighbour = `${closed.taskId}x/run`;
  await store.put(closed.scope, 'one');
  await store.put(closed.scope, 'two');
  await store.put(neighbour, 'a task whose id extends the other');
  await h.client.handle(closed.taskId).terminate('closing it');
  const { code, out } = await cli(closed.taskId, '--json');
  expect(code).toBe(EXIT.ok);
  expect(JSON.parse(out)).toMatchObject({ taskId: closed.taskId, blobs: 2, store: `folder ${dir}` });
  expect(await blobsIn(closed.scope)).toBe(0);
  expect(await blobsIn(neighbour)).toBe(1);
});

test("purge TASK_ID takes only the task's own scopes: purging team keeps every blob of the running task team/alpha", async () => {
  const team = await startTask('team');
  const alpha = await startTask(`${team.taskId}/alpha`);
  await store.put(team.scope, 'blob of team');
  await store.put(alpha.scope, 'conversation of team/alpha, still running');
  await h.client.handle(team.taskId).terminate('closing team');
  const { code, out } = await cli(team.taskId, '--json');
  expect(code).toBe(EXIT.ok);
  expect(JSON.parse(out)).toMatchObject({ taskId: team.taskId, blobs: 1 });
  expect(await blobsIn(team.scope)).toBe(0);
  expect(await blobsIn(alpha.scope)).toBe(1);
  // team/alpha itself, once closed, is purged by its own id.
  await h.client.handle(alpha.taskId).terminate('test done');
  expect(JSON.parse((await cli(alpha.taskId, '--json')).out)).toMatchObject({ taskId: alpha.taskId, blobs: 1 });
  expect(await blobsIn(alpha.scope)).toBe(0);
});

test('a task Temporal does not know is exit 3 unless --force', async () => {
  await store.put('ghost/run', 'orphan');
  const refused = await cli('ghost');
  expect(refused.code).toBe(EXIT.notFound);
  expect(refused.err).toMatch(/--force/);
  expect(await blobsIn('ghost/run')).toBe(1);
  const forced = await cli('ghost', '--force', '--json');
  expect(forced.code).toBe(EXIT.ok);
  expect(JSON.parse(forced.out)).toMatchObject({ taskId: 'ghost', blobs: 1 });
});

test("purge --closed-before purges every task closed before then and skips running ones, also those whose id extends a closed one's with /", async () => {
  const a = await startTask('old-a');
  const b = await startTask('old-b');
  const live = await startTask('live');
  const liveChild = await startTask(`${a.taskId}/child`);
  for (const t of [a, b, live, liveChild]) await store.put(t.scope, `blob of ${t.taskId}`);
  await h.client.handle(a.taskId).terminate('old');
  await h.client.handle(b.taskId).cancel();
  await h.client.handle(b.taskId).terminate('old'); // no worker to act on the cancel
  // Visibility is eventually consistent: wait until both closes are listed (and fail if they never are).
  await listedWhen(
    'both closed tasks',
    async () => {
      const closed: string[] = [];
      for await (const e of h.client.client.workflow.list({ query: `CloseTime < '${new Date(Date.now() + 60_000).toISOString()}'` })) closed.push(e.workflowId);
      return closed;
    },
    (closed) => [a.taskId, b.taskId].every((id) => closed.includes(id)),
  );
  const { code, out } = await cli('--closed-before', new Date(Date.now() + 60_000).toISOString(), '--json');
  expect(code).toBe(EXIT.ok);
  const report = JSON.parse(out) as { purged: { taskId: string; blobs: number }[]; blobs: number };
  expect(report.purged).toEqual(
    expect.arrayContaining([
      { taskId: a.taskId, blobs: 1 },
      { taskId: b.taskId, blobs: 1 },
    ]),
  );
  expect(report.purged.map((p) => p.taskId)).not.toContain(live.taskId);
  expect(await blobsIn(a.scope)).toBe(0);
  expect(await blobsIn(b.scope)).toBe(0);
  expect(await blobsIn(live.scope)).toBe(1);
  expect(await blobsIn(liveChild.scope)).toBe(1);
  await h.client.handle(liveChild.taskId).terminate('test done');

  // Nothing closed a day before now: nothing purged.
  const none = await cli('--closed-before', '1d', '--json');
  expect(JSON.parse(none.out)).toMatchObject({ blobs: 0, purged: [] });
  await h.client.handle(live.taskId).terminate('test done');
});

test('usage errors are exit 2', async () => {
  expect((await cli()).code).toBe(EXIT.usage);
  expect((await cli('t', '--closed-before', '30d')).code).toBe(EXIT.usage);
  expect((await cli('--closed-before', 'last tuesday')).code).toBe(EXIT.usage);
  const error = jest.spyOn(console, 'error').mockImplementation(() => undefined);
  const badStore = await main(['purge', 't', '--blob-store', 's3://bucket']).finally(() => error.mockRestore());
  expect(badStore).toBe(EXIT.usage);
});

test('ages count back from now; dates are taken as they are', () => {
  const now = new Date('2026-03-01T00:00:00Z');
  expect(parseClosedBefore('30d', now).toISOString()).toBe('2026-01-30T00:00:00.000Z');
  expect(parseClosedBefore('12h', now).toISOString()).toBe('2026-02-28T12:00:00.000Z');
  expect(parseClosedBefore('2026-01-31', now).toISOString()).toBe('2026-01-31T00:00:00.000Z');
});
