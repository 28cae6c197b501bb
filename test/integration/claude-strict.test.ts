/**
 * The paths every long task reaches, through the real @anthropic-ai/sdk against the STRICT fake
 * Messages API (a request the real API would refuse is answered 400 there too) and a real Temporal
 * dev server: a spent turn budget, an answer cut at max_tokens, thinking across tool turns, a 400
 * a person fixes with unblock, and a worker killed mid-stream.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { fakeErrors, fakeTurns, type RecordedRequest } from '../../src/testing/fake-messages-api';
import type { TaskInput, TaskResult } from '../../src/protocol/task';
import { useHarness, statusWhen } from '../support/harness';
import { spawnClaudeWorker, useFakeApi } from '../support/fake-api';
import { sigkill, waitFor } from '../support/processes';

const h = useHarness();
const api = useFakeApi(); // strict: the default
beforeEach(() => {
  api.requests.length = 0;
  api.clearQueue();
});

const modelEnv = () => ({ anthropicApiKey: 'sk-ant-test', anthropicBaseURL: api.url });
const claudeWorker = () => h.worker(undefined, { modelEnv: modelEnv() });
const rejections = () => api.rejected.map((r) => r.rejected);

/** `promise`, or a failure that says what the task was doing after `ms`. */
async function bounded<T>(taskId: string, promise: Promise<T>, ms = 60_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      void h.client
        .status(taskId)
        .then((s) => reject(new Error(`task ${taskId} did not finish in ${ms} ms: ${s.agentStatus}, blocked ${JSON.stringify(s.blocked)}, rejected ${JSON.stringify(rejections())}`)), reject);
    }, ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const lastMessage = (r: RecordedRequest) => r.body.messages.at(-1) as { role: string; content: unknown };

test('a task that spends its turn budget blocks; unblock without more turns gets one last call with tools and tool_choice none, and ends budget_exhausted with the final answer', async () => {
  api.enqueue(
    fakeTurns.toolUse('toolu_b1', 'list_files', {}),
    fakeTurns.toolUse('toolu_b2', 'read_file', { path: 'inbox/customer-note.txt' }),
    fakeTurns.text('Final answer: the workspace holds one customer note asking for a shipping summary.'),
  );
  const taskId = h.taskId('strict-budget');
  const worker = await claudeWorker();
  const { result, blocked } = await worker.runUntil(async () => {
    await h.client.start({ agent: 'demo', prompt: 'what is in the workspace?', model: { provider: 'anthropic' }, budgets: { turns: 2 } }, { taskId });
    const blocked = await statusWhen(h, taskId, (s) => s.agentStatus === 'blocked');
    await h.client.unblock(taskId, { by: 'ops', message: 'answer with what you have' });
    return { blocked, result: await bounded(taskId, h.client.result(taskId)) };
  });

  expect(blocked.blocked).toMatchObject({ code: 'turn_budget' });
  expect(result).toMatchObject({
    outcome: 'budget_exhausted',
    text: 'Final answer: the workspace holds one customer note asking for a shipping summary.',
    finalCallWithoutTools: true,
  });
  expect(rejections()).toEqual([]);
  expect(api.requests).toHaveLength(3);
  const last = api.requests[2]!;
  // The history holds tool blocks: the definitions stay, and calling them is forbidden.
  expect(JSON.stringify(last.body.messages)).toContain('"tool_use_id":"toolu_b2"');
  expect(last.body.tools!.map((t) => t.name)).toEqual(expect.arrayContaining(['list_files', 'read_file']));
  expect(last.body.tool_choice).toEqual({ type: 'none' });
  expect(lastMessage(last).role).toBe('user');
  // The earlier calls could use tools.
  expect(api.requests[0]!.body.tool_choice).toBeUndefined();
});

test('an answer cut at max_tokens twice completes with the whole text, and the strict API accepted every request', async () => {
  api.enqueue(
    fakeTurns.cutAtMaxTokens('Part one of the report, '),
    { kind: 'turn', content: [{ type: 'text', text: 'part two of the report, ' }], stopReason: 'max_tokens' },
    fakeTurns.text('and part three.'),
  );
  const taskId = h.taskId('strict-cut');
  const worker = await claudeWorker();
  const result: TaskResult = await worker.runUntil(async () => {
    await h.client.start({ agent: 'demo', prompt: 'write a long report', model: { provider: 'anthropic' } }, { taskId });
    return bounded(taskId, h.client.result(taskId));
  });

  expect(result).toMatchObject({ outcome: 'answered', text: 'Part one of the report, part two of the report, and part three.', turns: 3 });
  expect(rejections()).toEqual([]);
  expect(api.requests).toHaveLength(3);
  for (const request of api.requests.slice(1)) {
    // No prefill: each continuation is asked for in a user turn after the partial answer.
    expect(lastMessage(request).role).toBe('user');
    expect((request.body.messages.at(-2) as { role: string }).role).toBe('assistant');
  }
});

