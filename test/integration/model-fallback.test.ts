/**
 * Model fallback (docs/model-fallback.md) on a real Temporal dev server, through the real
 * @anthropic-ai/sdk against the STRICT fake Messages API (a request the real API would refuse,
 * thinking signed for another model included, is answered 400 there too): an overloaded model
 * hands the task to its fallback, and status, the audit trail and the cost say so; a refused
 * request and a refusal never fall back; a worker SIGKILLed during the fallback's call does not
 * lose or repeat the decision.
 */
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { FakeMessagesApi, fakeErrors, fakeTurns, type FakeReply, type RecordedRequest } from '../../src/testing/fake-messages-api';
import { createLongAgent } from '../support/long-agents';
import { needleReader, RIGHT_ANSWER } from '../support/needle';
import { costOf, DEFAULT_PRICES } from '../../src/models/pricing';
import { readFileSync } from 'node:fs';
import Ajv2020 from 'ajv/dist/2020';
import { runMain } from '../support/cli-in-process';
import { recordTask } from '../../src/replay/record-task';
import { useHarness, statusWhen } from '../support/harness';
import { spawnClaudeWorker, useFakeApi } from '../support/fake-api';
import { sigkill, waitFor } from '../support/processes';

const PRIMARY = 'claude-sonnet-5-5';
const FALLBACK = 'claude-haiku-5-5';

const h = useHarness();
const api = useFakeApi(); // strict: the default
beforeEach(() => {
  api.requests.length = 0;
  api.clearQueue();
});

const modelEnv = () => ({ anthropicApiKey: 'sk-ant-test', anthropicBaseURL: api.url });
const claudeWorker = () => h.worker(undefined, { modelEnv: modelEnv() });
const rejections = () => api.rejected.map((r) => r.rejected);
const models = () => api.requests.map((r: RecordedRequest) => r.body.model);
const overloadedThrice = () => [fakeErrors.overloaded(), fakeErrors.overloaded(), fakeErrors.overloaded()];

test('529 on the primary: the fallback answers, and status, the audit trail and the cost say which model answered and why', async () => {
  api.enqueue(...overloadedThrice(), fakeTurns.text('Answered by the fallback.', { usage: { input: 1000, output: 200 } }));
  const taskId = h.taskId('fallback-529');
  const worker = await claudeWorker();
  const { result, status, json, text } = await worker.runUntil(async () => {
    await h.client.start({ agent: 'demo', prompt: 'say hello', model: { provider: 'anthropic', model: PRIMARY }, fallbackModels: [FALLBACK] }, { taskId });
    const result = await h.client.result(taskId);
    const at = ['--address', h.server.address, '--task-queue', h.taskQueue];
    return { result, status: await h.client.status(taskId), json: await runMain(['status', taskId, '--json', ...at]), text: await runMain(['status', taskId, ...at]) };
  });

  expect(result).toMatchObject({ outcome: 'answered', text: 'Answered by the fallback.', model: FALLBACK });
  // Three attempts on the primary (its retries, each honouring the API), then the fallback once.
  expect(models()).toEqual([PRIMARY, PRIMARY, PRIMARY, FALLBACK]);
  expect(rejections()).toEqual([]);
  expect(status.fallback).toMatchObject({
    fallbacks: [FALLBACK],
    current: FALLBACK,
    model: FALLBACK,
    switches: [{ turn: 1, from: PRIMARY, to: FALLBACK, reason: 'overloaded', code: 'overloaded' }],
    skipped: [],
  });
  expect(status.events.filter((e) => e.kind === 'model_fallback').map((e) => e.detail)).toEqual([expect.stringContaining(`${PRIMARY} overloaded (529): calls go to ${FALLBACK}`)]);
  // The cost is the fallback's, at its own price.
  expect(result.costUsd).toBeCloseTo(costOf(FALLBACK, { inputTokens: 1000, outputTokens: 200 }, DEFAULT_PRICES)!, 10);
  // `status --json` prints the fallback as its published schema describes it; the text view names the move.
  expect(json.code).toBe(0);
  const printed = JSON.parse(json.out);
  const validate = new Ajv2020({ strict: true, allErrors: true }).compile(JSON.parse(readFileSync(path.resolve(__dirname, '../../schemas/status.schema.json'), 'utf8')));
  expect({ valid: validate(printed), errors: validate.errors }).toEqual({ valid: true, errors: null });
  expect(printed.status.fallback).toEqual(status.fallback);
  expect(text.out).toContain(`fallbacks  ${FALLBACK}   calls go to ${FALLBACK}`);
  expect(text.out).toContain(`turn 1: ${PRIMARY} -> ${FALLBACK} (overloaded: overloaded)`);
  // A fork keeps the origin's fallbacks and the model it moved to: its next call goes to the fallback.
  api.enqueue(fakeTurns.text('The fork answers on the fallback.'));
  const fork = await (await claudeWorker()).runUntil(async () => {
    const started = await h.client.fork(taskId, 1, { message: 'Say it again.', blobStore: h.blobStore });
    return h.client.result(started.taskId);
  });
  expect(fork).toMatchObject({ outcome: 'answered', model: FALLBACK });
  expect(models().at(-1)).toBe(FALLBACK);
  expect(rejections()).toEqual([]);
  // The export keeps which model answered the turn and why it was not the task's own.
  const recording = await recordTask(h.client, taskId, { blobStore: h.blobStore });
  expect(recording.turns).toEqual([expect.objectContaining({ turn: 1, model: FALLBACK, fallback: { from: PRIMARY, reason: 'overloaded', code: 'overloaded' } })]);
});

