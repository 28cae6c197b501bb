/**
 * Work routed by agent, with real processes on one real dev server: `durable-agent dev` (reusing
 * the harness's server) serves the demo agent, two `durable-agent worker --agents` children serve
 * one agent each, and tasks for all three never reach a worker that lacks their agent.
 */
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { TaskClient } from '../../src/client/task-client';
import { agentTaskQueue } from '../../src/protocol/definitions';
import { DEV_DEPLOYMENT_NAME } from '../../src/cli/local-stack';
import { useHarness, answer, callTool, parsedResults } from '../support/harness';
import { runCli, spawnCli } from '../support/processes';
import { routingAgent } from '../support/routing-agents';
import { defineAgent } from '../../src/agents/define-agent';
import { createAgentWorker } from '../../src/worker/create-worker';

const AGENTS_FILE = path.join(__dirname, '../support/routing-agents.ts');
const TASKS_PER_AGENT = 20;

// Stopped while the server is up: afterAll hooks run in the order they are declared, the harness's below.
afterAll(async () => {
  await Promise.all(children.map(stop));
});
const h = useHarness();
let client: TaskClient;
const children: ChildProcess[] = [];

beforeAll(async () => {
  // No explicit queue: every task goes to its agent's own queue, as `durable-agent start` does.
  client = new TaskClient(h.client.client);
});

/** Spawns the CLI and resolves with its stderr once a line matches `ready`; rejects if it exits first. */
function spawnUntil(args: string[], ready: RegExp, env: NodeJS.ProcessEnv = {}): Promise<string> {
  const child = spawnCli(args, env);
  children.push(child);
  let stderr = '';
  return new Promise((resolve, reject) => {
    child.stderr!.on('data', (d) => {
      stderr += d;
      if (ready.test(stderr)) resolve(stderr);
    });
    child.on('exit', (code) => reject(new Error(`durable-agent ${args[0]} exited (${code}) before it was ready:\n${stderr}`)));
  });
}

/** SIGTERM (the worker drains), SIGKILL if it is still there after 15 s. */
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

const port = () => h.server.address.split(':').pop()!;

test("dev --reuse on a port where a server already runs says it reused it, and serves tasks on the demo agent's queue alone, in a deployment of its own", async () => {
  const stderr = await spawnUntil(['dev', '--port', port(), '--reuse', '--headless', '--workspace', path.join(h.tmpDir, 'dev-workspace')], /Ready\..*\n.*\n.*\n/);
  expect(stderr).toContain(`Temporal: reusing the server already running at ${h.server.address}`);
  expect(stderr).toContain('(reused: a server was already running on port');
  expect(stderr).toContain('the server keeps running');
  expect(stderr).toContain('Worker: task queue durable-agent.demo (agent "demo"); workspace');
  // The legacy shared queue belongs to the users' own workers' deployment (docs/own-agents.md).
  expect(stderr).not.toContain('tasks started before routing by agent');
  expect(stderr).toContain(`Worker: deployment ${DEV_DEPLOYMENT_NAME}, build `);

  const script = h.script([callTool('list_files', { dir: '.' }), answer('listed')]);
  const routed = await client.start({ agent: 'demo', prompt: 'list', model: { provider: 'scripted', script } });
  await expect(client.result(routed.workflowId)).resolves.toMatchObject({ outcome: 'answered', text: 'listed' });
  expect((await client.describe(routed.workflowId)).taskQueue).toBe('durable-agent.demo');
}, 240_000);

test(`dev and two \`worker --agents\` processes for different agents share one server: ${TASKS_PER_AGENT} tasks for each agent, none fails, each served by its own agent's worker`, async () => {
  if (!children.length) throw new Error('needs the dev process of the previous test');
  const ready = (agent: string) => new RegExp(`task queue durable-agent\\.${agent} \\(agent "${agent}"\\)`);
  const common = ['--address', h.server.address, '--workspace', h.workspaceDir, '--agents', AGENTS_FILE];
  // Two processes serving different agents are two builds (the build follows the agents), and a
  // deployment has one current build: each gets a deployment of its own (docs/own-agents.md).
  const [files, notes] = await Promise.all([
    spawnUntil(['worker', ...common, '--deployment', 'routing-nu-files'], ready('nu-files'), { ROUTING_AGENT: 'nu-files' }),
    spawnUntil(['worker', ...common, '--deployment', 'routing-nu-notes'], ready('nu-notes'), { ROUTING_AGENT: 'nu-notes' }),
  ]);
  expect(files).toContain('durable-agent (agent "nu-files": tasks started before routing by agent)');
  expect(notes).toContain('durable-agent (agent "nu-notes": tasks started before routing by agent)');

  const custom = h.script([callTool('who_serves', {}), answer('served')]);
  const demo = h.script([callTool('list_files', { dir: '.' }), answer('served')]);
  const tasks: { agent: string; taskId: string }[] = [];
  // Interleaved, so that every worker is busy while the others' tasks are started.
  for (let i = 0; i < TASKS_PER_AGENT; i++) {
    for (const agent of ['nu-files', 'nu-notes', 'demo']) {
      const handle = await client.start({ agent, prompt: `task ${i}`, model: { provider: 'scripted', script: agent === 'demo' ? demo : custom } });
      tasks.push({ agent, taskId: handle.workflowId });
    }
  }
  const outcomes = await Promise.allSettled(tasks.map((t) => client.result(t.taskId)));
  const failed = outcomes.flatMap((o, i) => (o.status === 'rejected' ? [`${tasks[i]!.agent} ${tasks[i]!.taskId}: ${(o.reason as Error).message}`] : []));
  expect(failed).toEqual([]);
  expect(outcomes.map((o) => (o.status === 'fulfilled' ? o.value.outcome : 'failed'))).toEqual(tasks.map(() => 'answered'));

  const servedBy = new Map<string, Set<number>>();
  for (const { agent, taskId } of tasks) {
    expect((await client.describe(taskId)).taskQueue).toBe(agentTaskQueue(agent));
    if (agent === 'demo') continue;
    const [result] = parsedResults(await client.transcript(taskId));
    expect(result).toMatchObject({ agent });
    servedBy.set(agent, (servedBy.get(agent) ?? new Set()).add(result!.pid as number));
  }
  // Each agent's calls ran in one process, and not the same one for both agents.
  expect(servedBy.get('nu-files')!.size).toBe(1);
  expect(servedBy.get('nu-notes')!.size).toBe(1);
  expect([...servedBy.get('nu-files')!][0]).not.toBe([...servedBy.get('nu-notes')!][0]);
}, 600_000);

