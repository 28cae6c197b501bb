/**
 * Issue 27 item 5: what `status --json`, `list --json` and `result --json` really print, from the
 * real CLI against a real dev server, in each state a script meets (waiting for an approval,
 * blocked, answered after a decision, failed, no worker to answer), validated against the JSON
 * Schemas published in schemas/. The schemas refuse fields they do not name, so a new field in the
 * output fails here until the schema (src/cli/json-output.ts) says what it is.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import { useHarness, answer, callTool, runInBackground, statusWhen } from '../support/harness';
import { runCli } from '../support/processes';

jest.setTimeout(180_000);

const h = useHarness();
const validators: Record<'status' | 'list' | 'result', ValidateFunction> = {} as never;

beforeAll(async () => {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  for (const name of ['status', 'list', 'result'] as const) {
    validators[name] = ajv.compile(JSON.parse(readFileSync(path.resolve(__dirname, `../../schemas/${name}.schema.json`), 'utf8')));
  }
});

const at = () => ['--address', h.server.address, '--task-queue', h.taskQueue];

/** Runs the CLI, parses its stdout and checks it against the published schema; returns the parsed value. */
async function printed(schema: keyof typeof validators, args: string[], expectedCode = 0): Promise<any> {
  const run = await runCli([...args, '--json', ...at()]);
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: expectedCode, stderr: '' });
  const value = JSON.parse(run.stdout);
  const validate = validators[schema];
  if (!validate(value)) throw new Error(`${args.join(' ')} --json does not match schemas/${schema}.schema.json: ${JSON.stringify(validate.errors, null, 2)}`);
  return value;
}

test('a task waiting for an approval, approved, then answered: status, list and result print what their schemas describe', async () => {
  const taskId = h.taskId('json-approval');
  const script = h.script([callTool('delete_file', { path: 'inbox/customer-note.txt' }), answer('deleted')]);
  const worker = runInBackground(await h.worker());
  try {
    await h.client.start({ agent: 'demo', prompt: 'delete the note', model: { provider: 'scripted', script } }, { taskId });
    const waiting = await statusWhen(h, taskId, (s) => s.pendingApprovals.length === 1);

    const view = await printed('status', ['status', taskId]);
    expect(view.status).toMatchObject({ agentStatus: 'awaiting_approval', pendingApprovals: [{ tool: 'delete_file', input: { path: 'inbox/customer-note.txt' } }] });
    const listed = await printed('list', ['list', '--status', 'awaiting_approval']);
    expect(listed.map((t: { taskId: string }) => t.taskId)).toContain(taskId);

    await h.client.approve(taskId, { approvalId: waiting.pendingApprovals[0]!.id, by: 'ana', comment: 'fine' });
    const result = await printed('result', ['result', taskId]);
    expect(result).toMatchObject({ outcome: 'answered', text: 'deleted', toolCalls: 1 });

    const done = await printed('status', ['status', taskId]);
    expect(done.status).toMatchObject({ agentStatus: 'completed', approvals: [{ decision: 'approved', by: 'ana', comment: 'fine' }] });
    expect(done.summary).toMatchObject({ taskId, executionStatus: 'COMPLETED' });
    expect(done.summary.closeTime).toEqual(expect.any(String));
  } finally {
    await worker.stop();
  }
});

test('a blocked task with a tool error: status prints the block, the last error and the escalation its schema describes', async () => {
  const taskId = h.taskId('json-blocked');
  const script = h.script([callTool('search_orders', { customer_id: 'C-9921', status: 'shipping' }), answer('never reached')]);
  const worker = runInBackground(await h.worker());
  try {
    await h.client.start({ agent: 'demo', prompt: 'find orders', model: { provider: 'scripted', script }, maxTurns: 1 }, { taskId });
    await statusWhen(h, taskId, (s) => s.agentStatus === 'blocked');
    const view = await printed('status', ['status', taskId]);
    expect(view.status.blocked).toMatchObject({ level: 'block' });
    expect(view.status.lastError).toMatchObject({ error_class: 'model' });
    expect(view.status.events.map((e: { kind: string }) => e.kind)).toContain('tool_failed');
    await printed('list', ['list', '--status', 'blocked']);
  } finally {
    await worker.stop();
  }
});

test('a failed task: result prints { failure } with exit code 1, and status the failure, as their schemas describe', async () => {
  const taskId = h.taskId('json-failed');
  const worker = runInBackground(await h.worker());
  try {
    await h.client.start({ agent: 'demo', prompt: 'x', model: { provider: 'scripted', script: '/etc/passwd.json' } }, { taskId });
    const result = await printed('result', ['result', taskId], 1);
    expect(result.failure).toMatchObject({ error_class: 'permanent', code: 'script_refused' });
    expect(result.failure.detail).toContain('DURABLE_AGENT_SCRIPT_DIRS');
    const view = await printed('status', ['status', taskId]);
    expect(view.summary.executionStatus).toBe('FAILED');
  } finally {
    await worker.stop();
  }
});

test('with no worker to answer, status prints what history says and the note its schema describes', async () => {
  const taskId = h.taskId('json-no-worker');
  await h.client.start({ agent: 'demo', prompt: 'x', model: { provider: 'scripted', script: h.script([answer('hi')]) } }, { taskId });
  const view = await printed('status', ['status', taskId]);
  expect(view.status).toBeUndefined();
  expect(view.note).toEqual(expect.any(String));
  expect(view.summary).toMatchObject({ taskId, executionStatus: 'RUNNING' });
  await h.client.cancel(taskId).catch(() => undefined);
});
