/**
 * A long task keeps what it read early, on a real dev server through the real SDK against the
 * strict fake: on a model with server-side compaction the API's block replaces the conversation
 * (state shrinks, continue-as-new carries it, a worker killed after it never pays for it again); on
 * a model without it a summary call (own budget, in status) keeps the early turns, and with that
 * budget spent the oldest turns are trimmed with a line in the audit trail saying so.
 *
 * The needle: page 5's text holds 39595 (5 x 7919) on its own line; the final question is answered right only when
 * that number is in what the fake was sent (the API reads nothing before a compaction block).
 */
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { ModelChoice, TaskResult, TaskStatus } from '../../src/protocol/task';
import { FakeMessagesApi, fakeTurns, type FakeReply, type RecordedRequest } from '../../src/testing/fake-messages-api';
import { useHarness } from '../support/harness';
import { createLongAgent, pageText } from '../support/long-agents';
import { answerFrom, isSummaryCall, NEEDLE, NEEDLE_LINE } from '../support/needle';
import { sigkill, spawnCli, waitFor } from '../support/processes';

const h = useHarness();

const RESULT_CHARS = 10_000;
const PROMPT = 'Read the document page by page, one page per turn, then say which number page 5 holds.';
/** A smaller window than the default, so compaction comes after tens of turns rather than a hundred. */
const WINDOW = 100_000;

/** The fake's model: one page per turn, then the answer, right only if the needle was in what it read. */
function reader(pages: number, onRead?: (record: RecordedRequest, page: number) => FakeReply | undefined): (record: RecordedRequest) => FakeReply {
  let read = 0;
  return (record) => {
    if (isSummaryCall(record)) {
      // The summary model: keeps the start of every line of the transcript it was sent.
      const first = (record.body.messages as { content: string | { text?: string }[] }[])[0]!.content;
      const transcript = typeof first === 'string' ? first : first.map((b) => b.text ?? '').join('\n');
      return fakeTurns.text(
        transcript
          .split('\n')
          .map((line) => line.slice(0, 120))
          .join('\n'),
      );
    }
    if (read < pages) {
      const page = read++;
      return onRead?.(record, page) ?? fakeTurns.toolUse(`toolu_${page}`, 'big_read', { offset: page });
    }
    return answerFrom(record);
  };
}

async function runTask(api: FakeMessagesApi, model: ModelChoice, extra: { continueAsNewEveryTurns?: number; budgets?: Record<string, number> } = {}, pages = 40) {
  const taskId = h.taskId('compaction');
  const worker = await h.worker([createLongAgent(RESULT_CHARS)], { modelEnv: { anthropicApiKey: 'sk-ant-test', anthropicBaseURL: api.url } });
  return worker.runUntil(async () => {
    await h.client.start(
      {
        agent: 'long',
        prompt: PROMPT,
        model,
        budgets: { turns: pages + 20, toolCalls: pages + 20, ...extra.budgets },
        ...(extra.continueAsNewEveryTurns ? { continueAsNewEveryTurns: extra.continueAsNewEveryTurns } : {}),
      },
      { taskId },
    );
    const result: TaskResult = await h.client.result(taskId);
    const status: TaskStatus = await h.client.status(taskId);
    return { taskId, result, status };
  });
}

const hasCompaction = (r: RecordedRequest) => JSON.stringify(r.body.messages).includes('"type":"compaction"');

test('the needle is unique to page 5 among the pages read', () => {
  for (let page = 0; page < 60; page++) expect(pageText(page, RESULT_CHARS).includes(NEEDLE_LINE)).toBe(page === 5);
});

