/**
 * Issue 38 ("Outputs keep their schema"): every verb's --json output, printed by the real CLI
 * against a real dev server, validated against the JSON Schemas committed in schemas/, at the
 * sizes where optional parts appear: a long task whose conversation was summarised (`context`,
 * `budgets.summaryTokens`, archived events), a lead with a sub-agent child waiting on a person
 * (`children`, `nested`, a decision taken on the child), a fork and a rewind (`lineage`, `forks`),
 * requests applied, queued, refused and recorded without a worker, schedules, memory, purge,
 * replay, eval, deploy and the demo. The last test fails unless every published schema met real
 * output here, so a verb given a schema is also given a run.
 */
import { runMain, type CliOutput } from '../support/cli-in-process';
import { mkdtempSync, readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import { defineAgent } from '../../src/agents/define-agent';
import { PUBLISHED_SCHEMAS } from '../../src/cli/json-schemas';
import { createDemoAgent } from '../../src/demo/demo-agent';
import { deploymentStatus } from '../../src/deploy/deployment';
import { useHarness, answer, callTool, runInBackground, statusWhen, type Harness } from '../support/harness';
import { createLongAgent } from '../support/long-agents';
import { runCli, runCliWithInput, waitFor } from '../support/processes';
import teamAgents from '../support/team-agents';

jest.setTimeout(300_000);

const SCHEMAS = path.resolve(__dirname, '../../schemas');
// Stopped while the server is up: afterAll hooks run in the order they are declared, the harness's below.
afterAll(async () => {
  await worker?.stop();
});
const h = useHarness();
let worker: { stop(): Promise<void> } | undefined;
const validators: Record<string, ValidateFunction> = {};
/** The schema files real output was validated against. */
const met = new Set<string>();

const rememberer = defineAgent({ name: 'rememberer', system: 'You keep notes in /memories.', tools: [], memory: true });

beforeAll(async () => {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  for (const file of Object.keys(PUBLISHED_SCHEMAS)) validators[file] = ajv.compile(JSON.parse(readFileSync(path.join(SCHEMAS, file), 'utf8')));
  const agents = [
    createDemoAgent({ workspaceDir: h.workspaceDir, ordersUrl: h.orders.url }),
    createLongAgent(400),
    ...teamAgents({ workspaceDir: h.workspaceDir }, { ordersUrl: h.orders.url, researcherScript: h.script([callTool('delete_file', { path: 'inbox/customer-note.txt' }), answer('deleted it')]) }),
    rememberer,
    // The `auto` mode with the agent's own classifier: its verdicts are `tool_classified` events.
    defineAgent({
      name: 'classified',
      system: 'You write files.',
      tools: createDemoAgent({ workspaceDir: h.workspaceDir, ordersUrl: h.orders.url }).tools.filter((t) => t.name === 'write_file'),
      policy: { write: 'auto', classifier: () => ({ verdict: 'allow', reason: 'a note the task asks for' }) },
    }),
    // A graded outcome (docs/outcomes.md) whose scripted grader fails every answer: outcome_failed, both grades in status and result.
    defineAgent({
      name: 'graded',
      system: 'You answer.',
      tools: [],
      outcome: {
        rubric: 'The answer names a delivery date.',
        maxAttempts: 2,
        grader: { provider: 'scripted', script: h.script([answer('{"pass": false, "score": 0.2, "reasons": "no delivery date"}')]) },
      },
    }),
  ];
  worker = runInBackground(await h.worker(agents));
});

const at = () => ['--address', h.server.address, '--task-queue', h.taskQueue];
const blobs = () => ['--blob-store', `file:${path.join(h.tmpDir, 'blobs')}`];

/** Checks `value` against schemas/FILE; returns it. */
function valid(file: string, value: unknown): any {
  const validate = validators[file];
  if (!validate) throw new Error(`no schema ${file}`);
  if (!validate(value)) throw new Error(`${JSON.stringify(value).slice(0, 2_000)}\ndoes not match schemas/${file}: ${JSON.stringify(validate.errors, null, 2)}`);
  met.add(file);
  return value;
}

/** Runs the CLI in this process (with --json unless told not to) and the harness's server and queue: its exit code and stdout. */
function run(args: string[], options: { json?: boolean } = {}): Promise<CliOutput> {
  return runMain([...args, ...(options.json === false ? [] : ['--json']), ...at()]);
}

/** One --json object from the CLI, with the exit code expected, validated against schemas/FILE. */
async function printed(file: string, args: string[], expectedCode = 0): Promise<any> {
  const { code, out, err } = await run(args);
  if (code !== expectedCode) throw new Error(`durable-agent ${args.join(' ')} --json: exit ${code}, expected ${expectedCode}\n${out}\n${err}`);
  return valid(file, JSON.parse(out));
}

/** JSON Lines from the CLI (watch, start --watch), each validated against schemas/watch.schema.json. */
function lines(out: string): any[] {
  return out
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => valid('watch.schema.json', JSON.parse(l)));
}