test('a model no longer served (404) moves at once, a rate limit past its retries moves after them: two moves, each with its reason', async () => {
  const RETIRED = 'claude-retired-3-0'; // not a model the fake serves: 404 not_found_error, as the API answers
  api.enqueue(fakeErrors.rateLimited(1), fakeErrors.rateLimited(1), fakeErrors.rateLimited(1), fakeTurns.text('Answered by the second fallback.'));
  const taskId = h.taskId('fallback-chain');
  const worker = await claudeWorker();
  const { result, status } = await worker.runUntil(async () => {
    await h.client.start({ agent: 'demo', prompt: 'say hello', model: { provider: 'anthropic', model: RETIRED }, fallbackModels: [PRIMARY, FALLBACK] }, { taskId });
    const result = await h.client.result(taskId);
    return { result, status: await h.client.status(taskId) };
  });
  expect(result).toMatchObject({ outcome: 'answered', text: 'Answered by the second fallback.', model: FALLBACK });
  // The retired model once (404 is not retried), the first fallback three times (429), the second once.
  expect(models()).toEqual([RETIRED, PRIMARY, PRIMARY, PRIMARY, FALLBACK]);
  expect(status.fallback?.switches.map((s) => [s.from, s.to, s.reason, s.code])).toEqual([
    [RETIRED, PRIMARY, 'not_served', 'model_not_found'],
    [PRIMARY, FALLBACK, 'rate_limited', 'rate_limited'],
  ]);
  expect(status.fallback?.current).toBe(FALLBACK);
});

test('a 400 never falls back: the task blocks on its own model, and the fallback is never asked', async () => {
  api.enqueue(fakeErrors.invalidRequest('max_tokens: 999999 > 64000, which is the maximum allowed'));
  const taskId = h.taskId('fallback-400');
  const worker = await claudeWorker();
  const blocked = await worker.runUntil(async () => {
    await h.client.start({ agent: 'demo', prompt: 'say hello', model: { provider: 'anthropic', model: PRIMARY }, fallbackModels: [FALLBACK] }, { taskId });
    const blocked = await statusWhen(h, taskId, (s) => s.agentStatus === 'blocked');
    await h.client.cancel(taskId);
    return blocked;
  });
  expect(blocked.blocked).toMatchObject({ code: 'model_invalid_request' });
  expect(models()).toEqual([PRIMARY]);
  expect(blocked.fallback).toMatchObject({ current: PRIMARY, switches: [] });
  expect(blocked.fallback?.model).toBeUndefined();
});