test('with thinking on, a task runs five tool turns and completes; the thinking blocks went back signed and unchanged', async () => {
  for (const n of [1, 2, 3, 4]) writeFileSync(path.join(h.workspaceDir, `strict-think-${n}.txt`), `note ${n}`);
  const turns = [
    fakeTurns.toolUse('toolu_t1', 'list_files', {}),
    fakeTurns.toolUse('toolu_t2', 'read_file', { path: 'strict-think-1.txt' }),
    fakeTurns.toolUse('toolu_t3', 'read_file', { path: 'strict-think-2.txt' }),
    fakeTurns.toolUse('toolu_t4', 'read_file', { path: 'strict-think-3.txt' }),
    fakeTurns.toolUse('toolu_t5', 'read_file', { path: 'strict-think-4.txt' }),
  ];
  api.enqueue(
    ...turns.map((t, i) => fakeTurns.thinking(`Step ${i + 1}: I should look at the next file.`, t, i === 2)),
    fakeTurns.thinking('I have read everything.', fakeTurns.text('Four notes, numbered 1 to 4.')),
  );
  const taskId = h.taskId('strict-think');
  const input: TaskInput = {
    agent: 'demo',
    prompt: 'read every note',
    model: { provider: 'anthropic', thinking: { type: 'enabled', budgetTokens: 2048 }, maxTokens: 8192 },
  };
  const worker = await claudeWorker();
  const result = await worker.runUntil(async () => {
    await h.client.start(input, { taskId });
    return bounded(taskId, h.client.result(taskId));
  });

  expect(result).toMatchObject({ outcome: 'answered', text: 'Four notes, numbered 1 to 4.', turns: 6, toolCalls: 5 });
  expect(rejections()).toEqual([]);
  expect(api.requests).toHaveLength(6);
  for (const request of api.requests) {
    expect(request.body.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    expect(request.body.max_tokens).toBe(8192);
  }
  // The last request carries every earlier assistant turn with its thinking first (one redacted).
  const assistants = (api.requests[5]!.body.messages as { role: string; content: { type: string; signature?: string }[] }[]).filter((m) => m.role === 'assistant');
  expect(assistants).toHaveLength(5);
  expect(assistants.map((m) => m.content[0]!.type)).toEqual(['thinking', 'thinking', 'redacted_thinking', 'thinking', 'thinking']);
  expect(assistants.filter((m) => m.content[0]!.type === 'thinking').every((m) => typeof m.content[0]!.signature === 'string')).toBe(true);
});

test('a 400 invalid_request_error blocks with model_invalid_request and the API message; unblock --max-tokens 4096 changes the next request and the task completes', async () => {
  const apiMessage = 'max_tokens: 100000 > 64000, which is the maximum allowed';
  api.enqueue(fakeErrors.invalidRequest(apiMessage), fakeTurns.text('done with a smaller limit'));
  const taskId = h.taskId('strict-400');
  const worker = await claudeWorker();
  const { blocked, result } = await worker.runUntil(async () => {
    // 16,000 passes the fake's own rules; the queued 400 stands for a limit the real API enforces.
    await h.client.start({ agent: 'demo', prompt: 'hi', model: { provider: 'anthropic', maxTokens: 16_000 } }, { taskId });
    const blocked = await statusWhen(h, taskId, (s) => s.agentStatus === 'blocked');
    // Permanent: not retried while blocked.
    expect(api.requests).toHaveLength(1);
    await h.client.unblock(taskId, { by: 'ops', maxTokens: 4096 });
    return { blocked, result: await bounded(taskId, h.client.result(taskId)) };
  });

  expect(blocked.blocked).toMatchObject({ code: 'model_invalid_request', reason: expect.stringContaining(apiMessage) });
  expect(blocked.lastError).toMatchObject({ error_class: 'permanent', code: 'invalid_request' });
  // Not the tool-argument hint: the request is ours (or a setting), and unblock can change it.
  expect(blocked.lastError?.hint).not.toMatch(/fix the arguments/i);
  expect(result).toMatchObject({ outcome: 'answered', text: 'done with a smaller limit' });
  expect(api.requests).toHaveLength(2);
  expect(api.requests[0]!.body.max_tokens).toBe(16_000);
  expect(api.requests[1]!.body.max_tokens).toBe(4096);
  expect(rejections()).toEqual([]);
});

test('a streamed answer on a worker SIGKILLed mid-stream is retried on another worker and the task completes', async () => {
  const answer = 'A streamed answer long enough that the worker dies while it is still arriving, chunk by chunk.';
  // Three deltas of 5 characters, then the stream is held open until its client goes away.
  api.enqueue(fakeTurns.text(answer, { stream: { chunkChars: 5, holdAfterDeltas: 3 } }), fakeTurns.text(answer));
  const taskId = h.taskId('strict-kill');
  let child: ChildProcess | undefined;
  try {
    // spawnWorker's arguments and environment, plus the fake as the worker's Claude endpoint.
    child = await spawnClaudeWorker(h, api);
    await h.client.start({ agent: 'demo', prompt: 'answer slowly', model: { provider: 'anthropic' } }, { taskId });
    await waitFor('the first deltas to be sent to the child worker', () => (api.requests[0]?.stream?.deltas ?? 0) >= 3 || undefined, 30_000);
    expect(await sigkill(child)).toBe('SIGKILL');
  } finally {
    if (child) await sigkill(child);
  }
  expect(api.requests).toHaveLength(1);
  // The stream never finished: its client went away after the third delta.
  await waitFor('the fake to see the killed worker hang up', () => api.requests[0]!.stream?.ended === 'client_gone' || undefined);
  expect(api.requests[0]!.stream).toEqual({ deltas: 3, ended: 'client_gone' });

  const worker = await claudeWorker();
  const result = await worker.runUntil(() => bounded(taskId, h.client.result(taskId), 60_000));
  expect(result).toMatchObject({ outcome: 'answered', text: answer, turns: 1 });
  expect(api.requests).toHaveLength(2);
  expect(JSON.stringify(api.requests[1]!.body.messages)).toBe(JSON.stringify(api.requests[0]!.body.messages));
  expect(rejections()).toEqual([]);
}, 150_000);