test('a task for an agent no worker serves waits: start, status and list say which agent and queue, and a worker for it then finishes it', async () => {
  const at = ['--address', h.server.address];
  const script = h.script([callTool('who_serves', {}), answer('finally served')]);
  const taskId = h.taskId('ghost');
  const started = await runCli(['start', 'anyone there?', '--agent', 'ghost', '--script', script, '--id', taskId, ...at]);
  expect(started.code).toBe(0);
  expect(started.stdout).toContain(`started ${taskId} on task queue durable-agent.ghost`);
  const waits = 'no worker serves agent "ghost" on queue "durable-agent.ghost"';
  expect(started.stderr).toContain(waits);

  const status = await runCli(['status', taskId, '--json', ...at]);
  expect(status.code).toBe(0);
  const view = JSON.parse(status.stdout);
  expect(view.summary).toMatchObject({ executionStatus: 'RUNNING', agentStatus: 'running', taskQueue: 'durable-agent.ghost' });
  expect(view.note).toContain(waits);
  expect((await runCli(['status', taskId, ...at])).stdout).toContain(`note: ${waits}`);

  const listed = await runCli(['list', '--agent', 'ghost', '--json', ...at]);
  expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ taskId, executionStatus: 'RUNNING', note: expect.stringContaining(waits) })]);
  expect((await runCli(['list', '--agent', 'ghost', ...at])).stdout).toContain(waits);

  // Nothing failed while it waited: the first worker for the agent's queue runs it to the end.
  const worker = await h.worker([routingAgent('ghost')], { taskQueue: agentTaskQueue('ghost') });
  await expect(worker.runUntil(client.result(taskId))).resolves.toMatchObject({ outcome: 'answered', text: 'finally served' });
}, 240_000);

test("an agent that declares its queue is served on it alone, and a client given that queue starts the agent's tasks there", async () => {
  const pinned = defineAgent({ ...routingAgent('pinned'), taskQueue: `team-${h.taskQueue}` });
  const worker = await createAgentWorker({
    agents: [pinned],
    connection: h.connection,
    namespace: 'default',
    workflowBundle: h.bundle,
    blobStore: h.blobStore,
    modelEnv: { scriptRoots: [h.tmpDir] },
    legacyTaskQueue: false,
    // Its agents are not those of the builds already current in the default deployment: one of its own.
    versioning: { deploymentName: 'routing-team' },
  });
  expect(worker.taskQueues).toEqual([`team-${h.taskQueue}`]);
  const script = h.script([callTool('who_serves', {}), answer('pinned served')]);
  const teamClient = new TaskClient(h.client.client, `team-${h.taskQueue}`);
  const result = await worker.runUntil(async () => {
    const handle = await teamClient.start({ agent: 'pinned', prompt: 'who?', model: { provider: 'scripted', script } });
    return teamClient.result(handle.workflowId);
  });
  expect(result).toMatchObject({ outcome: 'answered', text: 'pinned served' });
}, 120_000);

test("`worker` with no server exits 4 with the same one-line hint as `list`, not the transport's error", async () => {
  // Side by side: the client waits out its connect timeout (5 s) for a port nothing listens on.
  // DURABLE_AGENT_SERVER_WAIT=0: no wait for a server that may be starting (no-worker-no-server.test.ts tests the wait and its lines).
  const [worker, list] = await Promise.all([runCli(['worker', '--address', '127.0.0.1:1'], { DURABLE_AGENT_SERVER_WAIT: '0' }), runCli(['list', '--address', '127.0.0.1:1'])]);
  expect(list.code).toBe(4);
  expect(worker.code).toBe(4);
  const lines = worker.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain('Cannot reach Temporal at 127.0.0.1:1 (namespace default)');
  expect(lines[0]).toContain('Start one with `durable-agent dev`, or point TEMPORAL_ADDRESS at your cluster.');
  expect(worker.stderr).not.toMatch(/tonic|transport::Error/);
  // The same line but for the cause each transport reports (the client's connect retries time out; the worker's is refused).
  const hint = (line: string) => line.replace(/^durable-agent \w+: /, '').replace(/\): [^.]+\./, '): <cause>.');
  expect(worker.stderr).toContain('): connection refused.');
  expect(hint(lines[0]!)).toBe(hint(list.stderr.trim()));
}, 120_000);