const demoTask = async (prefix: string, script: Parameters<Harness['script']>[0], extra: { maxTurns?: number } = {}) => {
  const taskId = h.taskId(prefix);
  await h.client.start({ agent: 'demo', prompt: `json ${prefix}`, model: { provider: 'scripted', script: h.script(script) }, ...extra }, { taskId });
  return taskId;
};
const deleteNote = () => [callTool('delete_file', { path: 'inbox/customer-note.txt' }), answer('deleted')];

let small: string;

test('a long task, started and watched: start --watch prints JSON Lines; status (with --all) prints context, summaryTokens and archived events; list and result', async () => {
  const pages = 50;
  const script = h.script([...Array.from({ length: pages }, (_, page) => callTool('big_read', { offset: page })), answer('read it all')]);
  const taskId = h.taskId('json-long');
  const { code, out } = await run(['start', 'Read the whole document.', '--agent', 'long', '--script', script, '--max-turns', '80', '--id', taskId, '--watch']);
  expect(code).toBe(0);
  const watched = lines(out);
  expect(watched.at(-1)).toMatchObject({ result: { outcome: 'answered', text: 'read it all', toolCalls: pages } });
  expect(watched.some((l) => l.event?.kind === 'tool_succeeded')).toBe(true);

  // A closed task's status query replays its 50 turns on the worker: on a loaded machine that can pass
  // the CLI's 5 s query deadline, and the view says so (note) without `status`. Asked again until answered.
  let view = await printed('status.schema.json', ['status', taskId, ...blobs()]);
  for (let attempt = 1; attempt < 5 && !view.status; attempt++) view = await printed('status.schema.json', ['status', taskId, ...blobs()]);
  expect(view.status.context.summaries.count).toBeGreaterThanOrEqual(1);
  expect(view.status.budgets.summaryTokens).toEqual(expect.objectContaining({ limit: expect.any(Number) }));
  expect(view.status.eventCount).toBeGreaterThan(view.status.events.length);
  const all = await printed('status.schema.json', ['status', taskId, '--all', ...blobs()]);
  expect(all.archived.length).toBeGreaterThan(0);

  lines((await run(['watch', taskId, ...blobs()])).out);
  expect(await printed('result.schema.json', ['result', taskId])).toMatchObject({ outcome: 'answered', toolCalls: pages });
  // Visibility may lag the close by a moment.
  await waitFor('list to show the task', async () => {
    const listed = await printed('list.schema.json', ['list', '--agent', 'long', ...blobs()]);
    return listed.some((t: { taskId: string }) => t.taskId === taskId) || undefined;
  });
});

test('an auto-mode task: start --watch and status print its tool_classified events', async () => {
  const taskId = h.taskId('json-auto');
  const script = h.script([callTool('write_file', { path: 'json-auto.txt', content: 'x' }), answer('written')]);
  const { code, out } = await run(['start', 'Write json-auto.txt.', '--agent', 'classified', '--script', script, '--id', taskId, '--watch']);
  expect(code).toBe(0);
  expect(lines(out).filter((l) => l.event?.kind === 'tool_classified')).toEqual([
    expect.objectContaining({ event: expect.objectContaining({ tool: 'write_file', detail: 'allow (function): a note the task asks for' }) }),
  ]);
  const view = await printed('status.schema.json', ['status', taskId]);
  expect(view.status.events.filter((e: { kind: string }) => e.kind === 'tool_classified')).toHaveLength(1);
});

