/**
 * Deploying new workflow code as an operator would (docs/deploy.md), on a real dev server: a v1
 * worker process with a task waiting on a person, a v2 bundle with an incompatible change (a new
 * timer before the first model call, no patch), `deploy check` that refuses it strictly and passes
 * it under pinning, promote, a SIGKILL of the v1 worker, the v1 task finishing on v1, new tasks on
 * v2, and a rollback that sends new tasks back to v1.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { temporal } from '@temporalio/proto';
import { isStartTimer, modifiedBuild as modifiedBuildIn, withStartTimer } from '../support/modified-build';
import { useHarness, answer, callTool, runInBackground, spawnWorker, statusWhen } from '../support/harness';
import { runCli, sigkill, waitFor } from '../support/processes';
import { checkBuild } from '../../src/deploy/build-check';
import { deploymentStatus, promoteBuild, rollbackDeployment } from '../../src/deploy/deployment';
import { buildIdOfBundle } from '../../src/worker/versioning';
import { agentsFingerprint } from '../../src/worker/agents-fingerprint';
import { createDemoAgent } from '../../src/demo/demo-agent';
import teamAgents from '../support/team-agents';

jest.setTimeout(300_000);

const ROOT = path.resolve(__dirname, '../..');
// Stopped while the server is up: afterAll hooks run in the order they are declared, the harness's below.
afterAll(async () => {
  for (const child of children) await sigkill(child);
  if (home === undefined) delete process.env.DURABLE_AGENT_HOME;
  else process.env.DURABLE_AGENT_HOME = home;
});
const h = useHarness();
let home: string | undefined;
const children: ChildProcess[] = [];
beforeAll(async () => {
  home = process.env.DURABLE_AGENT_HOME;
  // Check records land in this test's folder; the CLI worker keeps the shared bundle cache.
  process.env.DURABLE_AGENT_HOME = path.join(h.tmpDir, 'home');
});

const modifiedBuild = (name: string, change: (source: string) => string) => modifiedBuildIn(h.tmpDir, name, change);

const execution = async (taskId: string) => (await h.client.client.workflowService.describeWorkflowExecution({ namespace: 'default', execution: { workflowId: taskId } })).workflowExecutionInfo;

/** The demo agent's part of a build id: the same for the harness's demo agent and a CLI worker's. */
const demoFingerprint = () => agentsFingerprint([createDemoAgent({ workspaceDir: h.workspaceDir, ordersUrl: h.orders.url })]);

const buildOf = async (taskId: string) => (await execution(taskId))?.versioningInfo?.deploymentVersion?.buildId;

