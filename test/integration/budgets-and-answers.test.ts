/**
 * Issue 38's budgets as flags and answers that say what happened, on a real dev server: `start`'s
 * budget flags reach the task, `result` says when it waits on a person.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { useHarness, answer, callTool, spawnWorker } from '../support/harness';
import { runCli, sigkill, spawnCli, waitFor } from '../support/processes';
import { TaskClient } from '../../src/client/task-client';

jest.setTimeout(120_000);

const h = useHarness();

const at = () => ['--address', h.server.address, '--task-queue', h.taskQueue];

test.each([
  [['--max-tool-calls', 'many'], /--max-tool-calls must be an integer >= 1, got "many"/],
  [['--max-tool-calls', '0'], /--max-tool-calls must be an integer >= 1, got "0"/],
  [['--max-tool-calls', '2000000'], /--max-tool-calls must be at most 1000000/],
  [['--max-cost-usd=-1'], /--max-cost-usd must be a positive number of US dollars up to 1000000 \(e\.g\. 2\.50\), got "-1"/],
  [['--max-cost-usd', '0'], /--max-cost-usd must be a positive number/],
  [['--max-cost-usd', '$5'], /--max-cost-usd must be a positive number/],
  [['--max-cost-usd', '1e9'], /--max-cost-usd must be a positive number/],
])('start %j is a one-line usage error (exit 2)', async (flags, message) => {
  const run = await runCli(['start', 'x', '--agent', 'demo', ...flags, ...at()]);
  expect(run.code).toBe(2);
  expect(run.stderr.trim().split('\n')).toHaveLength(1);
  expect(run.stderr).toMatch(message);
});

test('start --max-tool-calls and --max-cost-usd set the task budgets: the second tool call blocks the task', async () => {
  const script = h.script([callTool('list_files', {}), callTool('list_files', { dir: 'inbox' }), answer('done')]);
  const worker = await h.worker();
  await worker.runUntil(async () => {
    const started = await runCli(['start', 'list twice', '--agent', 'demo', '--script', script, '--id', 'flags-budget', '--max-tool-calls', '1', '--max-cost-usd', '2.50', '--json', ...at()]);
    expect(started.code).toBe(0);
    const blocked = await waitFor('the tool-call block', async () => {
      const status = JSON.parse((await runCli(['status', 'flags-budget', '--json', ...at()])).stdout).status;
      return status?.agentStatus === 'blocked' ? status : undefined;
    });
    expect(blocked.budgets.toolCalls).toMatchObject({ used: 1, limit: 1, left: 0 });
    expect(blocked.budgets.costUsd).toMatchObject({ limit: 2.5 });
    await h.client.cancel('flags-budget');
  });
});

test('result on a task waiting on a person says so once on stderr, keeps waiting, then prints the result', async () => {
  const script = h.script([callTool('delete_file', { path: 'inbox/customer-note.txt' }), answer('deleted')]);
  const worker = await h.worker();
  await worker.runUntil(async () => {
    await runCli(['start', 'delete the note', '--agent', 'demo', '--script', script, '--id', 'result-waits', '--json', ...at()]);
    const result = spawnCli(['result', 'result-waits', ...at()]);
    let stdout = '';
    let stderr = '';
    result.stdout!.on('data', (d) => (stdout += d));
    result.stderr!.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => result.on('exit', resolve));
    await waitFor('the waiting line', () => (stderr.includes('waiting on a person') ? true : undefined));
    // Several polls later it has still said it once.
    await new Promise((r) => setTimeout(r, 5_000));
    expect(stderr.match(/waiting on a person/g)).toHaveLength(1);
    expect(stderr).toMatch(/waiting on a person \(awaiting approval\): .*delete_file.*durable-agent approve\|deny result-waits --as NAME/);
    expect(stdout).toBe('');
    const approved = await runCli(['approve', 'result-waits', '--as', 'ana', ...at()]);
    expect(approved.code).toBe(0);
    expect(await exited).toBe(0);
    expect(stdout).toContain('deleted');
    expect(stderr.trim().split('\n')).toHaveLength(1);
  });
});

/** An agents module whose agent answers with a model object of its own, exported as `models`. */
const CUSTOM_MODEL_MODULE = `import { defineAgent } from 'durable-agent';
export const models = {
  shouter: {
    id: 'shouter',
    async complete({ messages }) {
      const prompt = String(messages[0].content);
      return { content: [{ type: 'text', text: prompt.toUpperCase() }], stopReason: 'end_turn', usage: { inputTokens: 1, outputTokens: 1 }, model: 'shouter' };
    },
  },
};
export default [defineAgent({ name: 'shouting', system: 'You shout.', tools: [], model: { provider: 'custom', name: 'shouter' } })];
`;