test('start prints the task it started; approve and deny print applied; message and interrupt applied or queued; cancel applied', async () => {
  const started = await printed('start.schema.json', ['start', 'delete the note', '--agent', 'demo', '--script', h.script(deleteNote())]);
  expect(started).toMatchObject({ taskQueue: h.taskQueue, taskId: expect.any(String) });
  await statusWhen(h, started.taskId, (s) => s.pendingApprovals.length === 1);
  expect(await printed('decision.schema.json', ['approve', started.taskId, '--as', 'ana'])).toMatchObject({ outcome: 'applied', answer: { decision: 'approved' } });
  await h.client.result(started.taskId);

  const denied = await demoTask('json-deny', deleteNote());
  await statusWhen(h, denied, (s) => s.pendingApprovals.length === 1);
  expect(await printed('decision.schema.json', ['deny', denied, '--as', 'ana', '--reason', 'keep it'])).toMatchObject({ outcome: 'applied', answer: { decision: 'denied' } });

  const steered = await demoTask('json-steer', deleteNote());
  await statusWhen(h, steered, (s) => s.pendingApprovals.length === 1);
  const message = await printed('steering.schema.json', ['message', steered, 'keep it short', '--as', 'ana']);
  expect(['applied', 'queued']).toContain(message.outcome);
  expect(message.signed).toBe(false);
  const interrupt = await printed('steering.schema.json', ['interrupt', steered, 'stop and answer', '--as', 'ana']);
  expect(['applied', 'queued']).toContain(interrupt.outcome);
  expect(await printed('cancel.schema.json', ['cancel', steered])).toMatchObject({ taskId: steered, outcome: expect.stringMatching(/applied|queued/) });
});

test('a blocked task: unblock prints applied; on a closed task approve, message and cancel print refused with exit 1', async () => {
  const blocked = await demoTask('json-unblock', [callTool('search_orders', { customer_id: 'C-9921', status: 'shipping' }), callTool('search_orders', { customer_id: 'C-9921' }), answer('found')], {
    maxTurns: 1,
  });
  await statusWhen(h, blocked, (s) => s.agentStatus === 'blocked');
  expect(await printed('decision.schema.json', ['unblock', blocked, '--as', 'ana', '--turns', '5'])).toMatchObject({ outcome: 'applied', answer: { resumed: true } });
  await h.client.result(blocked);

  expect(await printed('decision.schema.json', ['approve', blocked, 'appr-none', '--as', 'ana'], 1)).toMatchObject({ outcome: 'refused', taskId: blocked });
  expect(await printed('steering.schema.json', ['message', blocked, 'too late', '--as', 'ana'], 1)).toMatchObject({ outcome: 'refused' });
  expect(await printed('cancel.schema.json', ['cancel', blocked], 1)).toMatchObject({ outcome: 'refused' });
});

test('a lead with a sub-agent child waiting on a person: status prints children and nested; approve on the lead is decided on the child; the closed lead prints delegated spend', async () => {
  const lead = h.taskId('json-lead');
  await h.client.start(
    {
      agent: 'lead',
      prompt: 'Work with your team.',
      budgets: { turns: 10, toolCalls: 20 },
      model: { provider: 'scripted', script: h.script([callTool('delegate_to_researcher', { task: 'Delete the note.', budget: { turns: 4, toolCalls: 5 } }), answer('done')]) },
    },
    { taskId: lead },
  );
  await statusWhen(h, lead, (s) => (s.children ?? []).length === 1);
  const nested = await waitFor('the child to wait for an approval', async () => {
    const view = await printed('status.schema.json', ['status', lead, ...blobs()]);
    return view.nested?.[0]?.approvals.length ? view : undefined;
  });
  expect(nested.status.children).toEqual([expect.objectContaining({ agent: 'researcher', state: 'running' })]);
  const approvalId = nested.nested[0].approvals[0].id;
  const decided = await printed('decision.schema.json', ['approve', lead, approvalId, '--as', 'ana']);
  expect(decided).toMatchObject({ outcome: 'applied', decidedOn: nested.nested[0].taskId });
  expect(await printed('result.schema.json', ['result', lead])).toMatchObject({ outcome: 'answered', delegated: expect.any(Object) });
  const closed = await printed('status.schema.json', ['status', lead, ...blobs()]);
  expect(closed.status.children).toEqual([expect.objectContaining({ state: 'completed', spent: expect.any(Object) })]);
  expect(closed.status.delegated).toEqual(expect.objectContaining({ turns: expect.any(Number) }));
});

