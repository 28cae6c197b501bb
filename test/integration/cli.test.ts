import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { provisionTemporalCli } from '../../src/server/temporal-cli';
import { useHarness, answer, callTool, runTask } from '../support/harness';
import { runCli, spawnCli, waitFor } from '../support/processes';

const exec = promisify(execFile);
const h = useHarness();

const at = () => ['--address', h.server.address, '--task-queue', h.taskQueue];

test('start --watch, status, list and result drive a task end to end from the command line', async () => {
  const script = h.script([callTool('search_orders', { customer_id: 'C-9921', page: '2' }), answer('page 2 read')]);
  const worker = await h.worker();
  await worker.runUntil(async () => {
    const started = await runCli(['start', 'read page 2', '--agent', 'demo', '--script', script, '--id', 'cli-task-1', '--watch', ...at()]);
    expect(started.stderr).toBe('');
    expect(started.code).toBe(0);
    expect(started.stdout).toContain('started cli-task-1');
    expect(started.stdout).toMatch(/→ search_orders \{"customer_id":"C-9921","page":"2"\}/);
    expect(started.stdout).toContain('partial_data: Page 2 returned 5 orders; more exist.');
    expect(started.stdout).toContain('answered after 2 turns and 1 tool calls');

    const status = await runCli(['status', 'cli-task-1', '--json', ...at()]);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout).status).toMatchObject({ agentStatus: 'completed', turn: 2 });

    const result = await runCli(['result', 'cli-task-1', '--json', ...at()]);
    expect(JSON.parse(result.stdout)).toMatchObject({ outcome: 'answered', text: 'page 2 read' });
  });

  const listed = await runCli(['list', '--status', 'completed', '--agent', 'demo', '--json', ...at()]);
  expect(listed.code).toBe(0);
  expect(JSON.parse(listed.stdout).map((t: { taskId: string }) => t.taskId)).toContain('cli-task-1');
  // Each task's build, from the execution's versioning info (the test workers are versioned).
  const listedTask = JSON.parse(listed.stdout).find((t: { taskId: string }) => t.taskId === 'cli-task-1');
  expect(listedTask.build).toEqual(expect.any(String));
  // And the agent version its run took from its worker (the run's memo).
  expect(listedTask.agentVersion).toMatch(/^[0-9a-f]{16}$/);
  const text = await runCli(['list', '--status', 'completed', '--agent', 'demo', ...at()]);
  expect(text.stdout.split('\n')[0]).toMatch(/^TASK\s+AGENT\s+STATUS\s+TEMPORAL\s+BUILD\s+AGENT VERSION\s+STARTED/);
  expect(text.stdout).toContain(listedTask.build);
  expect(text.stdout).toContain(listedTask.agentVersion);
});

test('status of a finished task still answers from history when no worker is running', async () => {
  const { taskId } = await runTask(h, { agent: 'demo', prompt: 'x', script: h.script([callTool('list_files', {}), answer('listed')]) });
  const status = await runCli(['status', taskId, ...at()]);
  expect(status.code).toBe(0);
  expect(status.stdout).toContain('answered after 2 turns and 1 tool calls');
  expect(status.stdout).toContain('listed');
});

test('the plain temporal CLI sees the same task: describe and a list query on AgentStatus/AgentName', async () => {
  const { taskId } = await runTask(h, { agent: 'demo', prompt: 'x', script: h.script([answer('seen')]) });
  const temporal = await provisionTemporalCli();
  const describe = await exec(temporal, ['workflow', 'describe', '-w', taskId, '--address', h.server.address, '-o', 'json']);
  const described = JSON.parse(describe.stdout);
  expect(described.workflowExecutionInfo.type.name).toBe('agentTask');
  expect(described.workflowExecutionInfo.status).toMatch(/COMPLETED/);

  const list = await exec(temporal, ['workflow', 'list', '--address', h.server.address, '-o', 'json', '--query', "AgentStatus = 'completed' AND AgentName = 'demo'"]);
  expect(list.stdout).toContain(taskId);
});

test.each([
  [['frobnicate'], 2, /unknown command "frobnicate"/],
  [['start', 'do it'], 2, /--agent is required/],
  [['start', '--agent', 'demo'], 2, /a prompt is required/],
  [['start', 'x', '--agent', 'demo', '--script', '/nonexistent.json'], 2, /no such file/],
  [['start', 'x', '--agent', 'demo', '--max-turns', 'lots'], 2, /--max-turns must be an integer/],
  [['list', '--status', 'sleeping'], 2, /--status must be one of/],
  [['status'], 2, /missing TASK_ID/],
  [['status', 'a', '--bogus'], 2, /Unknown option '--bogus'/],
])('bad arguments %j exit %i with one clear line', async (args, code, message) => {
  const run = await runCli([...args, ...at()]);
  expect(run.code).toBe(code);
  expect(run.stderr.trim().split('\n')).toHaveLength(1);
  expect(run.stderr).toMatch(message);
});

test('an unknown task id exits 3', async () => {
  const run = await runCli(['status', 'no-such-task', ...at()]);
  expect(run.code).toBe(3);
  expect(run.stderr.trim()).toBe('durable-agent status: No task with id "no-such-task"');
});

