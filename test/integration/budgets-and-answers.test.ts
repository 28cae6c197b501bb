/**
 * Issue 38's budgets as flags and answers that say what happened, on a real dev server: `start`'s
 * budget flags reach the task, `result` says when it waits on a person.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { answer, callTool, spawnWorker, startHarness, type Harness } from '../support/harness';
import { runCli, sigkill, spawnCli, waitFor } from '../support/processes';
import { TaskClient } from '../../src/client/task-client';

jest.setTimeout(120_000);

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

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
    'a policy that is not allowed',
    "export default [defineAgent({ name: 'lax', system: 's', tools: [], policy: { write: 'bogus' } })];",
    /Agent "lax": policy\.write must be one of 'allow', 'confirm', 'deny', got "bogus"/,
  ],
])('worker --agents with %s: one line, exit 2, before connecting', async (what, body, message) => {
  const file = path.join(h.tmpDir, `bad-${what.replace(/\W+/g, '-')}.mjs`);
  writeFileSync(file, `import { defineAgent } from 'durable-agent';\n${body}\n`);
  const run = await runCli(['worker', '--agents', file, '--address', '127.0.0.1:1']);
  expect(run.code).toBe(2);
  expect(run.stderr.trim().split('\n')).toHaveLength(1);
  expect(run.stderr).toMatch(message);
});
