/**
 * Budgets as hard caps, the accounting without a server: a call's maximum and the max_tokens that
 * fits what is left (call-budget.ts); an aborted call counted from its stream or at its maximum,
 * through the real SDK against the strict fake, whose billing it never undercounts; the model
 * activity's cancellation carrying the charge; the workflow's meter reading it (budget-meter.ts).
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { ActivityCancellationDetails, ActivityFailure, ApplicationFailure, CancelledFailure, RetryState } from '@temporalio/common';
import { createActivities } from '../../src/activities';
import { defineAgent } from '../../src/agents/define-agent';
import { AnthropicModel } from '../../src/models/anthropic-model';
import { abortedCallUsage, callMaximum, fitMaxTokens, MIN_ANSWER_TOKENS, type CallPlan } from '../../src/models/call-budget';
import { ModelCallAborted } from '../../src/models/model';
import { costOf, DEFAULT_PRICES } from '../../src/models/pricing';
import { ToolFailure } from '../../src/errors/tool-failure';
import type { CancelledModelCall } from '../../src/protocol/activity-contracts';
import type { Message } from '../../src/protocol/messages';
import { FakeMessagesApi, fakeTurns, type FakeReply } from '../../src/testing/fake-messages-api';
import { cancelledCallCharge, chargeCancelledCall } from '../../src/workflows/state/budget-meter';
import { waitFor } from '../support/processes';

const api = new FakeMessagesApi();
beforeAll(() => api.start());
afterAll(() => api.stop());
beforeEach(() => {
  api.requests.length = 0;
  api.clearQueue();
});

const MODEL = 'claude-sonnet-5-5';
const model = () => new AnthropicModel({ apiKey: 'sk-ant-test', baseURL: api.url, model: MODEL });
const ask = (text: string): Message[] => [{ role: 'user', content: text }];
const longText = (chars: number) => 'The quick brown fox jumps over the lazy dog. '.repeat(Math.ceil(chars / 45)).slice(0, chars);
/** A streamed answer that stops after `deltas` deltas of 100 characters and stays open until the client leaves. */
const heldStream = (deltas: number): FakeReply => ({ kind: 'turn', content: [{ type: 'text', text: longText(20_000) }], stream: { chunkChars: 100, holdAfterDeltas: deltas } });
const billedCost = (b: (typeof api.billed)[number]) =>
  costOf(b.model, { inputTokens: b.input_tokens, outputTokens: b.output_tokens, cacheWriteTokens: b.cache_creation_input_tokens, cacheReadTokens: b.cache_read_input_tokens }, DEFAULT_PRICES)!;