test('worker --agents: a missing file or a module without agents is a usage error (exit 2), reported before connecting', async () => {
  const missing = await runCli(['worker', '--agents', 'no/such/agents.ts', '--address', '127.0.0.1:1']);
  expect(missing.code).toBe(2);
  expect(missing.stderr).toContain('--agents: no file');
  const notAgents = path.join(h.tmpDir, 'not-agents.ts');
  writeFileSync(notAgents, 'export default [{ name: "x" }];\n');
  const wrong = await runCli(['worker', '--agents', notAgents, '--address', '127.0.0.1:1']);
  expect(wrong.code).toBe(2);
  expect(wrong.stderr).toContain('must export (default) a non-empty array of defineAgent(...) results');
  const broken = path.join(h.tmpDir, 'broken-agents.ts');
  writeFileSync(broken, 'export default [;\n');
  const unloadable = await runCli(['worker', '--agents', broken, '--address', '127.0.0.1:1']);
  expect(unloadable.code).toBe(2);
  expect(unloadable.stderr).toContain(`--agents: could not load ${broken}`);
});

test('worker --agents hands the module only the worker settings (no demo orders service) and refuses the demo-only flags', async () => {
  const seen = path.join(h.tmpDir, 'agents-module-saw.json');
  const file = path.join(h.tmpDir, 'settings-agents.ts');
  const defineAgentModule = path.join(__dirname, '../../src/agents/define-agent');
  writeFileSync(
    file,
    [
      "import { writeFileSync } from 'node:fs';",
      `import { defineAgent } from ${JSON.stringify(defineAgentModule)};`,
      'export default (env: Record<string, unknown>) => {',
      `  writeFileSync(${JSON.stringify(seen)}, JSON.stringify(env));`,
      "  return [defineAgent({ name: 'settings', system: 's', tools: [] })];",
      '};',
    ].join('\n'),
  );
  const workspace = path.join(h.tmpDir, 'settings-workspace');
  // Loaded before connecting: the unreachable address ends the run after the module has been called.
  const run = await runCli(['worker', '--agents', file, '--workspace', workspace, '--address', '127.0.0.1:1'], { DURABLE_AGENT_SERVER_WAIT: '0' });
  expect(run.code).toBe(4);
  expect(JSON.parse(readFileSync(seen, 'utf8'))).toEqual({ workspaceDir: workspace });

  for (const flag of [
    ['--orders-url', 'http://127.0.0.1:9'],
    ['--orders-fault', 'unavailable'],
  ]) {
    const refused = await runCli(['worker', '--agents', file, ...flag, '--address', '127.0.0.1:1']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('configure the built-in demo agent; they do not go with --agents');
  }
});

test('an unreachable server gives one line naming the address, and exit 4', async () => {
  const run = await runCli(['list', '--address', '127.0.0.1:1']);
  expect(run.code).toBe(4);
  expect(run.stderr.trim().split('\n')).toHaveLength(1);
  expect(run.stderr).toContain('Cannot reach Temporal at 127.0.0.1:1');
});

test('watch shows a pending approval with its arguments and the commands to answer; approve, unblock and message work from the CLI', async () => {
  const script = h.script([callTool('delete_file', { path: 'inbox/customer-note.txt' }), callTool('list_files', { dir: '.' }), answer('all done')]);
  const worker = await h.worker();
  await worker.runUntil(async () => {
    const started = await runCli(['start', 'tidy up', '--agent', 'demo', '--script', script, '--id', 'cli-people', '--max-turns', '2', '--json', ...at()]);
    expect(JSON.parse(started.stdout)).toMatchObject({ taskId: 'cli-people' });
    const watcher = spawnCli(['watch', 'cli-people', ...at()]);
    let seen = '';
    watcher.stdout!.on('data', (d) => (seen += d));
    const watchExit = new Promise<number | null>((resolve) => watcher.on('exit', resolve));
    await waitFor('the approval in watch', () => (seen.includes('APPROVAL NEEDED') ? true : undefined));
    expect(seen).toContain('delete_file [destructive]');
    expect(seen).toContain('arguments: {"path":"inbox/customer-note.txt"}');
    expect(seen).toMatch(/durable-agent approve cli-people \S+ --as YOUR_NAME/);

    const message = await runCli(['message', 'cli-people', 'keep a backup next time', '--as', 'lead', ...at()]);
    expect(message.code).toBe(0);
    const approved = await runCli(['approve', 'cli-people', '--as', 'ana', ...at()]);
    expect(approved.stdout).toMatch(/^approved \S+ on cli-people/);

    await waitFor('the turn-budget block in watch', () => (seen.includes('BLOCKED') ? true : undefined));
    const wrong = await runCli(['unblock', 'cli-people', '--as', 'ana', '--turns', '1', ...at()]);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('refused: budget.turns must be an integer above what is used (2)');
    const unblocked = await runCli(['unblock', 'cli-people', '--as', 'ana', '--turns', '+1', ...at()]);
    expect(unblocked.code).toBe(0);
    // +1 adds one turn to the spent limit of 2, read from the task's status; the answer says so.
    expect(unblocked.stdout).toContain('turns limit 2 -> 3 (added 1; 2 used)');
    expect(await watchExit).toBe(0);
    expect(seen).toContain('all done');

    const status = await runCli(['status', 'cli-people', ...at()]);
    expect(status.stdout).toContain('audit trail:');
    expect(status.stdout).toMatch(/delete_file approved by ana/);
    expect(status.stdout).toContain('message from lead: keep a backup next time');
  });
});