test('worker --agents uses the models an agents module exports: a task of its agent runs on the custom model', async () => {
  const file = path.join(h.tmpDir, 'custom-model-agents.mjs');
  writeFileSync(file, CUSTOM_MODEL_MODULE);
  const taskQueue = `${h.taskQueue}-custom-model`;
  const worker = spawnWorker(h, ['--agents', file, '--task-queue', taskQueue]);
  let stderr = '';
  worker.stderr!.on('data', (d) => (stderr += d));
  try {
    const client = new TaskClient(h.client.client, taskQueue);
    const taskId = h.taskId('custom-model');
    await client.start({ agent: 'shouting', prompt: 'hello there' }, { taskId });
    const result = await Promise.race([client.result(taskId), new Promise<never>((_, reject) => worker.once('exit', (code) => reject(new Error(`the worker exited with ${code}:\n${stderr}`))))]);
    expect(result).toMatchObject({ outcome: 'answered', text: 'HELLO THERE' });
    expect((await client.status(taskId)).model).toBe('shouter');
  } finally {
    await sigkill(worker);
  }
});

test.each([
  [
    'a custom model the module does not export',
    "export default [defineAgent({ name: 'lost', system: 's', tools: [], model: { provider: 'custom', name: 'nowhere' } })];",
    /agent "lost" uses the custom model "nowhere", which .* does not export in `models`/,
  ],
  [
    'models that are not models',
    "export const models = { broken: { id: 'broken' } };\nexport default [defineAgent({ name: 'ok', system: 's', tools: [] })];",
    /models\["broken"\] is not a model: a model is an object with a string `id` and a `complete\(request\)` method/,
  ],
  [
    'a model whose capabilities are not allowed',
    "export const models = { mine: { id: 'mine', capabilities: { nativeCompaction: 'yes' }, async complete() { return {}; } } };\nexport default [defineAgent({ name: 'ok', system: 's', tools: [], model: { provider: 'custom', name: 'mine' } })];",
    /--agents: models\["mine"\]: capabilities\.nativeCompaction must be true or false, got "yes"/,
  ],
  [
    'a policy that is not allowed',
    "export default [defineAgent({ name: 'lax', system: 's', tools: [], policy: { write: 'bogus' } })];",
    /Agent "lax": policy\.write must be one of 'allow', 'confirm', 'deny', 'auto', got "bogus"/,
  ],
])('worker --agents with %s: one line, exit 2, before connecting', async (what, body, message) => {
  const file = path.join(h.tmpDir, `bad-${what.replace(/\W+/g, '-')}.mjs`);
  writeFileSync(file, `import { defineAgent } from 'durable-agent';\n${body}\n`);
  const run = await runCli(['worker', '--agents', file, '--address', '127.0.0.1:1']);
  expect(run.code).toBe(2);
  expect(run.stderr.trim().split('\n')).toHaveLength(1);
  expect(run.stderr).toMatch(message);
});

test('with no worker, approve, a second approve, message and cancel each say "recorded without a worker" (exit 5); the second says it is behind the first, and status later calls it superseded', async () => {
  const script = h.script([callTool('delete_file', { path: 'inbox/customer-note.txt' }), answer('deleted')]);
  const taskId = 'answers-no-worker';
  const worker = await h.worker();
  await worker.runUntil(async () => {
    await runCli(['start', 'delete the note', '--agent', 'demo', '--script', script, '--id', taskId, '--json', ...at()]);
    await waitFor('the approval', async () => ((await h.client.status(taskId)).pendingApprovals.length ? true : undefined));
  });
  // Every worker is down now.
  const first = await runCli(['approve', taskId, '--as', 'ana', '--json', ...at()]);
  expect(first.code).toBe(5);
  expect(JSON.parse(first.stdout)).toMatchObject({ outcome: 'recorded', applied: false, recorded: true });
  expect(JSON.parse(first.stdout).behind).toBeUndefined();
  const second = await runCli(['deny', taskId, '--as', 'bob', '--reason', 'keep it', ...at()]);
  expect(second.code).toBe(5);
  expect(second.stdout).toMatch(
    /^recorded without a worker; it applies when a worker runs the task .*; behind a decision recorded first on the same approval \(approve by ana\): if that one is taken, this one is superseded/,
  );
  const secondJson = await runCli(['approve', taskId, '--as', 'carl', '--json', ...at()]);
  expect(JSON.parse(secondJson.stdout)).toMatchObject({
    outcome: 'recorded',
    behind: [
      { action: 'approve', by: 'ana' },
      { action: 'deny', by: 'bob' },
    ],
  });
  const message = await runCli(['message', taskId, 'thanks', '--as', 'ana', '--json', ...at()]);
  expect(message.code).toBe(5);
  expect(JSON.parse(message.stdout)).toMatchObject({ taskId, outcome: 'recorded', note: expect.stringMatching(/^recorded without a worker/) });

  const again = await h.worker();
  await again.runUntil(async () => {
    expect(await h.client.result(taskId)).toMatchObject({ outcome: 'answered', text: 'deleted' });
    const status = JSON.parse((await runCli(['status', taskId, '--json', ...at()])).stdout).status;
    expect((await runCli(['status', taskId, ...at()])).stdout).toContain('message from ana: thanks [applied]');
    expect(status.approvals).toEqual([expect.objectContaining({ decision: 'approved', by: 'ana' })]);
    expect(status.decisions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ action: 'deny', by: 'bob', outcome: 'superseded' }),
        expect.objectContaining({ action: 'approve', by: 'carl', outcome: 'superseded' }),
        // Taken ones say so in the same word the verbs print.
        expect.objectContaining({ action: 'approve', by: 'ana', outcome: 'applied' }),
        expect.objectContaining({ action: 'message', by: 'ana', outcome: 'applied' }),
      ]),
    );
  });
});