test('fork and rewind print the new task; the fork prints its lineage, the origin its forks', async () => {
  small = await demoTask('json-small', [callTool('search_orders', { customer_id: 'C-1002' }), answer('two orders')]);
  await h.client.result(small);
  const fork = await printed('fork.schema.json', ['fork', small, '--at-turn', '1', '--as', 'ana', ...blobs()]);
  expect(fork).toMatchObject({ forkedFrom: `${small}@1` });
  await h.client.result(fork.taskId);
  const forked = await printed('status.schema.json', ['status', fork.taskId, ...blobs()]);
  expect(forked.status.lineage).toEqual([expect.objectContaining({ taskId: small, turn: 1 })]);
  expect((await printed('status.schema.json', ['status', small, ...blobs()])).forks).toEqual([expect.objectContaining({ taskId: fork.taskId })]);
  const forks = await waitFor('list to show the fork', async () => {
    const listed = await printed('list.schema.json', ['list', '--forks-of', small, ...blobs()]);
    return listed.length ? listed : undefined;
  });
  expect(forks).toEqual([expect.objectContaining({ taskId: fork.taskId, forkedFrom: `${small}@1` })]);

  const rewound = await printed('rewind.schema.json', ['rewind', fork.taskId, '--to-turn', '1', '--as', 'ana', ...blobs()]);
  expect(rewound).toMatchObject({ forkedFrom: `${fork.taskId}@1`, originalClosed: false });
  await h.client.result(rewound.taskId);
});

test('schedule create, list, trigger, pause, resume, backfill and delete print what their schemas describe', async () => {
  const name = h.taskId('json-schedule');
  const created = await printed('schedule.schema.json', ['schedule', 'create', name, '--every', '1h', '--agent', 'demo', '--note', 'hourly', 'tick']);
  expect(created).toMatchObject({ name, agent: 'demo', paused: false, nextFires: expect.any(Array) });
  expect(await printed('schedule-list.schema.json', ['schedule', 'list'])).toEqual(expect.arrayContaining([expect.objectContaining({ name })]));
  for (const [action, done] of [
    ['trigger', 'triggered'],
    ['pause', 'paused'],
    ['resume', 'resumed'],
  ] as const) {
    expect(await printed('schedule-action.schema.json', ['schedule', action, name])).toEqual({ schedule: name, action: done });
  }
  const from = new Date(Date.now() - 3 * 3_600_000).toISOString();
  const to = new Date(Date.now() - 3_600_000).toISOString();
  expect(await printed('schedule-action.schema.json', ['schedule', 'backfill', name, '--from', from, '--to', to, '--overlap', 'skip'])).toMatchObject({ action: 'backfilled' });
  const described = await waitFor('the schedule to remember its fires', async () => {
    const [view] = (await printed('schedule-list.schema.json', ['schedule', 'list'])).filter((v: { name: string }) => v.name === name);
    return view?.recentTasks.length ? view : undefined;
  });
  expect(described.recentTasks.length).toBeGreaterThan(0);
  expect(await printed('schedule-action.schema.json', ['schedule', 'delete', name])).toEqual({ schedule: name, action: 'deleted' });
  for (const task of described.recentTasks as string[]) await h.client.cancel(task).catch(() => undefined);
});

test('memory list, show and clear print what their schemas describe', async () => {
  const taskId = h.taskId('json-memory');
  await h.client.start(
    {
      agent: 'rememberer',
      prompt: 'remember',
      model: { provider: 'scripted', script: h.script([callTool('memory', { command: 'create', path: '/memories/a.md', file_text: 'The vault code is 4711.' }), answer('noted')]) },
    },
    { taskId },
  );
  await h.client.result(taskId);
  const listed = await printed('memory-list.schema.json', ['memory', 'rememberer', 'list', ...blobs()]);
  expect(listed.files).toEqual([expect.objectContaining({ path: '/memories/a.md', version: 1 })]);
  expect(await printed('memory-show.schema.json', ['memory', 'rememberer', 'show', '/memories/a.md', ...blobs()])).toMatchObject({ content: 'The vault code is 4711.' });
  expect(await printed('memory-clear.schema.json', ['memory', 'rememberer', 'clear', '/memories/a.md', ...blobs()])).toMatchObject({ path: '/memories/a.md', cleared: 1 });
  expect(await printed('memory-clear.schema.json', ['memory', 'rememberer', 'clear', ...blobs()])).toMatchObject({ cleared: 0 });
});

