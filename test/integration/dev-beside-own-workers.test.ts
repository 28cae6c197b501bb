/**
 * Issue 51, item 2: `durable-agent dev` beside your own workers (docs/own-agents.md). A real `dev`
 * (starting its own embedded server, as a person does) and a user's `durable-agent worker --agents
 * FILE` with no versioning flag share the server: dev's worker sits in its own deployment
 * (durable-agent-dev) on the demo agent's queue alone, the user's worker in durable-agent, and tasks
 * of both finish. A worker whose build the server does not route to gets a note naming that cause
 * (which build is current, which queues it serves) and the fix, which then works.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { createDataConverter } from '../../src/codec';
import { DEV_DEPLOYMENT_NAME } from '../../src/cli/local-stack';
import { freePort } from '../../src/server/dev-server';
import { provisionTemporalCli } from '../../src/server/temporal-cli';
import { DEFAULT_DEPLOYMENT_NAME } from '../../src/worker/versioning';
import { answer, callTool } from '../support/harness';
import { runCli, sigkill, spawnCli, waitFor } from '../support/processes';

jest.setTimeout(300_000);

const AGENTS_FILE = path.join(__dirname, '../support/routing-agents.ts');
const home = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-own-'));
const children: ChildProcess[] = [];
let env: NodeJS.ProcessEnv;
let address: string;
let connection: Connection | undefined;
let client: Client;

/** Collects a child's stderr; `until` resolves when `pattern` shows in it (rejects if it exits first). */
function spawned(args: string[], extraEnv: NodeJS.ProcessEnv = {}) {
  const child = spawnCli(args, { ...env, ...extraEnv });
  children.push(child);
  let text = '';
  child.stderr!.on('data', (d) => (text += d));
  let exited = false;
  child.on('exit', () => (exited = true));
  return {
    child,
    text: () => text,
    until: (pattern: RegExp, what: string) =>
      waitFor(
        what,
        () => {
          if (pattern.test(text)) return true;
          if (exited) throw new Error(`durable-agent ${args[0]} exited before ${what}:\n${text}`);
          return undefined;
        },
        120_000,
      ),
  };
}

/** SIGTERM (drains; dev also stops its server), SIGKILL after 15 s. */
function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

function script(name: string, turns: unknown[]): string {
  const file = path.join(home, `${name}.json`);
  writeFileSync(file, JSON.stringify({ description: `${name} (test script)`, turns }));
  return file;
}

const at = () => ['--address', address];

const current = async (deploymentName: string) =>
  (await client.workflowService.describeWorkerDeployment({ namespace: 'default', deploymentName }).catch(() => undefined))?.workerDeploymentInfo?.routingConfig?.currentDeploymentVersion?.buildId ||
  undefined;

const versionOf = async (taskId: string) => {
  const d = await client.workflowService.describeWorkflowExecution({ namespace: 'default', execution: { workflowId: taskId } });
  const v = d.workflowExecutionInfo?.versioningInfo?.deploymentVersion;
  return { deploymentName: v?.deploymentName, buildId: v?.buildId };
};

beforeAll(async () => {
  const cli = await provisionTemporalCli();
  const port = await freePort();
  address = `127.0.0.1:${port}`;
  // A state folder of its own (server database, scripts, blobs), shared by dev and the user's worker as in one project folder.
  env = { DURABLE_AGENT_HOME: home, DURABLE_AGENT_TEMPORAL_CLI: cli, DURABLE_AGENT_SERVER_WAIT: '60', TEMPORAL_ADDRESS: address };
});

afterAll(async () => {
  await connection?.close();
  // The workers first, while dev's server is still up; dev last (it stops the server it started).
  const [dev, ...workers] = children;
  await Promise.all(workers.map(stop));
  if (dev) await stop(dev);
  try {
    const { pid } = JSON.parse(readFileSync(path.join(home, 'dev-server.json'), 'utf8')) as { pid: number };
    process.kill(pid, 'SIGKILL');
  } catch {
    // dev stopped its server and removed the record.
  }
  await Promise.all(children.map((c) => sigkill(c)));
});