test('cancel says what happened: recorded without a worker (exit 5); --json carries the same word; a closed task is refused (exit 1)', async () => {
  const script = h.script([callTool('delete_file', { path: 'inbox/customer-note.txt' }), answer('deleted')]);
  const taskId = 'answers-cancel';
  const worker = await h.worker();
  await worker.runUntil(async () => {
    await runCli(['start', 'delete the note', '--agent', 'demo', '--script', script, '--id', taskId, '--json', ...at()]);
    await waitFor('the approval', async () => ((await h.client.status(taskId)).pendingApprovals.length ? true : undefined));
  });
  const cancelled = await runCli(['cancel', taskId, '--json', ...at()]);
  expect(cancelled.code).toBe(5);
  expect(JSON.parse(cancelled.stdout)).toMatchObject({ taskId, outcome: 'recorded', note: expect.stringMatching(/^recorded without a worker/) });
  const again = await h.worker();
  await again.runUntil(async () => {
    await waitFor('the task cancelled', async () => ((await h.client.describe(taskId)).executionStatus === 'CANCELLED' ? true : undefined));
  });
  const closed = await runCli(['cancel', taskId, '--json', ...at()]);
  expect(closed.code).toBe(1);
  expect(JSON.parse(closed.stdout)).toMatchObject({ outcome: 'refused', reason: expect.stringMatching(/is cancelled; there is nothing to cancel/) });
});

test('with no worker, a second unblock says it is behind the first, and an interrupt is recorded (exit 5)', async () => {
  const script = h.script([callTool('list_files', {}), callTool('list_files', { dir: 'inbox' }), answer('done')]);
  const taskId = 'answers-unblock';
  const worker = await h.worker();
  await worker.runUntil(async () => {
    await runCli(['start', 'list twice', '--agent', 'demo', '--script', script, '--id', taskId, '--max-tool-calls', '1', '--json', ...at()]);
    await waitFor('the block', async () => ((await h.client.status(taskId)).blocked ? true : undefined));
  });
  const first = await runCli(['unblock', taskId, '--as', 'ana', '--tool-calls', '5', '--json', ...at()]);
  expect(first.code).toBe(5);
  expect(JSON.parse(first.stdout)).toMatchObject({ outcome: 'recorded' });
  const second = await runCli(['unblock', taskId, '--as', 'bob', '--tool-calls', '9', '--json', ...at()]);
  expect(second.code).toBe(5);
  expect(JSON.parse(second.stdout)).toMatchObject({
    outcome: 'recorded',
    behind: [{ action: 'unblock', by: 'ana' }],
    note: expect.stringMatching(/behind a decision recorded first on the same block \(unblock by ana\)/),
  });
  const interrupt = await runCli(['interrupt', taskId, 'wrap up', '--as', 'ana', ...at()]);
  expect(interrupt.code).toBe(5);
  expect(interrupt.stdout).toMatch(/^interrupt to answers-unblock \(unsigned\): recorded without a worker/);
  const again = await h.worker();
  await again.runUntil(async () => {
    expect(await h.client.result(taskId)).toMatchObject({ outcome: 'answered' });
    const status = await h.client.status(taskId);
    expect(status.budgets.toolCalls.limit).toBe(5);
    expect(status.decisions).toEqual(expect.arrayContaining([expect.objectContaining({ action: 'unblock', by: 'bob', outcome: 'superseded' })]));
  });
});