test('v1 tasks finish on v1 after v2 is promoted; deploy check refuses an incompatible v2 unless pinning is trusted; rollback sends new tasks back to v1', async () => {
  const deploymentName = `dep-${randomUUID().slice(0, 8)}`;
  const cliEnv = { DURABLE_AGENT_HOME: home ?? path.join(ROOT, '.durable-agent') };
  // v2: a timer before the first model call, without a patch: v1's histories cannot replay on it.
  const v2Pending = modifiedBuild('v2', withStartTimer);

  // v1: a `durable-agent worker` process, the deployment's first build (it makes itself current).
  const v1Process = spawnWorker(h, ['--build-id', 'v1', '--deployment', deploymentName], cliEnv);
  children.push(v1Process);
  let stderr = '';
  v1Process.stderr!.on('data', (d) => (stderr += d));
  const waitingId = h.taskId('waiting');
  writeFileSync(path.join(h.workspaceDir, 'v1-file.txt'), 'x');
  const waitingScript = h.script([callTool('delete_file', { path: 'v1-file.txt' }), answer('deleted on v1')]);
  await waitFor(
    'v1 to be current',
    () =>
      deploymentStatus(h.client.client, deploymentName).then(
        (v) => v.current === 'v1' || undefined,
        () => undefined,
      ),
    120_000,
  ).catch((err: Error) => {
    throw new Error(`${err.message}\n${stderr.slice(-2000)}`);
  });
  await h.client.start({ agent: 'demo', prompt: 'delete v1-file.txt', model: { provider: 'scripted', script: waitingScript } }, { taskId: waitingId });
  const waiting = await statusWhen(h, waitingId, (s) => s.pendingApprovals.length > 0, 60_000);
  expect(waiting.build).toEqual({ deploymentName, buildId: 'v1' });
  expect(waiting.agentVersion).toMatch(/^[0-9a-f]{16}$/);

  const v2 = await v2Pending;
  // Strict: every history must replay on v2. The waiting task's does not: refused, naming it.
  const strict = await checkBuild(h.client.client, v2.codePath, { deploymentName, buildId: 'v2', closedPerAgent: 5 });
  expect(strict.passed).toBe(false);
  const first = strict.divergences.find((d) => d.taskId === waitingId)!;
  expect(first).toMatchObject({ taskId: waitingId, open: true, pinnedTo: 'v1', blocking: true });
  expect(first.message).toMatch(/nondetermin|TMPRL1100/i);
  await expect(promoteBuild(h.client.client, 'v2', { deploymentName })).rejects.toThrow(/failed its deploy check/);

  // The CLI says the same, as JSON, with exit 1.
  const cli = await runCli(['deploy', 'check', v2.codePath, '--build', 'v2', '--deployment', deploymentName, '--address', h.server.address, '--json'], {
    DURABLE_AGENT_HOME: process.env.DURABLE_AGENT_HOME!,
  });
  expect(cli.code).toBe(1);
  expect(JSON.parse(cli.stdout)).toMatchObject({ passed: false, buildId: 'v2', divergences: expect.arrayContaining([expect.objectContaining({ taskId: waitingId })]) });

  // Under pinning the v1 task never meets v2: the check passes and promote goes ahead.
  const pinned = await checkBuild(h.client.client, v2.codePath, { deploymentName, buildId: 'v2', mode: 'pinned', closedPerAgent: 5 });
  expect(pinned.passed).toBe(true);
  expect(pinned.divergences.find((d) => d.taskId === waitingId)).toMatchObject({ blocking: false });

  const v2Worker = runInBackground(await h.worker(undefined, { workflowBundle: { codePath: v2.codePath }, versioning: { deploymentName, buildId: 'v2', bootstrap: false } }));
  try {
    await waitFor('the server to know build v2', () => deploymentStatus(h.client.client, deploymentName).then((v) => v.builds.some((b) => b.buildId === 'v2') || undefined), 60_000);
    // --move-waiting leaves the waiting task on v1: its history does not replay on v2.
    const promoted = await promoteBuild(h.client.client, 'v2', { deploymentName, moveWaiting: true });
    expect(promoted).toMatchObject({ before: { current: 'v1' }, after: { current: 'v2' }, moved: [] });
    expect(promoted.kept).toEqual([{ taskId: waitingId, build: 'v1', why: expect.stringMatching(/did not replay cleanly on v2/) }]);

    // The v1 worker dies mid-wait; another v1 worker (in process, same code, same build) takes over.
    await sigkill(v1Process);
    const v1Worker = runInBackground(await h.worker(undefined, { versioning: { deploymentName, buildId: 'v1', bootstrap: false } }));
    try {
      // New tasks run on v2 (its extra timer is in their histories).
      const newId = h.taskId('new');
      await h.client.start({ agent: 'demo', prompt: 'hi', model: { provider: 'scripted', script: h.script([answer('hello from v2')]) } }, { taskId: newId });
      expect(await h.client.result(newId)).toMatchObject({ outcome: 'answered', text: 'hello from v2' });
      expect(await buildOf(newId)).toBe('v2');
      const newHistory = await h.client.client.workflow.getHandle(newId).fetchHistory();
      expect(newHistory.events!.some(isStartTimer)).toBe(true);

      const status = await deploymentStatus(h.client.client, deploymentName);
      expect(status.current).toBe('v2');
      expect(status.builds.find((b) => b.buildId === 'v1')).toMatchObject({ openTasks: 1, agents: { demo: 1 } });

      // The v1 task finishes on v1, with no nondeterminism (no failed workflow task).
      const approval = (await statusWhen(h, waitingId, (s) => s.pendingApprovals.length > 0)).pendingApprovals[0]!;
      await h.client.approve(waitingId, { approvalId: approval.id, by: 'ana' });
      expect(await h.client.result(waitingId)).toMatchObject({ outcome: 'answered', text: 'deleted on v1' });
      expect(await buildOf(waitingId)).toBe('v1');
      const history = await h.client.client.workflow.getHandle(waitingId).fetchHistory();
      expect(history.events!.filter((e) => e.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED)).toEqual([]);
      expect(history.events!.some(isStartTimer)).toBe(false);

      // Rollback: v1 is current again, and new tasks run there.
      const rolledBack = await rollbackDeployment(h.client.client, { deploymentName });
      expect(rolledBack).toMatchObject({ before: { current: 'v2' }, after: { current: 'v1' } });
      const backId = h.taskId('back');
      await h.client.start({ agent: 'demo', prompt: 'hi', model: { provider: 'scripted', script: h.script([answer('hello from v1')]) } }, { taskId: backId });
      expect(await h.client.result(backId)).toMatchObject({ outcome: 'answered', text: 'hello from v1' });
      expect(await buildOf(backId)).toBe('v1');

      // `deploy status --json` from the CLI: both builds, v1 current.
      const shown = await runCli(['deploy', 'status', '--deployment', deploymentName, '--address', h.server.address, '--json']);
      expect(shown.code).toBe(0);
      expect(JSON.parse(shown.stdout)).toMatchObject({ deploymentName, current: 'v1', builds: expect.arrayContaining([expect.objectContaining({ buildId: 'v2' })]) });

      // A second rollback would re-promote v2, the build the first backed out: refused, one line, exit 1; v1 stays current.
      const again = await runCli(['deploy', 'rollback', '--deployment', deploymentName, '--address', h.server.address]);
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(/has nothing older to roll back to: the previous build v2 is newer than the current v1/);
      expect((await deploymentStatus(h.client.client, deploymentName)).current).toBe('v1');
    } finally {
      await v1Worker.stop();
    }
  } finally {
    await v2Worker.stop();
  }
});