test('a refusal never falls back: the task ends refused with its own model', async () => {
  api.enqueue(fakeTurns.text('I cannot help with that.', { stopReason: 'refusal' }));
  const taskId = h.taskId('fallback-refusal');
  const worker = await claudeWorker();
  const { result, status } = await worker.runUntil(async () => {
    await h.client.start({ agent: 'demo', prompt: 'something refused', model: { provider: 'anthropic', model: PRIMARY }, fallbackModels: [FALLBACK] }, { taskId });
    const result = await h.client.result(taskId);
    return { result, status: await h.client.status(taskId) };
  });
  expect(result).toMatchObject({ outcome: 'refused', model: PRIMARY });
  expect(models()).toEqual([PRIMARY]);
  expect(status.fallback?.switches).toEqual([]);
});

test('thinking signed by the primary is left out for the fallback (the strict fake refuses it otherwise), and the task completes', async () => {
  api.enqueue(
    fakeTurns.thinking('I should list the files first.', fakeTurns.toolUse('toolu_t1', 'list_files', {})),
    ...overloadedThrice(),
    fakeTurns.thinking('One note is there.', fakeTurns.toolUse('toolu_t2', 'read_file', { path: 'inbox/customer-note.txt' })),
    fakeTurns.thinking('I have read it.', fakeTurns.text('The workspace holds one customer note.')),
  );
  const taskId = h.taskId('fallback-thinking');
  const worker = await claudeWorker();
  const { result, status } = await worker.runUntil(async () => {
    await h.client.start(
      {
        agent: 'demo',
        prompt: 'what is in the workspace?',
        model: { provider: 'anthropic', model: PRIMARY, thinking: { type: 'enabled', budgetTokens: 2048 }, maxTokens: 8192 },
        fallbackModels: [FALLBACK],
      },
      { taskId },
    );
    const result = await h.client.result(taskId);
    return { result, status: await h.client.status(taskId) };
  });

  expect(rejections()).toEqual([]);
  expect(result).toMatchObject({ outcome: 'answered', text: 'The workspace holds one customer note.', model: FALLBACK });
  expect(models()).toEqual([PRIMARY, PRIMARY, PRIMARY, PRIMARY, FALLBACK, FALLBACK]);
  const [firstOnFallback, secondOnFallback] = api.requests.slice(4);
  // The primary's signed thinking did not go to the fallback; mid tool loop, that one call went without thinking.
  expect(JSON.stringify(firstOnFallback!.body.messages)).not.toContain('"type":"thinking"');
  expect(firstOnFallback!.body.thinking).toBeUndefined();
  // From its own next turn on, the fallback thinks, and its own signed thinking goes back to it.
  expect(secondOnFallback!.body.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
  expect(JSON.stringify(secondOnFallback!.body.messages)).toContain('One note is there.');
  // The proof that the strict fake would have refused the primary's blocks: it checks them per model.
  const primaryBlock = (api.requests[1]!.body.messages[1] as { content: { type: string; thinking: string; signature: string }[] }).content[0]!;
  expect(api.signer.verify(primaryBlock.thinking, primaryBlock.signature, PRIMARY)).toBe(true);
  expect(api.signer.verify(primaryBlock.thinking, primaryBlock.signature, FALLBACK)).toBe(false);
  expect(status.events.find((e) => e.kind === 'model_fallback')?.detail).toContain('1 thinking block signed by another model left out');
});

test('a worker SIGKILLed during the fallback call: the call is retried on the fallback, and the decision is made once', async () => {
  const answer = 'A fallback answer long enough that the worker dies while it is still arriving.';
  api.enqueue(...overloadedThrice(), fakeTurns.text(answer, { stream: { chunkChars: 5, holdAfterDeltas: 3 } }), fakeTurns.text(answer));
  const taskId = h.taskId('fallback-kill');
  let child: ChildProcess | undefined;
  try {
    child = await spawnClaudeWorker(h, api);
    await h.client.start({ agent: 'demo', prompt: 'answer slowly', model: { provider: 'anthropic', model: PRIMARY }, fallbackModels: [FALLBACK] }, { taskId });
    await waitFor('the fallback call to stream its first deltas', () => (api.requests[3]?.stream?.deltas ?? 0) >= 3 || undefined, 60_000);
    expect(await sigkill(child)).toBe('SIGKILL');
  } finally {
    if (child) await sigkill(child);
  }
  expect(models()).toEqual([PRIMARY, PRIMARY, PRIMARY, FALLBACK]);

  const worker = await claudeWorker();
  const { result, status } = await worker.runUntil(async () => {
    const result = await h.client.result(taskId);
    return { result, status: await h.client.status(taskId) };
  });
  expect(result).toMatchObject({ outcome: 'answered', text: answer, model: FALLBACK });
  // The retried call went to the fallback again: the primary was not asked again, nor the decision made twice.
  expect(models()).toEqual([PRIMARY, PRIMARY, PRIMARY, FALLBACK, FALLBACK]);
  expect(status.fallback?.switches).toHaveLength(1);
  expect(status.events.filter((e) => e.kind === 'model_fallback')).toHaveLength(1);
  expect(rejections()).toEqual([]);
}, 150_000);

test('start refuses a bad --fallback-model before it connects (exit 2, the id and the rule named)', async () => {
  const at = ['--address', '127.0.0.1:9'];
  const bad = await runMain(['start', 'hi', '--agent', 'demo', '--fallback-model', 'claude haiku', ...at]);
  expect(bad.code).toBe(2);
  expect(bad.err).toContain('"claude haiku" is not a model id');
  const own = await runMain(['start', 'hi', '--agent', 'demo', '--model', PRIMARY, '--fallback-model', PRIMARY, ...at]);
  expect(own.code).toBe(2);
  expect(own.err).toContain("the task's own model");
  const scripted = await runMain(['start', 'hi', '--agent', 'demo', '--script', path.join(h.tmpDir, 'none.json'), '--fallback-model', FALLBACK, ...at]);
  expect(scripted.code).toBe(2);
  expect(scripted.err).toContain('--fallback-model needs a Claude model');
});

test("a fallback without native compaction is passed over, with the reason, while the conversation holds the API's compaction block; the next one takes it", async () => {
  const OPUS = 'claude-opus-5-5';
  const reader = needleReader(40, { summary: 'lines', memory: false });
  let overloads = 0;
  const compactionApi = new FakeMessagesApi();
  // The primary is overloaded from the first call after the API compacted the conversation.
  compactionApi.responder = (record): FakeReply => {
    const compacted = JSON.stringify(record.body.messages).includes('"type":"compaction"');
    if (compacted && record.body.model === PRIMARY && overloads < 3) {
      overloads += 1;
      return fakeErrors.overloaded();
    }
    return reader(record);
  };
  await compactionApi.start();
  try {
    const taskId = h.taskId('fallback-compacted');
    const worker = await h.worker([createLongAgent(10_000)], { modelEnv: { anthropicApiKey: 'sk-ant-test', anthropicBaseURL: compactionApi.url } });
    const { result, status } = await worker.runUntil(async () => {
      await h.client.start(
        {
          agent: 'long',
          prompt: 'Read the document page by page, one page per turn, then say which number page 5 holds.',
          model: { provider: 'anthropic', model: PRIMARY, contextWindowTokens: 100_000 },
          fallbackModels: [FALLBACK, OPUS],
          budgets: { turns: 60, toolCalls: 60 },
        },
        { taskId },
      );
      const result = await h.client.result(taskId);
      return { result, status: await h.client.status(taskId) };
    });
    expect(compactionApi.rejected.map((r) => r.rejected)).toEqual([]);
    expect(overloads).toBe(3);
    // Haiku (no native compaction) was passed over with the reason; Opus read the block and still knew page 5.
    expect(result).toMatchObject({ outcome: 'answered', text: RIGHT_ANSWER, model: OPUS });
    expect(compactionApi.requests.some((r) => r.body.model === FALLBACK)).toBe(false);
    expect(status.fallback).toMatchObject({
      current: OPUS,
      switches: [{ from: PRIMARY, to: OPUS, reason: 'overloaded' }],
      skipped: [{ model: FALLBACK, reason: expect.stringContaining('native compaction') }],
    });
    expect(status.events.filter((e) => e.kind === 'model_fallback').map((e) => e.detail)).toEqual([expect.stringContaining(`passed over ${FALLBACK}`), expect.stringContaining(`calls go to ${OPUS}`)]);
  } finally {
    await compactionApi.stop();
  }
}, 300_000);