test('a graded task out of attempts: status prints its outcome with every grade, result prints outcome_failed with the grades', async () => {
  const taskId = h.taskId('json-graded');
  await h.client.start({ agent: 'graded', prompt: 'When does o-1 arrive?', model: { provider: 'scripted', script: h.script([answer('soon'), answer('very soon')]) } }, { taskId });
  expect(await printed('result.schema.json', ['result', taskId])).toMatchObject({
    outcome: 'outcome_failed',
    text: 'very soon',
    grades: [
      { attempt: 1, pass: false },
      { attempt: 2, pass: false },
    ],
  });
  const view = await printed('status.schema.json', ['status', taskId]);
  expect(view.status.outcome).toMatchObject({ maxAttempts: 2, attempts: 2, passed: false, grades: [{ reasons: 'no delivery date', score: 0.2 }, { reasons: 'no delivery date' }] });
  expect(view.status.events.filter((e: { kind: string }) => e.kind === 'answer_graded')).toHaveLength(2);
});

test('replay and eval (their own worker, as child processes) print the trajectories and the rows their schemas describe', async () => {
  const env = { DURABLE_AGENT_SCRIPT_DIRS: h.tmpDir, DURABLE_AGENT_BLOB_STORE: `file:${path.join(h.tmpDir, 'blobs')}` };
  const replayed = await runCli(['replay', small, '--as', 'ana', '--json', ...at(), ...blobs()], env, 120_000);
  expect({ code: replayed.code, stderr: replayed.stderr }).toEqual({ code: 0, stderr: '' });
  expect(valid('replay.schema.json', JSON.parse(replayed.stdout)).diff.differences).toEqual([]);

  const dir = mkdtempSync(path.join(h.tmpDir, 'eval-'));
  // export takes no --json: the recording file is its output.
  expect((await run(['export', small, '--as', 'ana', '--out', path.join(dir, 'small.json'), ...blobs()], { json: false })).code).toBe(0);
  const evaluated = await runCli(['eval', dir, '--json', ...at()], env, 120_000);
  expect(evaluated.code).toBe(0);
  expect(valid('eval.schema.json', JSON.parse(evaluated.stdout))).toMatchObject({ passed: true, rows: [expect.objectContaining({ name: 'small', verdict: 'passed' })] });
});

test('without a live worker approve and message print recorded (exit 5); then purge prints what it deleted, one task and all closed ones', async () => {
  const waiting = await demoTask('json-recorded', deleteNote());
  const pending = await statusWhen(h, waiting, (s) => s.pendingApprovals.length === 1);
  await worker!.stop();
  worker = undefined;
  const recorded = await printed('decision.schema.json', ['approve', waiting, pending.pendingApprovals[0]!.id, '--as', 'ana'], 5);
  expect(recorded).toMatchObject({ outcome: 'recorded', recorded: true, taskQueue: h.taskQueue });
  expect(await printed('decision.schema.json', ['deny', waiting, pending.pendingApprovals[0]!.id, '--as', 'bo', '--reason', 'no'], 5)).toMatchObject({
    outcome: 'recorded',
    behind: [{ action: 'approve', by: 'ana' }],
  });
  expect(await printed('steering.schema.json', ['message', waiting, 'later', '--as', 'ana'], 5)).toMatchObject({ outcome: 'recorded' });
  expect(await printed('cancel.schema.json', ['cancel', waiting], 5)).toMatchObject({ outcome: 'recorded' });
  await h.client.client.workflow.getHandle(waiting).terminate('test over');

  expect(await printed('purge-task.schema.json', ['purge', small, ...blobs()])).toMatchObject({ taskId: small, blobs: expect.any(Number) });
  expect(await printed('purge-task.schema.json', ['purge', 'json-ghost', '--force', ...blobs()])).toMatchObject({ blobs: 0, note: 'unknown to Temporal' });
  const purged = await printed('purge-closed.schema.json', ['purge', '--closed-before', new Date(Date.now() + 60_000).toISOString(), ...blobs()]);
  expect(purged.purged.length).toBeGreaterThan(0);
});