test('promote --move-waiting moves a task waiting on a person to a compatible build, which then finishes it', async () => {
  const deploymentName = `move-${randomUUID().slice(0, 8)}`;
  // v2: a compatible change (the same commands), another build.
  const v2Pending = modifiedBuild('compatible', (source) => `${source}\n// v2: a compatible change\n`);
  // A queue of its own: a queue whose deployment has a current build sends new tasks to no unversioned worker.
  const taskQueue = `move-${randomUUID().slice(0, 8)}`;
  const v1 = runInBackground(await h.worker(undefined, { taskQueue, versioning: { deploymentName, buildId: 'c1' } }));
  const taskId = h.taskId('move');
  let v1Stopped = false;
  try {
    writeFileSync(path.join(h.workspaceDir, 'move.txt'), 'x');
    await waitFor(
      'c1 to be current',
      () =>
        deploymentStatus(h.client.client, deploymentName).then(
          (v) => v.current === 'c1' || undefined,
          () => undefined,
        ),
      60_000,
    );
    await h.client.start(
      { agent: 'demo', prompt: 'delete move.txt', model: { provider: 'scripted', script: h.script([callTool('delete_file', { path: 'move.txt' }), answer('moved and done')]) } },
      { taskId, taskQueue },
    );
    const waiting = await statusWhen(h, taskId, (s) => s.pendingApprovals.length > 0, 60_000);
    expect(waiting.build?.buildId).toBe('c1');
    const v2 = await v2Pending;
    const v2Worker = runInBackground(await h.worker(undefined, { taskQueue, workflowBundle: { codePath: v2.codePath }, versioning: { deploymentName, buildId: 'c2', bootstrap: false } }));
    try {
      await waitFor('the server to know build c2', () => deploymentStatus(h.client.client, deploymentName).then((v) => v.builds.some((b) => b.buildId === 'c2') || undefined), 60_000);
      const check = await checkBuild(h.client.client, v2.codePath, { deploymentName, buildId: 'c2', closedPerAgent: 0 });
      expect(check).toMatchObject({ passed: true, clean: expect.arrayContaining([expect.objectContaining({ taskId })]) });
      const started = Date.now();
      const change = await promoteBuild(h.client.client, 'c2', { deploymentName, moveWaiting: true });
      expect(change.moved).toEqual([{ taskId, from: 'c1', to: 'c2' }]);
      // No c1 worker is left: the person's answer is the task's next step, and it runs on c2.
      await v1.stop();
      v1Stopped = true;
      await h.client.approve(taskId, { approvalId: waiting.pendingApprovals[0]!.id, by: 'ana' });
      expect(await h.client.result(taskId)).toMatchObject({ outcome: 'answered', text: 'moved and done' });
      console.log(`deploy: a waiting task moved and finished on the new build ${Date.now() - started} ms after the promote began`);
      expect(await buildOf(taskId)).toBe('c2');
      const history = await h.client.client.workflow.getHandle(taskId).fetchHistory();
      expect(history.events!.filter((e) => e.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED)).toEqual([]);
    } finally {
      await v2Worker.stop();
    }
  } finally {
    if (!v1Stopped) await v1.stop();
  }
});

