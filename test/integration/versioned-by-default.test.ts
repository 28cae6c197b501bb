/**
 * Worker Versioning is the default (docs/deploy.md): a worker told nothing joins the deployment
 * `durable-agent` as its build, the first build makes itself current, and each task is pinned to
 * the build it started on. A later build waits for `deploy promote`, except the dev stack's worker,
 * which is the whole fleet of its server and makes its build current at once.
 */
import { randomUUID } from 'node:crypto';
import { temporal } from '@temporalio/proto';
import { useHarness, answer, callTool, runInBackground, spawnWorker } from '../support/harness';
import { cliIn } from '../support/cli-in-process';
import { EXIT } from '../../src/cli/cli-error';
import { runCli, sigkill, waitFor } from '../support/processes';
import { deploymentStatus, promoteBuild } from '../../src/deploy/deployment';
import { DEFAULT_DEPLOYMENT_NAME } from '../../src/worker/versioning';

jest.setTimeout(180_000);

const h = useHarness();
const PINNED = temporal.api.enums.v1.VersioningBehavior.VERSIONING_BEHAVIOR_PINNED;

const versioningOf = async (taskId: string) =>
  (await h.client.client.workflowService.describeWorkflowExecution({ namespace: 'default', execution: { workflowId: taskId } })).workflowExecutionInfo?.versioningInfo;

const answered = async (taskId: string, text: string, taskQueue?: string) => {
  await h.client.start({ agent: 'demo', prompt: 'hi', model: { provider: 'scripted', script: h.script([answer(text)]) } }, { taskId, ...(taskQueue ? { taskQueue } : {}) });
  return h.client.result(taskId);
};

test('a worker told nothing is versioned: its build becomes current by itself and a task runs pinned to it', async () => {
  const worker = await h.worker(undefined, { versioning: true }); // the library default, not the harness's
  expect(worker.version).toMatchObject({ deploymentName: DEFAULT_DEPLOYMENT_NAME, bootstrap: true });
  const build = worker.version!.buildId;
  const taskId = h.taskId('default-pinned');
  const status = await worker.runUntil(async () => {
    expect(await answered(taskId, 'pinned by default')).toMatchObject({ outcome: 'answered', text: 'pinned by default' });
    return h.client.status(taskId);
  });
  const info = await versioningOf(taskId);
  expect(info?.behavior).toBe(PINNED);
  expect(info?.deploymentVersion?.buildId).toBe(build);
  expect(status.build).toEqual({ deploymentName: DEFAULT_DEPLOYMENT_NAME, buildId: build });
  expect((await deploymentStatus(h.client.client, DEFAULT_DEPLOYMENT_NAME)).current).toBe(build);
});

test("a later build waits for a promote; the dev stack's worker (bootstrap 'always') makes its build current over it", async () => {
  const deploymentName = `dev-${randomUUID().slice(0, 8)}`;
  const taskQueue = `dev-${randomUUID().slice(0, 8)}`;
  const current = async () => (await deploymentStatus(h.client.client, deploymentName).catch(() => undefined))?.current;
  const known = async (buildId: string) => (await deploymentStatus(h.client.client, deploymentName).catch(() => undefined))?.builds.some((b) => b.buildId === buildId);

  const first = runInBackground(await h.worker(undefined, { taskQueue, versioning: { deploymentName, buildId: 'a' } }));
  try {
    await waitFor('build a to make itself current', async () => (await current()) === 'a' || undefined, 60_000);
    const second = runInBackground(await h.worker(undefined, { taskQueue, versioning: { deploymentName, buildId: 'b' } }));
    try {
      await waitFor('the server to know build b', () => known('b').then((k) => k || undefined), 60_000);
      const onA = h.taskId('still-a');
      expect(await answered(onA, 'on a', taskQueue)).toMatchObject({ text: 'on a' });
      expect((await versioningOf(onA))?.deploymentVersion?.buildId).toBe('a');
      expect(await current()).toBe('a');
    } finally {
      await second.stop();
    }
    const dev = runInBackground(await h.worker(undefined, { taskQueue, versioning: { deploymentName, buildId: 'c', bootstrap: 'always' } }));
    try {
      await waitFor("the dev worker's build c to become current", async () => (await current()) === 'c' || undefined, 60_000);
      const onC = h.taskId('on-c');
      expect(await answered(onC, 'on c', taskQueue)).toMatchObject({ text: 'on c' });
      expect((await versioningOf(onC))?.deploymentVersion?.buildId).toBe('c');
    } finally {
      await dev.stop();
    }
  } finally {
    await first.stop();
  }
});