describe("a call's maximum and the max_tokens that fits", () => {
  const plan: CallPlan = { model: MODEL, inputTokens: 1_000, maxTokens: 4_096 };
  // claude-sonnet-5-5: $2 in (cache write $2.50, the dearest input), $10 out per million.
  test('the maximum prices the input as a cache write and the whole max_tokens as output', () => {
    expect(callMaximum(plan, DEFAULT_PRICES)).toEqual({ tokens: 5_096, costUsd: expect.closeTo(1_000 * 2.5e-6 + 4_096 * 10e-6, 10) });
    expect(callMaximum({ ...plan, model: 'unpriced' }, DEFAULT_PRICES).costUsd).toBeUndefined();
  });

  test('a call whose maximum fits is sent as asked; one that does not is sent with a lower max_tokens', () => {
    expect(fitMaxTokens(plan, { costUsd: 1 }, DEFAULT_PRICES)).toBe(4_096);
    expect(fitMaxTokens(plan, {}, DEFAULT_PRICES)).toBe(4_096);
    // $0.0125 left: $0.0025 of input leaves $0.01, 1 000 output tokens.
    // (rounded down: floating point may leave it a token short, never over)
    expect([999, 1_000]).toContain(fitMaxTokens(plan, { costUsd: 0.0125 }, DEFAULT_PRICES));
    expect(fitMaxTokens(plan, { tokens: 1_500 }, DEFAULT_PRICES)).toBe(500);
    expect(fitMaxTokens(plan, { tokens: 1_500, costUsd: 0.0125 }, DEFAULT_PRICES)).toBe(500);
    expect(fitMaxTokens(plan, { tokens: 5_000, costUsd: 0.0075 }, DEFAULT_PRICES)).toBeLessThanOrEqual(500);
    // Whatever it is lowered to, the maximum fits what was left.
    for (const costUsd of [0.004, 0.02, 0.03]) {
      const maxTokens = fitMaxTokens(plan, { costUsd }, DEFAULT_PRICES);
      expect(callMaximum({ ...plan, maxTokens }, DEFAULT_PRICES).costUsd!).toBeLessThanOrEqual(costUsd);
    }
  });

  test('a call that cannot fit a short answer is not sent: resource cost_budget / token_budget, saying what is left', () => {
    const refused = (left: { costUsd?: number; tokens?: number }, p: CallPlan = plan) => {
      try {
        fitMaxTokens(p, left, DEFAULT_PRICES);
      } catch (err) {
        return err as ToolFailure;
      }
      throw new Error('not refused');
    };
    expect(refused({ costUsd: 0.0025 })).toMatchObject({ errorClass: 'resource', code: 'cost_budget' });
    expect(refused({ costUsd: 0.0025 }).message).toContain('$0.0025 left');
    expect(refused({ tokens: 1_000 + MIN_ANSWER_TOKENS - 1 })).toMatchObject({ errorClass: 'resource', code: 'token_budget' });
    // max_tokens must stay above extended thinking's budget.
    expect(refused({ tokens: 3_000 }, { ...plan, thinkingBudget: 2_048 })).toMatchObject({ code: 'token_budget' });
    expect(fitMaxTokens({ ...plan, thinkingBudget: 2_048 }, { tokens: 3_100 }, DEFAULT_PRICES)).toBe(2_100);
  });

  test('an aborted call is counted from its usage events and the output that arrived, else at its maximum', () => {
    expect(abortedCallUsage(plan, { outputChars: 0 })).toEqual({ usage: { inputTokens: 1_000, outputTokens: 4_096 }, measured: false });
    expect(abortedCallUsage(plan, { usage: { inputTokens: 900, outputTokens: 1, cacheReadTokens: 50 }, outputChars: 401 })).toEqual({
      usage: { inputTokens: 900, outputTokens: 101, cacheReadTokens: 50 },
      measured: true,
    });
    expect(abortedCallUsage(plan, { usage: { inputTokens: 900, outputTokens: 300 }, outputChars: 40 }).usage.outputTokens).toBe(300);
  });
});

