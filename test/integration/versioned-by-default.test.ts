/**
 * Worker Versioning is the default (docs/deploy.md): a worker told nothing joins the deployment
 * `durable-agent` as its build, the first build makes itself current, and each task is pinned to
 * the build it started on. A later build waits for `deploy promote`, except the dev stack's worker,
 * which is the whole fleet of its server and makes its build current at once.
 */
import { randomUUID } from 'node:crypto';
import { temporal } from '@temporalio/proto';
import { useHarness, answer, runInBackground } from '../support/harness';
import { runCli, waitFor } from '../support/processes';
import { deploymentStatus } from '../../src/deploy/deployment';
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
  const worker = await h.worker();
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

test('the CLI worker refuses --unversioned with a build or deployment, and DURABLE_AGENT_VERSIONING other than 0 or 1 (exit 2)', async () => {
  const both = await runCli(['worker', '--unversioned', '--build-id', 'v9', '--address', h.server.address]);
  expect(both.code).toBe(2);
  expect(both.stderr).toMatch(/--unversioned cannot be given with --versioned, --build-id or --deployment/);
  const bad = await runCli(['worker', '--address', h.server.address], { DURABLE_AGENT_VERSIONING: 'yes' });
  expect(bad.code).toBe(2);
  expect(bad.stderr).toMatch(/DURABLE_AGENT_VERSIONING must be 1 \(versioned, the default\) or 0 \(unversioned\), got "yes"/);
});