test('dev and your own `worker --agents FILE`, no versioning flags: each in its own deployment, and tasks for both agents finish', async () => {
  // dev's build is not the user's worker's (as whenever the two run different code, and once a
  // build id covers the agents served): the case where dev's build, made current at every start,
  // took the user's worker's place when both joined one deployment.
  const dev = spawned(['dev', '--port', address.split(':')[1]!, '--headless', '--workspace', path.join(home, 'dev-workspace')], { DURABLE_AGENT_BUILD_ID: 'dev-build' });
  await dev.until(/Ready\.[\s\S]*Ctrl-C/, 'dev to be ready');
  expect(dev.text()).toContain('task queue durable-agent.demo (agent "demo")');
  // dev leaves the legacy shared queue to the user's deployment.
  expect(dev.text()).not.toContain('tasks started before routing by agent');
  expect(dev.text()).toContain(`Worker: deployment ${DEV_DEPLOYMENT_NAME}, build `);
  connection = await Connection.connect({ address });
  client = new Client({ connection, dataConverter: createDataConverter() });

  const own = spawned(['worker', '--agents', AGENTS_FILE, '--workspace', path.join(home, 'own-workspace'), ...at()], { ROUTING_AGENT: 'nu-own' });
  await own.until(/worker: deployment durable-agent, build \S+/, 'the own worker to start');
  expect(own.text()).toContain('task queue durable-agent.nu-own (agent "nu-own")');
  const ownBuild = /worker: deployment durable-agent, build (\S+)/.exec(own.text())![1]!;
  // Its build is the first of its deployment: current on its own, with no promote and no flag.
  await waitFor('the own worker to make its build current', async () => ((await current(DEFAULT_DEPLOYMENT_NAME)) === ownBuild ? true : undefined), 90_000);
  const devBuild = await waitFor('dev to make its build current', () => current(DEV_DEPLOYMENT_NAME), 90_000);
  expect(devBuild).toBe('dev-build');

  const ownTask = await runCli(['start', 'who serves?', '--agent', 'nu-own', '--script', script('own', [callTool('who_serves', {}), answer('served by my worker')]), '--id', 'own-1', ...at()], env);
  expect(ownTask.code).toBe(0);
  expect(ownTask.stderr).not.toContain('note:');
  const demoTask = await runCli(
    ['start', 'list the files', '--agent', 'demo', '--script', script('demo', [callTool('list_files', { dir: '.' }), answer('listed by dev')]), '--id', 'demo-1', ...at()],
    env,
  );
  expect(demoTask.code).toBe(0);
  expect(demoTask.stderr).not.toContain('note:');

  const ownResult = await runCli(['result', 'own-1', '--json', ...at()], env, 120_000);
  expect(ownResult.code).toBe(0);
  expect(JSON.parse(ownResult.stdout)).toMatchObject({ outcome: 'answered', text: 'served by my worker' });
  const demoResult = await runCli(['result', 'demo-1', '--json', ...at()], env, 120_000);
  expect(demoResult.code).toBe(0);
  expect(JSON.parse(demoResult.stdout)).toMatchObject({ outcome: 'answered', text: 'listed by dev' });

  // Each ran on the build of its own deployment.
  expect(await versionOf('own-1')).toEqual({ deploymentName: DEFAULT_DEPLOYMENT_NAME, buildId: ownBuild });
  expect(await versionOf('demo-1')).toEqual({ deploymentName: DEV_DEPLOYMENT_NAME, buildId: devBuild });
});

test('a worker whose build is not current: start and status name the current build, its queues and the fix, and the fix finishes the task', async () => {
  if (!client) throw new Error('needs the dev and worker of the previous test');
  const ownBuild = (await current(DEFAULT_DEPLOYMENT_NAME))!;
  // A second worker for another agent as another build of the same deployment: it polls, but the
  // server routes no queue of it (the current build is the first worker's).
  const late = spawned(['worker', '--agents', AGENTS_FILE, '--workspace', path.join(home, 'late-workspace'), '--build-id', 'late-build', ...at()], { ROUTING_AGENT: 'nu-late' });
  await late.until(/worker: deployment durable-agent, build late-build/, 'the late worker to start');
  await waitFor(
    'the server to register the late build on its queue',
    async () => {
      const v = await client.workflowService
        .describeWorkerDeploymentVersion({ namespace: 'default', deploymentVersion: { deploymentName: DEFAULT_DEPLOYMENT_NAME, buildId: 'late-build' } })
        .catch(() => undefined);
      return v?.workerDeploymentVersionInfo?.taskQueueInfos?.some((q) => q.name === 'durable-agent.nu-late') || undefined;
    },
    60_000,
  );

  const started = await runCli(['start', 'who serves?', '--agent', 'nu-late', '--script', script('late', [callTool('who_serves', {}), answer('served at last')]), '--id', 'late-1', ...at()], env);
  expect(started.code).toBe(0);
  const cause =
    `no current build serves queue "durable-agent.nu-late" for agent "nu-late": its worker is build late-build of deployment durable-agent, not current ` +
    `(deployment durable-agent's current build is ${ownBuild}, serving durable-agent, durable-agent.nu-own); run this worker in a deployment of its own (durable-agent worker --deployment NAME)`;
  expect(started.stderr).toContain(`note: ${cause}`);
  expect(
    started.stderr
      .trim()
      .split('\n')
      .filter((l) => l.startsWith('note:')),
  ).toHaveLength(1);

  const begun = Date.now();
  const status = await runCli(['status', 'late-1', '--json', ...at()], env);
  expect(status.code).toBe(0);
  const view = JSON.parse(status.stdout) as { note?: string };
  expect(view.note).toContain(cause);
  expect(view.note).not.toContain('busy or stopping');
  // Said at once: no query waited out its deadline on a worker that would never answer.
  expect(Date.now() - begun).toBeLessThan(15_000);

  // The fix the note gives: that worker in a deployment of its own. Its first build makes itself current, and the waiting task runs.
  await stop(late.child);
  const fixed = spawned(['worker', '--agents', AGENTS_FILE, '--workspace', path.join(home, 'late-workspace'), '--deployment', 'my-late-agents', ...at()], { ROUTING_AGENT: 'nu-late' });
  await fixed.until(/worker: deployment my-late-agents, build/, 'the late worker in its own deployment');
  const result = await runCli(['result', 'late-1', '--json', ...at()], env, 120_000);
  expect(result.code).toBe(0);
  expect(JSON.parse(result.stdout)).toMatchObject({ outcome: 'answered', text: 'served at last' });
  expect((await versionOf('late-1')).deploymentName).toBe('my-late-agents');

  // dev's demo queue stayed dev's throughout.
  const demo = await runCli(['start', 'list again', '--agent', 'demo', '--script', script('demo2', [answer('still dev')]), '--id', 'demo-2', ...at()], env);
  expect(demo.stderr).not.toContain('note:');
  const demoResult = await runCli(['result', 'demo-2', '--json', ...at()], env, 120_000);
  expect(JSON.parse(demoResult.stdout)).toMatchObject({ outcome: 'answered', text: 'still dev' });
  expect((await versionOf('demo-2')).deploymentName).toBe(DEV_DEPLOYMENT_NAME);
});
