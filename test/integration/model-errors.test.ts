/**
 * The model side against the real @anthropic-ai/sdk and a fake Messages API: each failure's
 * attempts, class and what a person or the model is told; usage, cost, caching, long answers.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { AgentWorkerOptions } from '../../src/worker/create-worker';
import { fakeErrors, type FakeReply } from '../../src/testing/fake-messages-api';
import type { TaskInput } from '../../src/protocol/task';
import { useHarness, parsedResults, statusWhen } from '../support/harness';
import { useFakeApi } from '../support/fake-api';

const h = useHarness();
const api = useFakeApi();
beforeEach(() => {
  api.requests.length = 0;
  api.clearQueue();
});

const text = (t: string, stopReason?: 'max_tokens'): FakeReply => ({ kind: 'turn', content: [{ type: 'text', text: t }], ...(stopReason ? { stopReason } : {}) });
const use = (id: string, name: string, input: unknown, usage?: { input: number; output: number }): FakeReply => ({
  kind: 'turn',
  content: [{ type: 'tool_use', id, name, input }],
  ...(usage ? { usage } : {}),
});

async function claudeTask(input: Omit<TaskInput, 'agent' | 'model'>, drive?: (taskId: string) => Promise<void>, extra: Partial<AgentWorkerOptions> = {}) {
  const taskId = h.taskId('model');
  const worker = await h.worker(undefined, { modelEnv: { anthropicApiKey: 'sk-ant-test', anthropicBaseURL: api.url }, ...extra });
  return worker.runUntil(async () => {
    await h.client.start({ agent: 'demo', model: { provider: 'anthropic' }, ...input }, { taskId });
    await drive?.(taskId);
    const result = await bounded(h.client.result(taskId), 60_000, async () => {
      const status = await h.client.status(taskId).catch(() => undefined);
      return `task ${taskId} did not finish; blocked: ${JSON.stringify(status?.blocked)}; rejected by the strict fake: ${JSON.stringify(api.rejected.map((r) => r.rejected))}`;
    });
    return { taskId, result, status: await h.client.status(taskId), transcript: await h.client.transcript(taskId) };
  });
}

/** `promise`, or a failure that says why after `ms` (the worker's runUntil then stops). */
async function bounded<T>(promise: Promise<T>, ms: number, why: () => Promise<string>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => void why().then((w) => reject(new Error(w)), reject), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

test('500, a dropped connection and a cut-off body are transient: retried by Temporal, and the task keeps its place', async () => {
  api.enqueue(fakeErrors.internal(), { kind: 'drop_connection' }, { kind: 'truncated' }, text('survived three failures'));
  const { result, status } = await claudeTask({ prompt: 'hello' });
  expect(api.requests).toHaveLength(4);
  expect(result).toMatchObject({ outcome: 'answered', text: 'survived three failures', turns: 1 });
  expect(status.escalations).toEqual([]);
  // Three attempts lost before the one that answered: the task's recovery bill says so.
  expect(status.recovery).toMatchObject({ callsRepeated: 3 });
  // Every attempt sent the same conversation: nothing was lost or duplicated between retries.
  expect(new Set(api.requests.map((r) => JSON.stringify(r.body.messages))).size).toBe(1);
});

test('a slow answer past the request timeout is a transient timeout: the next attempt gets the answer', async () => {
  // biome-ignore lint/suspicious/noThenProperty: the fake API's reply field, never awaited
  api.enqueue({ kind: 'slow', delayMs: 2_000, then: text('too late') }, text('in time'));
  const { result } = await claudeTask({ prompt: 'x' }, undefined, {
    modelEnv: { anthropicApiKey: 'sk-ant-test', anthropicBaseURL: api.url, anthropicTimeoutMs: 500 },
  });
  expect(result.text).toBe('in time');
  expect(api.requests).toHaveLength(2);
});

test('a spend-limit 429 is not retried: the task blocks for a person and goes on after unblock', async () => {
  api.enqueue({ kind: 'error', status: 429, errorType: 'rate_limit_error', message: 'Your credit balance is too low to access the API' }, text('paid up'));
  const { result, status } = await claudeTask({ prompt: 'x' }, async (taskId) => {
    const blocked = await statusWhen(h, taskId, (s) => s.agentStatus === 'blocked');
    expect(blocked.blocked).toMatchObject({ code: 'model_spend_limit' });
    expect(api.requests).toHaveLength(1);
    await h.client.unblock(taskId, { by: 'finance' });
  });
  expect(result.text).toBe('paid up');
  expect(status.decisions[0]).toMatchObject({ by: 'finance', action: 'unblock' });
});

test('400 "prompt is too long": old tool results are compacted and the call is made once more', async () => {
  // 1,500 characters: inline in history (under the claim check's 2,048), so compaction can see them.
  for (const n of [1, 2, 3]) writeFileSync(path.join(h.workspaceDir, `big-${n}.txt`), `${n}`.repeat(1_500));
  api.enqueue(
    use('t1', 'read_file', { path: 'big-1.txt' }),
    use('t2', 'read_file', { path: 'big-2.txt' }),
    use('t3', 'read_file', { path: 'big-3.txt' }),
    fakeErrors.promptTooLong(),
    text('fits now'),
  );
  const { result } = await claudeTask({ prompt: 'read them all' });
  expect(result.text).toBe('fits now');
  const [tooLong, retried] = api.requests.slice(-2);
  expect(JSON.stringify(tooLong!.body.messages)).toContain('1111111111');
  expect(JSON.stringify(retried!.body.messages)).not.toContain('1111111111');
  expect(JSON.stringify(retried!.body.messages)).toContain('removed to fit the context window');
  expect(api.rejected).toEqual([]);
});

// Results over the claim check's 2,048 characters travel as blob markers: compaction measures what they stand for.
test('400 "prompt is too long" with claim-checked (stored) tool results: they are compacted too', async () => {
  for (const n of [1, 2, 3]) writeFileSync(path.join(h.workspaceDir, `huge-${n}.txt`), `${n}`.repeat(3_000));
  api
    .clearQueue()
    .enqueue(
      use('t1', 'read_file', { path: 'huge-1.txt' }),
      use('t2', 'read_file', { path: 'huge-2.txt' }),
      use('t3', 'read_file', { path: 'huge-3.txt' }),
      fakeErrors.promptTooLong(),
      text('fits now'),
    );
  const { result } = await claudeTask({ prompt: 'read them all' }, async (taskId) => {
    const settled = await statusWhen(h, taskId, (s) => s.agentStatus === 'blocked' || s.agentStatus === 'completed');
    try {
      expect(settled.blocked).toBeUndefined();
    } finally {
      // Leave nothing running for the next test: the blocked task is cancelled.
      if (settled.agentStatus === 'blocked') {
        api.clearQueue();
        await h.client.cancel(taskId).catch(() => undefined);
      }
    }
  });
  expect(result.text).toBe('fits now');
});

test('an answer cut at max_tokens is continued, and the parts are joined', async () => {
  api.enqueue(text('The first half, ', 'max_tokens'), text('and the second half.'));
  const { result } = await claudeTask({ prompt: 'write a lot' });
  expect(result).toMatchObject({ outcome: 'answered', text: 'The first half, and the second half.' });
  // Current models refuse an assistant prefill: the continuation is asked for in a user turn.
  expect((api.requests[1]!.body.messages.at(-1) as { role: string }).role).toBe('user');
  expect(JSON.stringify(api.requests[1]!.body.messages.at(-1))).toContain('cut off at the output limit');
  expect(api.rejected).toEqual([]);
});

test('tokens and cost are counted from the price table; a call whose maximum would pass the cost cap is not sent: the task blocks before it', async () => {
  api.enqueue(use('t1', 'list_files', {}, { input: 1_000, output: 100 }), { kind: 'turn', content: [{ type: 'text', text: 'ok' }], usage: { input: 10, output: 10 } });
  const { status, result } = await claudeTask({ prompt: 'x', budgets: { costUsd: 0.0025 } }, async (taskId) => {
    const blocked = await statusWhen(h, taskId, (s) => s.agentStatus === 'blocked');
    // The request's input alone (system, tools, prompt, priced as a cache write) and a short answer would cost more than $0.0025.
    expect(blocked.blocked).toMatchObject({ code: 'cost_budget', reason: expect.stringContaining('The model call was not sent') });
    expect(blocked.costUsd).toBe(0);
    expect(api.requests).toHaveLength(0);
    expect(blocked.budgets.costUsd).toMatchObject({ limit: 0.0025 });
    await h.client.unblock(taskId, { by: 'ana', budget: { costUsd: 0.5 } });
  });
  expect(result).toMatchObject({ outcome: 'answered', usage: { inputTokens: 1_010, outputTokens: 110 } });
  // claude-sonnet-5-5 at its documented $2 / $10 per million: 1000 in + 100 out = $0.003, then 10 + 10.
  expect(status.costUsd).toBeCloseTo(0.003 + 0.00002 + 0.0001, 6);
  // Each call went with a max_tokens its maximum fits in what was left.
  for (const r of api.requests) expect((r.body as { max_tokens: number }).max_tokens).toBeGreaterThan(0);
});

test('the system prompt and tool definitions are sent as a prompt-cache breakpoint', async () => {
  api.enqueue(text('cached'));
  await claudeTask({ prompt: 'x' });
  const body = api.requests[0]!.body as unknown as { system: { cache_control?: unknown }[]; tools: { cache_control?: unknown }[] };
  expect(body.system[0]!.cache_control).toEqual({ type: 'ephemeral' });
  expect(body.tools.at(-1)!.cache_control).toEqual({ type: 'ephemeral' });
  expect(body.tools.slice(0, -1).every((t) => t.cache_control === undefined)).toBe(true);
});

test('a tool result over the size limit is cut before it enters history, with a note saying how much', async () => {
  writeFileSync(path.join(h.workspaceDir, 'huge.txt'), 'x'.repeat(5_000));
  api.enqueue(use('t1', 'read_file', { path: 'huge.txt' }), text('read what I could'));
  const { transcript } = await claudeTask({ prompt: 'x' }, undefined, { maxToolResultChars: 1_000 });
  const [cut] = parsedResults(transcript);
  expect((cut!.cut_result as string).length).toBe(1_000);
  expect(cut!.note).toMatch(/Result cut: the first 1000 of \d+ characters are shown/);
});

test('an unknown model is a 404 from the API: the task blocks (no retry) and goes on after an unblock that names a documented model', async () => {
  api.enqueue(text('answered by a model that exists'));
  const { result, status } = await claudeTask({ prompt: 'x', model: { provider: 'anthropic', model: 'claude-sonnet-9-9' } } as never, async (taskId) => {
    const blocked = await statusWhen(h, taskId, (s) => s.agentStatus === 'blocked');
    expect(blocked.lastError).toMatchObject({ error_class: 'permanent', code: 'model_not_found', retryable: false });
    // Refused by the fake's documented model list, once: a 404 is not retried.
    expect(api.requests.map((r) => [r.body.model, r.rejected])).toEqual([['claude-sonnet-9-9', 'model: claude-sonnet-9-9']]);
    await h.client.unblock(taskId, { by: 'ops', model: 'claude-sonnet-5-5' });
  });
  expect(result).toMatchObject({ outcome: 'answered', text: 'answered by a model that exists' });
  expect(api.requests.map((r) => r.body.model)).toEqual(['claude-sonnet-9-9', 'claude-sonnet-5-5']);
  expect(status.decisions[0]).toMatchObject({ by: 'ops', action: 'unblock' });
});

test('x-should-retry: false makes a 500 final (the task blocks after one request); x-should-retry: true makes a 409 retried', async () => {
  api.enqueue(
    { kind: 'error', status: 500, errorType: 'api_error', message: 'Internal server error', headers: { 'x-should-retry': 'false' } },
    { kind: 'error', status: 409, errorType: 'api_error', message: 'Conflict, try again', headers: { 'x-should-retry': 'true' } },
    text('third time lucky'),
  );
  const { result } = await claudeTask({ prompt: 'x' }, async (taskId) => {
    const blocked = await statusWhen(h, taskId, (s) => s.agentStatus === 'blocked');
    expect(blocked.lastError).toMatchObject({ error_class: 'permanent', retryable: false, hint: expect.stringContaining('x-should-retry: false') });
    expect(api.requests).toHaveLength(1);
    await h.client.unblock(taskId, { by: 'ops' });
  });
  // After the unblock: the 409 asked for a retry, which Temporal made, and it was answered.
  expect(result).toMatchObject({ outcome: 'answered', text: 'third time lucky' });
  expect(api.requests).toHaveLength(3);
});