describe('an aborted call through the real SDK against the strict fake', () => {
  test("the input estimate is never below what the fake bills for the request's prompt", async () => {
    for (const chars of [10, 2_000, 40_000]) {
      api.requests.length = 0;
      api.enqueue(fakeTurns.text('ok'));
      const m = model();
      const request = { system: longText(chars), messages: ask(longText(chars)), tools: [] };
      await m.complete(request);
      const billed = api.billed[0]!;
      expect(m.plan(request).inputTokens).toBeGreaterThanOrEqual(billed.input_tokens + billed.cache_creation_input_tokens + billed.cache_read_input_tokens);
    }
  });

  test('aborted mid-stream: ModelCallAborted with the usage measured from message_start and the output that arrived, at least what the fake billed', async () => {
    api.enqueue(heldStream(5));
    const controller = new AbortController();
    const call = model().complete({ system: 'be long', messages: ask('write an essay'), tools: [], signal: controller.signal });
    await waitFor('the stream held', () => (api.requests[0]?.stream?.deltas ?? 0) >= 5 || undefined);
    controller.abort();
    const err = await call.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelCallAborted);
    const aborted = err as ModelCallAborted;
    expect(aborted.measured).toBe(true);
    await waitFor('the fake saw the client leave', () => api.requests[0]!.stream?.ended === 'client_gone' || undefined);
    const billed = api.billed[0]!;
    // 5 deltas of 100 characters: 125 output tokens, as the fake counts them.
    expect(billed.output_tokens).toBe(125);
    expect(aborted.usage.outputTokens).toBeGreaterThanOrEqual(billed.output_tokens);
    expect(aborted.usage.inputTokens + (aborted.usage.cacheWriteTokens ?? 0) + (aborted.usage.cacheReadTokens ?? 0)).toBe(
      billed.input_tokens + billed.cache_creation_input_tokens + billed.cache_read_input_tokens,
    );
    expect(costOf(MODEL, aborted.usage, DEFAULT_PRICES)!).toBeGreaterThanOrEqual(billedCost(billed));
  });

  test('aborted before the answer began: counted at its maximum (input estimate + max_tokens); aborted before sending: nothing', async () => {
    // biome-ignore lint/suspicious/noThenProperty: the fake API's reply field, never awaited
    api.enqueue({ kind: 'slow', delayMs: 20_000, then: fakeTurns.text('too late') });
    const controller = new AbortController();
    const m = model();
    const request = { system: 'be brief', messages: ask('hi'), tools: [], maxTokens: 2_000, signal: controller.signal };
    const call = m.complete(request);
    await waitFor('the request arrived', () => api.requests.length === 1 || undefined);
    controller.abort();
    const err = (await call.catch((e: unknown) => e)) as ModelCallAborted;
    expect(err).toBeInstanceOf(ModelCallAborted);
    expect(err).toMatchObject({ measured: false, usage: { inputTokens: m.plan(request).inputTokens, outputTokens: 2_000 } });
    expect(api.billed).toEqual([]);

    const before = (await m.complete({ ...request, signal: AbortSignal.abort() }).catch((e: unknown) => e)) as ModelCallAborted;
    expect(before).toMatchObject({ measured: true, usage: { inputTokens: 0, outputTokens: 0 } });
    expect(api.requests).toHaveLength(1);
  });

  test('the fake bills a whole answer at its usage, streamed or not', async () => {
    api.enqueue({ kind: 'turn', content: [{ type: 'text', text: 'scripted' }], usage: { input: 1_234, output: 56, cacheRead: 7 } });
    await model().complete({ system: 's', messages: ask('hi'), tools: [] });
    expect(api.billed).toEqual([{ model: MODEL, input_tokens: 1_234, output_tokens: 56, cache_creation_input_tokens: 0, cache_read_input_tokens: 7 }]);
  });
});