test("a schedule's fires start on the deployment's current build, before and after a promote", async () => {
  const deploymentName = `sched-${randomUUID().slice(0, 8)}`;
  const taskQueue = `sched-${randomUUID().slice(0, 8)}`;
  const name = `nightly-${randomUUID().slice(0, 8)}`;
  const s1 = runInBackground(await h.worker(undefined, { taskQueue, versioning: { deploymentName, buildId: 's1' } }));
  const s2 = runInBackground(await h.worker(undefined, { taskQueue, versioning: { deploymentName, buildId: 's2', bootstrap: false } }));
  const schedules = h.client.schedules;
  try {
    await waitFor(
      's1 current and s2 known',
      () =>
        deploymentStatus(h.client.client, deploymentName).then(
          (v) => (v.current === 's1' && v.builds.some((b) => b.buildId === 's2')) || undefined,
          () => undefined,
        ),
      60_000,
    );
    await schedules.create({ name, task: { agent: 'demo', prompt: 'report', model: { provider: 'scripted', script: h.script([answer('report')]) } }, every: '1d', taskQueue });
    const fire = async (count: number) => {
      await schedules.trigger(name);
      const recent = await waitFor(`fire ${count}`, async () => {
        const tasks = (await schedules.describe(name)).recentTasks;
        return tasks.length >= count ? tasks : undefined;
      });
      const id = recent[recent.length - 1]!;
      await h.client.result(id);
      return buildOf(id);
    };
    expect(await fire(1)).toBe('s1');
    await promoteBuild(h.client.client, 's2', { deploymentName, force: true });
    expect(await fire(2)).toBe('s2');
  } finally {
    await schedules.delete(name).catch(() => undefined);
    await s2.stop();
    await s1.stop();
  }
});