test('an unversioned CLI worker on a queue a current build serves says at start that it will get no new task there', async () => {
  // The first test made the default build current for the harness's queue.
  expect((await deploymentStatus(h.client.client, DEFAULT_DEPLOYMENT_NAME)).current).toBeTruthy();
  const child = spawnWorker(h, ['--unversioned']);
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  try {
    const warning = await waitFor('the warning', () => /^warning: task queue (\S+) belongs to build (\S+) of deployment durable-agent: .*gets none/m.exec(stderr) ?? undefined, 60_000);
    expect(warning[1]).toBe(h.taskQueue);
  } finally {
    await sigkill(child);
  }
});

test('the CLI worker refuses --unversioned with a build or deployment, and DURABLE_AGENT_VERSIONING other than 0 or 1 (exit 2)', async () => {
  const both = await runCli(['worker', '--unversioned', '--build-id', 'v9', '--address', h.server.address]);
  expect(both.code).toBe(2);
  expect(both.stderr).toMatch(/--unversioned cannot be given with --versioned, --build-id or --deployment/);
  const bad = await runCli(['worker', '--address', h.server.address], { DURABLE_AGENT_VERSIONING: 'yes' });
  expect(bad.code).toBe(2);
  expect(bad.stderr).toMatch(/DURABLE_AGENT_VERSIONING must be 1 \(versioned, the default\) or 0 \(unversioned\), got "yes"/);
});

test('fork --agent-version: origin pins the branch to the build the origin ran on after another became current; the default goes to the current build; a build no worker serves is refused', async () => {
  const x = runInBackground(await h.worker());
  try {
    const origin = h.taskId('fork-origin');
    const script = h.script([callTool('search_orders', { customer_id: 'C-1001' }), answer('origin done')]);
    await h.client.start({ agent: 'demo', prompt: 'orders of C-1001', model: { provider: 'scripted', script } }, { taskId: origin });
    await h.client.result(origin);
    const originBuild = (await versioningOf(origin))?.deploymentVersion?.buildId;
    expect(originBuild).toBeDefined();

    // Build y becomes current; x keeps its worker (it is draining).
    const y = runInBackground(await h.worker(undefined, { versioning: { buildId: 'y', bootstrap: false } }));
    try {
      await waitFor('the server to know build y', async () => (await deploymentStatus(h.client.client, DEFAULT_DEPLOYMENT_NAME)).builds.some((b) => b.buildId === 'y') || undefined, 60_000);
      await promoteBuild(h.client.client, 'y', { force: true });

      const pinned = await h.client.fork(origin, 1, { runOn: 'origin', blobStore: h.blobStore });
      expect(pinned.build).toMatchObject({ pinned: true, deploymentName: DEFAULT_DEPLOYMENT_NAME, buildId: originBuild, agentVersion: expect.stringMatching(/^[0-9a-f]{16}$/) });
      expect(await h.client.result(pinned.taskId)).toMatchObject({ outcome: 'answered', text: 'origin done' });
      expect((await versioningOf(pinned.taskId))?.deploymentVersion?.buildId).toBe(originBuild);

      const routed = await cliIn(h, 'fork', origin, '--at-turn', '1', '--json');
      expect(routed.code).toBe(EXIT.ok);
      const started = JSON.parse(routed.out) as { taskId: string; build: unknown };
      expect(started.build).toEqual({ pinned: false, deploymentName: DEFAULT_DEPLOYMENT_NAME, buildId: 'y' });
      await h.client.result(started.taskId);
      expect((await versioningOf(started.taskId))?.deploymentVersion?.buildId).toBe('y');

      const text = await cliIn(h, 'fork', origin, '--at-turn', '1', '--agent-version', 'origin');
      expect(text.out).toContain(`runs on:    build ${originBuild} of ${DEFAULT_DEPLOYMENT_NAME} (pinned; agent version`);

      const nobody = await cliIn(h, 'fork', origin, '--at-turn', '1', '--agent-version', 'no-such-build', '--id', 'never-created');
      expect(nobody.code).toBe(EXIT.failed);
      expect(nobody.err).toMatch(/No live worker of build no-such-build \(deployment durable-agent\) polls task queue/);
      await expect(h.client.describe('never-created')).rejects.toThrow(/never-created/);

      const bad = await cliIn(h, 'fork', origin, '--at-turn', '1', '--agent-version', 'a b');
      expect(bad.code).toBe(EXIT.usage);
    } finally {
      await y.stop();
    }
  } finally {
    await x.stop();
  }
});
