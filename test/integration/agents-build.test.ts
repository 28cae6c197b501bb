/**
 * Issue 51 item 1: the agent's version is the app's code. On a real dev server, as a user runs their
 * own agents: a v1 `worker --agents FILE` process with a task waiting on a person; the module is
 * changed (only the module: a new prompt and a new tool description) and a second worker started
 * with no flag at all is a new build, not a second member of v1; `deploy check --agents FILE` derives
 * that build as the worker did and `deploy promote` makes it current; new tasks run on v2 while the
 * waiting v1 task finishes on v1 with v1's tool. A worker that names v1's build with the v2 module is
 * refused with one line before it polls.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { deploymentStatus } from '../../src/deploy/deployment';
import { DEFAULT_DEPLOYMENT_NAME } from '../../src/worker/versioning';
import { answer, callTool, spawnWorker, statusWhen, useHarness } from '../support/harness';
import { runCli, sigkill, waitFor } from '../support/processes';

jest.setTimeout(300_000);

const h = useHarness();
const children: ChildProcess[] = [];
afterAll(async () => {
  for (const child of children) await sigkill(child);
});

/** The user's agents module at `release`: its prompt and its tool's description name the release, and its tool logs which release ran it. */
function agentsModule(release: string, log: string): string {
  return `import { appendFileSync } from 'node:fs';
import { defineAgent, defineTool, jsonSchemaValidator } from 'durable-agent';
const updateDeal = defineTool({
  name: 'update_deal',
  description: 'Updates a deal (${release}).',
  input: jsonSchemaValidator({ type: 'object', properties: { deal: { type: 'string' } }, required: ['deal'] }),
  output: jsonSchemaValidator({ type: 'object' }),
  effect: 'write',
  run: async (input: { deal: string }) => {
    appendFileSync(${JSON.stringify(log)}, '${release} ' + input.deal + '\\n');
    return { updated: input.deal };
  },
});
export default [defineAgent({ name: 'crm', system: 'You keep deals up to date (${release}).', tools: [updateDeal], policy: { write: 'confirm' } })];
`;
}

/** The build a worker process says it runs as, from its start-up line. */
async function buildOf(child: ChildProcess, name: string): Promise<string> {
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`${name} exited with ${code}:\n${stderr}`))));
  return Promise.race([waitFor(`${name}'s build`, () => /build (\S+) \(agentTask pinned\)/.exec(stderr)?.[1], 120_000), exited]);
}

const execution = async (taskId: string) => (await h.client.client.workflowService.describeWorkflowExecution({ namespace: 'default', execution: { workflowId: taskId } })).workflowExecutionInfo;

test('a change to the agents module alone is a new build: v1 tasks finish on v1 with v1 tools, new tasks run on v2 once promoted', async () => {
  const app = path.join(h.tmpDir, 'app');
  mkdirSync(app, { recursive: true });
  const file = path.join(app, 'agents.ts');
  const log = path.join(app, 'calls.log');
  writeFileSync(log, '');
  const cliEnv = { DURABLE_AGENT_HOME: path.join(h.tmpDir, 'home') };

  writeFileSync(file, agentsModule('v1', log));
  const v1Process = spawnWorker(h, ['--agents', file], cliEnv);
  children.push(v1Process);
  const v1 = await buildOf(v1Process, 'the v1 worker');
  await waitFor(
    'v1 to be current',
    () =>
      deploymentStatus(h.client.client, DEFAULT_DEPLOYMENT_NAME).then(
        (s) => s.current === v1 || undefined,
        () => undefined,
      ),
    120_000,
  );

  const waitingId = h.taskId('on-v1');
  await h.client.start(
    { agent: 'crm', prompt: 'Close deal D-1.', model: { provider: 'scripted', script: h.script([callTool('update_deal', { deal: 'D-1' }), answer('D-1 closed.')]) } },
    { taskId: waitingId },
  );
  const waiting = await statusWhen(h, waitingId, (s) => s.pendingApprovals.length > 0, 60_000);
  expect(waiting.build?.buildId).toBe(v1);

  // Only the module changes; the second worker is started exactly as the first.
  writeFileSync(file, agentsModule('v2', log));
  const v2Process = spawnWorker(h, ['--agents', file], cliEnv);
  children.push(v2Process);
  const v2 = await buildOf(v2Process, 'the v2 worker');
  expect(v2).not.toBe(v1);
  // Same engine code: the two builds differ in their agents' part only.
  expect(v2.replace(/-a[0-9a-f]{8}$/, '')).toBe(v1.replace(/-a[0-9a-f]{8}$/, ''));
  expect((await deploymentStatus(h.client.client, DEFAULT_DEPLOYMENT_NAME)).current).toBe(v1);

  // A worker naming v1's build with the v2 module would take v1's pinned tasks with v2's agents: refused before it polls.
  const refused = await runCli(['worker', '--agents', file, '--address', h.server.address, '--task-queue', h.taskQueue, '--build-id', v1], cliEnv);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toMatch(new RegExp(`build ${v1} of deployment ${DEFAULT_DEPLOYMENT_NAME} already serves other agents on queue ${h.taskQueue}`));
  expect(refused.stderr).toContain('drop --build-id');

  // deploy check derives v2's build from the engine this CLI runs and the agents module, as the worker did.
  const check = await runCli(['deploy', 'check', '--agents', file, '--address', h.server.address], cliEnv, 120_000);
  expect({ code: check.code, stderr: check.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
  expect(check.stdout).toContain(`as build ${v2}`);
  const promote = await runCli(['deploy', 'promote', v2, '--address', h.server.address], cliEnv);
  expect(promote.code).toBe(0);

  const newId = h.taskId('on-v2');
  await h.client.start(
    { agent: 'crm', prompt: 'Close deal D-2.', model: { provider: 'scripted', script: h.script([callTool('update_deal', { deal: 'D-2' }), answer('D-2 closed.')]) } },
    { taskId: newId },
  );
  const onV2 = await statusWhen(h, newId, (s) => s.pendingApprovals.length > 0, 60_000);
  expect(onV2.build?.buildId).toBe(v2);
  expect(onV2.agentVersion).not.toBe(waiting.agentVersion);

  for (const [taskId, status] of [
    [waitingId, waiting],
    [newId, onV2],
  ] as const)
    await h.client.approve(taskId, { approvalId: status.pendingApprovals[0]!.id, by: 'ana' });
  expect(await h.client.result(waitingId)).toMatchObject({ outcome: 'answered', text: 'D-1 closed.' });
  expect(await h.client.result(newId)).toMatchObject({ outcome: 'answered', text: 'D-2 closed.' });
  // Each task ran its own release's tool, and stayed on the build it started on.
  expect(readFileSync(log, 'utf8').trim().split('\n').sort()).toEqual(['v1 D-1', 'v2 D-2']);
  expect((await execution(waitingId))?.versioningInfo?.deploymentVersion?.buildId).toBe(v1);
  expect((await execution(newId))?.versioningInfo?.deploymentVersion?.buildId).toBe(v2);
});