test('deploy status, check, promote and rollback print what their schemas describe', async () => {
  const deploymentName = h.taskId('json-deploy');
  const taskQueue = h.taskId('json-deploy-queue');
  // Check records land in this test's folder, not in the project's state folder.
  const env = { DURABLE_AGENT_HOME: path.join(h.tmpDir, 'deploy-home') };
  const deploy = async (file: string, args: string[]) => {
    const cli = await runCli(['deploy', ...args, '--deployment', deploymentName, '--address', h.server.address, '--json'], env, 120_000);
    if (cli.code !== 0) throw new Error(`deploy ${args.join(' ')}: exit ${cli.code}\n${cli.stdout}\n${cli.stderr}`);
    return valid(file, JSON.parse(cli.stdout));
  };
  const j1 = runInBackground(await h.worker(undefined, { taskQueue, versioning: { deploymentName, buildId: 'j1' } }));
  let j2: { stop(): Promise<void> } | undefined;
  try {
    await waitFor(
      'j1 to be current',
      () =>
        deploymentStatus(h.client.client, deploymentName).then(
          (v) => v.current === 'j1' || undefined,
          () => undefined,
        ),
      60_000,
    );
    expect(await deploy('deploy-status.schema.json', ['status'])).toMatchObject({ deploymentName, current: 'j1', builds: [expect.objectContaining({ buildId: 'j1', state: 'current' })] });
    expect(await deploy('deploy-check.schema.json', ['check', h.bundle.codePath, '--build', 'j2'])).toMatchObject({ passed: true, buildId: 'j2' });
    j2 = runInBackground(await h.worker(undefined, { taskQueue, versioning: { deploymentName, buildId: 'j2', bootstrap: false } }));
    await waitFor('the server to know j2', () => deploymentStatus(h.client.client, deploymentName).then((v) => v.builds.some((b) => b.buildId === 'j2') || undefined), 60_000);
    expect(await deploy('deploy-change.schema.json', ['promote', 'j2'])).toMatchObject({ before: { current: 'j1' }, after: { current: 'j2' } });
    expect(await deploy('deploy-change.schema.json', ['rollback'])).toMatchObject({ before: { current: 'j2' }, after: { current: 'j1' } });
  } finally {
    await j2?.stop();
    await j1.stop();
  }
});

test('demo --json (its own worker, on this server) prints the watch lines its schema describes', async () => {
  const port = h.server.address.split(':').at(-1)!;
  const demo = await runCli(['demo', '--json', '--port', port], {}, 180_000);
  expect(demo.code).toBe(0);
  const watched = demo.stdout
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => valid('watch.schema.json', JSON.parse(l)));
  expect(watched.at(-1)).toMatchObject({ result: { outcome: 'answered' } });
});

test('vault set, rotate, list and revoke print what their schemas describe, and never the value', async () => {
  const vault = ['--vault', `file:${path.join(h.tmpDir, 'vault')}`, '--json'];
  const secret = `tok-${Date.now()}-never-printed`;
  const change = async (args: string[], input?: string) => {
    const r = input === undefined ? await runCli(['vault', ...args, ...vault]) : await runCliWithInput(['vault', ...args, ...vault], input);
    if (r.code !== 0) throw new Error(`vault ${args.join(' ')}: exit ${r.code}\n${r.stderr}`);
    expect(r.stdout + r.stderr).not.toContain(secret);
    return JSON.parse(r.stdout);
  };
  expect(valid('vault-change.schema.json', await change(['set', 'github-token'], secret))).toMatchObject({ action: 'set', entry: { name: 'github-token', version: 1 } });
  expect(valid('vault-change.schema.json', await change(['set', 'github-token', '--for', 'ana'], `${secret}-ana`))).toMatchObject({ action: 'set', entry: { name: 'github-token', person: 'ana' } });
  expect(valid('vault-change.schema.json', await change(['rotate', 'github-token'], `${secret}-2`))).toMatchObject({ action: 'rotated', entry: { name: 'github-token', version: 2 } });
  const listed = valid('vault-list.schema.json', await change(['list']));
  expect(listed.entries).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'github-token', version: 2 })]));
  expect(valid('vault-change.schema.json', await change(['revoke', 'github-token']))).toMatchObject({ action: 'revoked', entry: { name: 'github-token' } });
});

test('every published schema met real output in this file', () => {
  expect(Object.keys(PUBLISHED_SCHEMAS).filter((file) => !met.has(file))).toEqual([]);
});
