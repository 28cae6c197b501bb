/**
 * Issue 24's check at its size: a 300-turn task reading 10 KB a turn through the real SDK against
 * the strict fake, asked at the end which number page 5 holds. The fake answers right only when page
 * 5's line is in what it was sent. Right through native compaction, through the durable summary and
 * through memory (with a summary that keeps nothing and trimming, only memory can carry it); wrong
 * with none of them. Every run's largest payload stays under 256 KB and history bytes per turn stay
 * flat. A second task of the agent answers from memory without reading the document.
 */
import { FakeMessagesApi, type RecordedRequest } from '../../src/testing/fake-messages-api';
import type { ModelChoice, TaskResult, TaskStatus } from '../../src/protocol/task';
import { useHarness } from '../support/harness';
import { bytesPerTurn, largestPayload, runsOf } from '../support/history-sizes';
import { createLongAgent } from '../support/long-agents';
import { isSummaryCall, memoryOnlyReader, needleReader, RIGHT_ANSWER, WRONG_ANSWER, type NeedleReader } from '../support/needle';

const h = useHarness();

const PAGES = 300;
const RESULT_CHARS = 10_000;
const CEILING = 256 * 1024;
/** A 100k-token window: the conversation needs room every few tens of pages. */
const WINDOW = 100_000;
const NATIVE: ModelChoice = { provider: 'anthropic', model: 'claude-sonnet-5-5', contextWindowTokens: WINDOW };
const WITHOUT_NATIVE: ModelChoice = { provider: 'anthropic', model: 'claude-haiku-4-5', contextWindowTokens: WINDOW };

interface NeedleRun {
  result: TaskResult;
  status: TaskStatus;
  requests: RecordedRequest[];
  rejected: unknown[];
  largestPayload: number;
  /** Mean history bytes a turn: turns 10-110 and the last 100. */
  early: number;
  late: number;
}

async function runNeedle(
  agentName: string,
  model: ModelChoice,
  reader: (record: RecordedRequest) => ReturnType<ReturnType<typeof needleReader>>,
  budgets: Record<string, number> = {},
): Promise<NeedleRun> {
  const api = new FakeMessagesApi();
  api.responder = reader;
  await api.start();
  try {
    const taskId = h.taskId('needle');
    const worker = await h.worker([createLongAgent(RESULT_CHARS, { name: agentName, memory: true })], { modelEnv: { anthropicApiKey: 'sk-ant-test', anthropicBaseURL: api.url } });
    const { result, status } = await worker.runUntil(async () => {
      await h.client.start(
        {
          agent: agentName,
          prompt: 'Read the document page by page, one page per turn, then say which number page 5 holds.',
          model,
          budgets: { turns: PAGES + 20, toolCalls: PAGES + 20, ...budgets },
        },
        { taskId },
      );
      const result: TaskResult = await h.client.result(taskId);
      return { result, status: await h.client.status(taskId) };
    });
    const runs = await runsOf(h.client, taskId);
    const perTurn = bytesPerTurn(runs);
    const mean = (from: number, to: number) => perTurn.slice(from, to).reduce((a, b) => a + b, 0) / (to - from);
    return {
      result,
      status,
      requests: api.requests,
      rejected: api.rejected.map((r) => r.rejected),
      largestPayload: Math.max(...runs.map((r) => largestPayload(r.history))),
      early: mean(10, 110),
      late: perTurn.length >= 200 ? mean(perTurn.length - 100, perTurn.length) : Number.NaN,
    };
  } finally {
    await api.stop();
  }
}

function report(mode: string, run: NeedleRun): void {
  const context = run.status.context;
  console.log(
    `needle ${mode}: ${run.result.outcome} "${run.result.text}", turns ${run.result.turns}, cost $${run.status.costUsd.toFixed(2)}, input tokens ${run.status.usage.inputTokens} + cache writes ${run.status.usage.cacheWriteTokens ?? 0} + cache reads ${run.status.usage.cacheReadTokens ?? 0}, ` +
      `compactions ${context?.compactions.count ?? 0} ($${(context?.compactions.costUsd ?? 0).toFixed(2)}), summaries ${context?.summaries.count ?? 0} ($${(context?.summaries.costUsd ?? 0).toFixed(2)}), trims ${context?.trims ?? 0}, ` +
      `largest payload ${run.largestPayload} B, history a turn ${Math.round(run.early)} B (turns 10-110) -> ${Math.round(run.late)} B (last 100)`,
  );
}

function expectBoundedAndFlat(run: NeedleRun): void {
  expect(run.rejected).toEqual([]);
  expect(run.largestPayload).toBeLessThan(CEILING);
  expect(run.late).toBeLessThanOrEqual(run.early * 1.2);
}

const ANSWERED_ALL_PAGES = { outcome: 'answered' };

test('native compaction: right after 300 pages, bounded and flat', async () => {
  const run = await runNeedle('needle-native', NATIVE, needleReader(PAGES, { summary: 'lines', memory: false }));
  report('native compaction', run);
  expect(run.result).toMatchObject({ ...ANSWERED_ALL_PAGES, text: RIGHT_ANSWER });
  expect(run.status.context!.compactions.count).toBeGreaterThanOrEqual(5);
  expect(run.requests.some(isSummaryCall)).toBe(false);
  expectBoundedAndFlat(run);
}, 600_000);

test('durable summary (a model without compaction): right after 300 pages, bounded and flat', async () => {
  const run = await runNeedle('needle-summary', WITHOUT_NATIVE, needleReader(PAGES, { summary: 'lines', memory: false }));
  report('durable summary', run);
  expect(run.result).toMatchObject({ ...ANSWERED_ALL_PAGES, text: RIGHT_ANSWER });
  expect(run.status.context).toMatchObject({ native: false, trims: 0 });
  expect(run.status.context!.summaries.count).toBeGreaterThanOrEqual(3);
  expectBoundedAndFlat(run);
}, 600_000);

test('memory: with a summary that keeps nothing the fact survives only through memory; a second task reads it without the document', async () => {
  const forgetful: NeedleReader = { summary: 'forgetful', memory: false };
  const without = await runNeedle('needle-forgets', WITHOUT_NATIVE, needleReader(PAGES, forgetful));
  report('no memory, forgetful summary', without);
  // The control: nothing carries page 5 to the end, and the check says so.
  expect(without.result).toMatchObject({ ...ANSWERED_ALL_PAGES, text: WRONG_ANSWER });

  const run = await runNeedle('needle-memory', WITHOUT_NATIVE, needleReader(PAGES, { ...forgetful, memory: true }));
  report('memory', run);
  expect(run.result).toMatchObject({ ...ANSWERED_ALL_PAGES, text: RIGHT_ANSWER });
  expectBoundedAndFlat(run);

  const second = await runNeedle('needle-memory', WITHOUT_NATIVE, memoryOnlyReader());
  expect(second.result).toMatchObject({ ...ANSWERED_ALL_PAGES, text: RIGHT_ANSWER, toolCalls: 1 });
  // It never read the document: its only tool call was the memory view.
  expect(second.requests.flatMap((r) => JSON.stringify(r.body.messages).match(/"name":"big_read"/g) ?? [])).toEqual([]);
}, 900_000);