test("a sub-agent child of a pinned parent on the parent's queue starts on the parent's build, even after a promote (server 1.29.1)", async () => {
  const deploymentName = `team-${randomUUID().slice(0, 8)}`;
  const taskQueue = `team-${randomUUID().slice(0, 8)}`;
  writeFileSync(path.join(h.workspaceDir, 'child-a.txt'), 'x');
  writeFileSync(path.join(h.workspaceDir, 'child-b.txt'), 'x');
  const researcher = h.script([callTool('delete_file', { path: 'child-a.txt' }), answer('a done')]);
  const agents = () => teamAgents({ workspaceDir: h.workspaceDir }, { ordersUrl: h.orders.url, researcherScript: researcher });
  const t1 = runInBackground(await h.worker(agents(), { taskQueue, versioning: { deploymentName, buildId: 't1' } }));
  const t2 = runInBackground(await h.worker(agents(), { taskQueue, versioning: { deploymentName, buildId: 't2', bootstrap: false } }));
  try {
    await waitFor(
      't1 current and t2 known',
      () =>
        deploymentStatus(h.client.client, deploymentName).then(
          (v) => (v.current === 't1' && v.builds.some((b) => b.buildId === 't2')) || undefined,
          () => undefined,
        ),
      60_000,
    );
    const leadId = h.taskId('lead');
    const lead = h.script([callTool('delegate_to_researcher', { task: 'first' }), callTool('delegate_to_researcher', { task: 'second' }), answer('both done')]);
    await h.client.start({ agent: 'lead', prompt: 'Work with your team.', budgets: { turns: 10, toolCalls: 20 }, model: { provider: 'scripted', script: lead } }, { taskId: leadId, taskQueue });
    const children = async () => {
      const out: string[] = [];
      for await (const e of h.client.client.workflow.list({ query: `ParentTask = '${leadId}'` })) out.push(e.workflowId);
      return out.sort();
    };
    const first = await waitFor('the first child', async () => (await children())[0], 60_000);
    const firstWaiting = await statusWhen(h, first, (s) => s.pendingApprovals.length > 0, 60_000);
    await promoteBuild(h.client.client, 't2', { deploymentName, force: true });
    await h.client.approve(first, { approvalId: firstWaiting.pendingApprovals[0]!.id, by: 'ana' });
    const second = await waitFor('the second child', async () => (await children()).find((c) => c !== first), 60_000);
    const secondWaiting = await statusWhen(h, second, (s) => s.pendingApprovals.length > 0, 60_000);
    await h.client.approve(second, { approvalId: secondWaiting.pendingApprovals[0]!.id, by: 'ana' });
    expect(await h.client.result(leadId)).toMatchObject({ outcome: 'answered' });
    const builds = { lead: await buildOf(leadId), first: await buildOf(first), second: await buildOf(second) };
    expect(builds.lead).toBe('t1');
    expect(builds.first).toBe('t1');
    // The server starts a pinned parent's child on the same queue on the parent's build: parent and
    // children run one version of the code.
    expect(builds.second).toBe('t1');
  } finally {
    await t2.stop();
    await t1.stop();
  }
});

test("with the default build id, an in-process worker and a `durable-agent worker` process are one build and take over each other's task", async () => {
  const deploymentName = `same-${randomUUID().slice(0, 8)}`;
  const taskId = h.taskId('takeover');
  writeFileSync(path.join(h.workspaceDir, 'takeover.txt'), 'x');
  const script = h.script([callTool('delete_file', { path: 'takeover.txt' }), answer('taken over')]);
  // In process, on the test bundle: the deployment's first build.
  const inProcess = await h.worker(undefined, { versioning: { deploymentName } });
  const build = inProcess.version!.buildId;
  // The bundle's name carries the hash of the sources it was built from: that hash and the agents' fingerprint are the build.
  expect(build).toBe(buildIdOfBundle(h.bundle.codePath, demoFingerprint()));
  const waiting = await inProcess.runUntil(async () => {
    await h.client.start({ agent: 'demo', prompt: 'delete takeover.txt', model: { provider: 'scripted', script } }, { taskId });
    return statusWhen(h, taskId, (s) => s.pendingApprovals.length > 0, 60_000);
  });
  expect(waiting.build).toEqual({ deploymentName, buildId: build });
  // A CLI worker process, on its own cached bundle of the same code, finishes it.
  const cliWorker = spawnWorker(h, ['--deployment', deploymentName], { DURABLE_AGENT_HOME: home ?? path.join(ROOT, '.durable-agent') });
  children.push(cliWorker);
  let stderr = '';
  cliWorker.stderr!.on('data', (d) => (stderr += d));
  await waitFor('the CLI worker to say its build', () => /build (\S+) \(agentTask pinned\)/.exec(stderr)?.[1], 120_000);
  expect(/build (\S+) \(agentTask pinned\)/.exec(stderr)![1]).toBe(build);
  await h.client.approve(taskId, { approvalId: waiting.pendingApprovals[0]!.id, by: 'ana' });
  expect(await h.client.result(taskId)).toMatchObject({ outcome: 'answered', text: 'taken over' });
  expect(await buildOf(taskId)).toBe(build);
  await sigkill(cliWorker);
});