describe('the model activity, cancelled', () => {
  const mockEnv = () => new MockActivityEnvironment({ heartbeatTimeoutMs: 5_000 }, { logger: new DefaultLogger('ERROR') });
  const activities = () =>
    createActivities({
      agents: [defineAgent({ name: 'writer', system: 'You write.', tools: [], model: { provider: 'anthropic', model: MODEL } })],
      modelEnv: { anthropicApiKey: 'sk-ant-test', anthropicBaseURL: api.url },
    });
  const input = { model: { provider: 'anthropic' as const, model: MODEL }, system: 'You write.', messages: ask('write an essay'), tools: [] };

  test('aborts the request and throws a CancelledFailure whose details say what the call cost', async () => {
    api.enqueue(heldStream(8));
    const env = mockEnv();
    const call = env.run(activities().callModel, input);
    await waitFor('the stream held', () => (api.requests[0]?.stream?.deltas ?? 0) >= 8 || undefined);
    env.cancel('CANCELLED', new ActivityCancellationDetails({ cancelRequested: true }));
    const err = await call.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CancelledFailure);
    const charge = (err as CancelledFailure).details[0] as CancelledModelCall;
    expect(charge).toMatchObject({ model: MODEL, measured: true, usage: { outputTokens: 200 } });
    expect(charge.costUsd).toBeCloseTo(costOf(MODEL, charge.usage, DEFAULT_PRICES)!, 12);
    await waitFor('the fake saw the client leave', () => api.requests[0]!.stream?.ended === 'client_gone' || undefined);
    expect(charge.costUsd!).toBeGreaterThanOrEqual(billedCost(api.billed[0]!));
  });

  test('a worker shutting down lets the call finish (its answer is the result)', async () => {
    api.enqueue({ kind: 'turn', content: [{ type: 'text', text: 'finished anyway' }], stream: { chunkChars: 4, delayMs: 20 } });
    const env = mockEnv();
    const call = env.run(activities().callModel, input);
    await waitFor('the stream started', () => (api.requests[0]?.stream?.deltas ?? 0) >= 1 || undefined);
    env.cancel('WORKER_SHUTDOWN', new ActivityCancellationDetails({ workerShutdown: true }));
    await expect(call).resolves.toMatchObject({ content: [{ type: 'text', text: 'finished anyway' }] });
  });

  test("a sub-agent's call is sent with the max_tokens that fits what is left of its slice, or refused (resource cost_budget)", async () => {
    api.enqueue(fakeTurns.text('short'));
    await mockEnv().run(activities().callModel, { ...input, spendLeft: { costUsd: 0.005 } });
    const sent = api.requests[0]!.body.max_tokens;
    expect(sent).toBeLessThan(4_096);
    const plan = model().plan({ system: input.system, messages: input.messages, tools: [], maxTokens: sent });
    expect(callMaximum(plan, DEFAULT_PRICES).costUsd!).toBeLessThanOrEqual(0.005);

    const refused = await mockEnv()
      .run(activities().callModel, { ...input, spendLeft: { costUsd: 0.0001 } })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApplicationFailure);
    expect(refused).toMatchObject({ type: 'resource', nonRetryable: true, details: [expect.objectContaining({ code: 'cost_budget' })] });
    expect(api.requests).toHaveLength(1);
  });
});

describe("the workflow's meter", () => {
  const charge: CancelledModelCall = { usage: { inputTokens: 1_000, outputTokens: 200, cacheReadTokens: 30 }, model: MODEL, costUsd: 0.004, measured: true };
  const cancelled = (details: unknown[]) =>
    new ActivityFailure('Activity task cancelled', 'callModel', '7', RetryState.CANCEL_REQUESTED, 'worker', new CancelledFailure('The model call was aborted', details));

  test("reads the charge from an activity's cancellation, and counts it in usage and cost", () => {
    expect(cancelledCallCharge(cancelled([charge]))).toEqual(charge);
    expect(cancelledCallCharge(new CancelledFailure('x', [charge]))).toEqual(charge);
    const events: string[] = [];
    const state = { usage: { inputTokens: 10, outputTokens: 5, cacheWriteTokens: 0, cacheReadTokens: 0 }, costUsd: 0.001, audit: { record: (_: string, detail: string) => events.push(detail) } };
    chargeCancelledCall(state as unknown as Parameters<typeof chargeCancelledCall>[0], charge);
    expect(state.usage).toEqual({ inputTokens: 1_010, outputTokens: 205, cacheWriteTokens: 0, cacheReadTokens: 30 });
    expect(state.costUsd).toBeCloseTo(0.005, 12);
    expect(events[0]).toMatch(/cancelled model call was counted as its stream reported it .*\$0\.0040/);
  });

  test('nothing is charged for a cancellation without a report (never started), another failure, or a malformed report', () => {
    expect(cancelledCallCharge(cancelled([]))).toBeUndefined();
    expect(cancelledCallCharge(new Error('boom'))).toBeUndefined();
    expect(cancelledCallCharge(cancelled([{ usage: { inputTokens: -1, outputTokens: 2 } }]))).toBeUndefined();
    expect(cancelledCallCharge(cancelled([{ usage: { inputTokens: 1, outputTokens: Number.NaN } }]))).toBeUndefined();
    expect(cancelledCallCharge(cancelled([{ usage: { inputTokens: 1, outputTokens: 2 }, costUsd: 'lots' }]))).toEqual({
      usage: { inputTokens: 1, outputTokens: 2 },
      model: 'unknown',
      measured: false,
    });
  });
});