test('on a model with native compaction the task compacts once, keeps the block across continue-as-new, drops what preceded it and still knows page 5', async () => {
  const api = new FakeMessagesApi();
  api.responder = reader(40);
  await api.start();
  try {
    const { result, status } = await runTask(api, { provider: 'anthropic', model: 'claude-sonnet-5-5', contextWindowTokens: WINDOW }, { continueAsNewEveryTurns: 30 });
    expect(api.rejected.map((r) => r.rejected)).toEqual([]);
    expect(result).toMatchObject({ outcome: 'answered', text: `Page 5 holds ${NEEDLE}.` });
    const compacted = api.requests.filter((r) => r.compaction);
    expect(compacted).toHaveLength(1);
    // Every request from the compaction on enables it with the beta, at the task's trigger (70% of its window).
    const first = api.requests.indexOf(compacted[0]!);
    expect(api.requests[first]!.headers['anthropic-beta']).toContain('compact-2026-01-12');
    expect(api.requests[first]!.body.context_management).toEqual({ edits: [{ type: 'compact_20260112', trigger: { type: 'input_tokens', value: 70_000 }, pause_after_compaction: true }] });
    const block = compacted[0]!.compaction!.block;
    expect(block.content).toContain(NEEDLE_LINE);
    const after = api.requests.slice(first + 1);
    expect(after.length).toBeGreaterThan(10);
    for (const request of after) {
      expect(hasCompaction(request)).toBe(true);
      // What preceded the block left the task's state: the first prompt, the block, and the turns since.
      const messages = request.body.messages as { role: string; content: unknown }[];
      expect(messages[1]).toMatchObject({ role: 'assistant', content: [expect.objectContaining({ type: 'compaction', content: block.content, signature: block.signature })] });
      expect(messages.length).toBeLessThan(2 * (after.indexOf(request) + 2) + 2);
    }
    // The run continued as new after the compaction (turn 30) and the next run sent the same block.
    expect(status.turn).toBeGreaterThan(30);
    expect(compacted[0]!.body.messages.length).toBeGreaterThan(40);
    // The cost of compaction is in status and the audit trail; the task's own usage includes it.
    expect(status.context).toMatchObject({ strategy: 'auto', compactions: { count: 1 }, summaries: { count: 0 }, trims: 0 });
    expect(status.context!.compactions.usage.inputTokens).toBe(compacted[0]!.compaction!.iteration.input_tokens);
    expect(status.context!.compactions.costUsd).toBeGreaterThan(0);
    expect(status.usage.inputTokens).toBeGreaterThan(status.context!.compactions.usage.inputTokens);
  } finally {
    await api.stop();
  }
}, 300_000);

test('a worker SIGKILLed during the call after a compaction does not compact again: the retry sends the recorded block', async () => {
  const api = new FakeMessagesApi();
  let held: RecordedRequest | undefined;
  api.responder = reader(34, (record, page) => {
    if (held || !hasCompaction(record)) return undefined;
    held = record;
    return { ...(fakeTurns.toolUse(`toolu_${page}`, 'big_read', { offset: page }) as Extract<FakeReply, { kind: 'turn' }>), stream: { chunkChars: 4, holdAfterDeltas: 2 } };
  });
  await api.start();
  const taskId = h.taskId('compaction-kill');
  let child: ChildProcess | undefined;
  let stderr = '';
  try {
    child = spawnCli(['worker', '--address', h.server.address, '--task-queue', h.taskQueue, '--agents', path.join(__dirname, '../support/long-agents.ts')], {
      DURABLE_AGENT_SCRIPT_DIRS: h.tmpDir,
      DURABLE_AGENT_BLOB_STORE: `file:${path.join(h.tmpDir, 'blobs')}`,
      ANTHROPIC_API_KEY: 'sk-ant-test',
      ANTHROPIC_BASE_URL: api.url,
      LONG_AGENT_RESULT_CHARS: String(RESULT_CHARS),
    });
    child.stderr!.on('data', (d) => (stderr += d));
    await waitFor('the child worker to start', () => stderr.includes('worker: ') || (child!.exitCode !== null ? Promise.reject(new Error(`worker exited: ${stderr}`)) : undefined), 60_000);
    await h.client.start(
      { agent: 'long', prompt: PROMPT, model: { provider: 'anthropic', model: 'claude-sonnet-5-5', contextWindowTokens: WINDOW }, budgets: { turns: 60, toolCalls: 60 } },
      { taskId },
    );
    await waitFor('the call after the compaction to stream', () => ((held?.stream?.deltas ?? 0) >= 2 ? true : undefined), 240_000);
    expect(await sigkill(child)).toBe('SIGKILL');
  } finally {
    if (child) await sigkill(child);
  }
  try {
    const worker = await h.worker([createLongAgent(RESULT_CHARS)], { modelEnv: { anthropicApiKey: 'sk-ant-test', anthropicBaseURL: api.url } });
    const { result, status } = await worker.runUntil(async () => ({ result: await h.client.result(taskId), status: await h.client.status(taskId) }));
    expect(result).toMatchObject({ outcome: 'answered', text: `Page 5 holds ${NEEDLE}.` });
    expect(api.rejected.map((r) => r.rejected)).toEqual([]);
    expect(api.requests.filter((r) => r.compaction)).toHaveLength(1);
    // The retried call sent exactly what the killed one did: the recorded block, not the whole conversation again.
    const retried = api.requests[api.requests.indexOf(held!) + 1]!;
    expect(JSON.stringify(retried.body.messages)).toBe(JSON.stringify(held!.body.messages));
    expect(status.context?.compactions.count).toBe(1);
  } finally {
    await api.stop();
  }
}, 400_000);