test("a continue-as-new under a changed agent definition records the agent's new version in status and the audit trail", async () => {
  const taskId = h.taskId('agent-version');
  writeFileSync(path.join(h.workspaceDir, 'versioned.txt'), 'x');
  const script = h.script([callTool('delete_file', { path: 'versioned.txt' }), answer('done with v2 of the agent')]);
  // On a queue of its own, in the default deployment (the other tests' queues belong to theirs), as one
  // named build whose agents change on purpose: a changed agent is otherwise a new build of its own.
  const taskQueue = `av-${randomUUID().slice(0, 8)}`;
  const versioning = { buildId: taskQueue, allowAgentChanges: true };
  const first = await h.worker(undefined, { taskQueue, versioning });
  const waiting = await first.runUntil(async () => {
    await h.client.start({ agent: 'demo', prompt: 'delete versioned.txt', model: { provider: 'scripted', script }, continueAsNewEveryTurns: 1 }, { taskId, taskQueue });
    return statusWhen(h, taskId, (s) => s.pendingApprovals.length > 0);
  });
  // The agent changes (its write policy) while the task waits; the next run takes it from its worker.
  const changed = createDemoAgent({ workspaceDir: h.workspaceDir, ordersUrl: h.orders.url, policy: { write: 'confirm' } });
  const second = await h.worker([changed], { taskQueue, versioning });
  const finished = await second.runUntil(async () => {
    await h.client.approve(taskId, { approvalId: waiting.pendingApprovals[0]!.id, by: 'ana' });
    await h.client.result(taskId);
    return h.client.status(taskId);
  });
  expect(finished.agentVersion).toMatch(/^[0-9a-f]{16}$/);
  expect(finished.agentVersion).not.toBe(waiting.agentVersion);
  const event = finished.events.find((e) => e.kind === 'version_changed');
  expect(event?.detail).toBe(`continued as new with agent version ${waiting.agentVersion} -> ${finished.agentVersion}`);
});

test('deploy promote refuses a build with no check, and deploy status a deployment that does not exist (exit 1)', async () => {
  const missing = await runCli(['deploy', 'status', '--deployment', 'no-such-deployment', '--address', h.server.address]);
  expect(missing.code).toBe(1);
  expect(missing.stderr).toMatch(/No Worker Deployment named "no-such-deployment"/);
  const unchecked = await runCli(['deploy', 'promote', 'never-checked', '--deployment', 'no-such-deployment', '--address', h.server.address], { DURABLE_AGENT_HOME: process.env.DURABLE_AGENT_HOME! });
  expect(unchecked.code).toBe(1);
  expect(unchecked.stderr).toMatch(/no deploy check/);
  const bad = await runCli(['deploy', 'promote', 'v2', '--ramp', '120', '--address', h.server.address]);
  expect(bad.code).toBe(2);
  const noBundle = await runCli(['worker', '--versioned', '--bundle', path.join(h.tmpDir, 'missing.js'), '--address', h.server.address]);
  expect(noBundle.code).toBe(2);
  // A worker on a prebuilt bundle (the one a check replayed) runs as the bundle's build.
  const onBundle = spawnWorker(h, ['--versioned', '--deployment', `bundle-${randomUUID().slice(0, 8)}`, '--bundle', h.bundle.codePath]);
  children.push(onBundle);
  let stderr = '';
  onBundle.stderr!.on('data', (d) => (stderr += d));
  const build = await waitFor('the worker to say its build', () => /build (\S+) \(agentTask pinned\)/.exec(stderr)?.[1], 60_000);
  expect(build).toBe(buildIdOfBundle(h.bundle.codePath, demoFingerprint()));
  await sigkill(onBundle);
});