test('on a model without native compaction a summary call keeps page 5 at the head of the conversation, counted against its own budget and shown in status', async () => {
  const api = new FakeMessagesApi();
  api.responder = reader(40);
  await api.start();
  try {
    const { result, status } = await runTask(api, { provider: 'anthropic', model: 'claude-haiku-4-5', contextWindowTokens: WINDOW });
    expect(api.rejected.map((r) => r.rejected)).toEqual([]);
    expect(result).toMatchObject({ outcome: 'answered', text: `Page 5 holds ${NEEDLE}.` });
    // The model has no compaction: the activity never sends the edit (the workflow learns it from the first reply).
    expect(api.requests.some((r) => r.body.context_management !== undefined)).toBe(false);
    const summaries = api.requests.filter(isSummaryCall);
    expect(summaries.length).toBeGreaterThanOrEqual(1);
    expect(summaries.every((r) => r.body.tools === undefined && r.body.max_tokens === 2048)).toBe(true);
    const last = api.requests.at(-1)!;
    const head = JSON.stringify((last.body.messages as unknown[])[0]);
    expect(head).toContain('[summary of earlier turns]');
    expect(head).toContain(NEEDLE_LINE);
    expect(status.context).toMatchObject({ strategy: 'auto', native: false, compactions: { count: 0 }, trims: 0 });
    expect(status.context!.summaries.count).toBe(summaries.length);
    const used = status.context!.summaries.usage.inputTokens + status.context!.summaries.usage.outputTokens;
    expect(used).toBeGreaterThan(0);
    expect(status.budgets.summaryTokens).toEqual({ used, limit: 500_000, left: 500_000 - used });
    expect(status.events.some((e) => /oldest turns summarised/.test(e.detail))).toBe(true);
  } finally {
    await api.stop();
  }
}, 300_000);

test('with the summary budget spent the oldest turns are trimmed as the last resort, and the audit trail says why', async () => {
  const api = new FakeMessagesApi();
  // 60 pages: the conversation passes 80 messages twice (each time it is cut to 60), so a second summary is due.
  api.responder = reader(60);
  await api.start();
  try {
    const { result, status } = await runTask(api, { provider: 'anthropic', model: 'claude-haiku-4-5', contextWindowTokens: WINDOW }, { budgets: { summaryTokens: 1 } }, 60);
    expect(api.rejected.map((r) => r.rejected)).toEqual([]);
    expect(result.outcome).toBe('answered');
    // One summary (the budget was not yet spent), then trimming.
    expect(status.context!.summaries.count).toBe(1);
    expect(status.context!.trims).toBeGreaterThanOrEqual(1);
    expect(status.budgets.summaryTokens!.left).toBe(0);
    expect(status.events.some((e) => /trimmed without a summary \(last resort: the summary token budget is spent/.test(e.detail))).toBe(true);
  } finally {
    await api.stop();
  }
}, 300_000);
