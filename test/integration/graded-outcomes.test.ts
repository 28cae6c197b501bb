/**
 * Graded outcomes (docs/outcomes.md) on a real dev server, through the real @anthropic-ai/sdk
 * against the strict fake Messages API: an answer that passes its grade on the first attempt; a
 * failing grade that goes back to the task as a user message and a second answer that passes; a
 * task out of attempts that ends outcome_failed with every grade; the grader's request holding only
 * the prompt, the answer and the evidence the rubric names; a worker SIGKILLed while its grader call
 * is in flight, after which the answer is graded once; the grader's tokens in the token budget; a cost
 * cap the turns spent, after which the grader is not called and the answer is not graded; `eval` grading a
 * replay by the same rubric.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { createDataConverter } from '../../src/codec';
import { GRADER_SYSTEM } from '../../src/protocol/outcome';
import type { FakeReply, RecordedRequest } from '../../src/testing/fake-messages-api';
import { fakeErrors, fakeTurns } from '../../src/testing/fake-messages-api';
import { spawnWorker, statusWhen, useHarness } from '../support/harness';
import { useFakeApi } from '../support/fake-api';
import { sigkill, waitFor } from '../support/processes';
import { runMain } from '../support/cli-in-process';
import { recordTask } from '../../src/replay';
import { evalRecordings } from '../../src/testing';
import gradedAgents, { AGENT_SYSTEM, RUBRIC } from '../support/graded-agents';

jest.setTimeout(240_000);

const h = useHarness();
const api = useFakeApi();
const modelEnv = () => ({ anthropicApiKey: 'sk-ant-test', anthropicBaseURL: api.url });

const PROMPT = 'What is the status of order o-1, and when will it arrive?';
const isGrader = (r: RecordedRequest) => JSON.stringify(r.body.system ?? '').includes('You grade the answer');
const graderCalls = () => api.requests.filter((r) => !r.rejected && isGrader(r));
const agentCalls = () => api.requests.filter((r) => !r.rejected && !isGrader(r));
const grade = (pass: boolean, reasons: string, score = pass ? 0.9 : 0.2): FakeReply => fakeTurns.text(JSON.stringify({ pass, score, reasons }));
const textOfMessage = (m: unknown) => JSON.stringify(m);

/**
 * The agent: its first call reads the order and the internal notes; every later call answers,
 * numbered by how many answers it gave. The grader: the replies the test queues, in order.
 */
function respondWith(graderReplies: FakeReply[], agentUsage?: { input: number; output: number }) {
  let answers = 0;
  api.requests.length = 0;
  api.responder = (request) => {
    if (isGrader(request)) return graderReplies.shift() ?? grade(false, 'no grade queued');
    if (request.body.messages.length === 1) {
      return {
        kind: 'turn',
        content: [
          { type: 'tool_use', id: 'toolu_lookup', name: 'lookup_order', input: { order_id: 'o-1' } },
          { type: 'tool_use', id: 'toolu_notes', name: 'internal_notes', input: { order_id: 'o-1' } },
        ],
        ...(agentUsage ? { usage: agentUsage } : {}),
      };
    }
    answers += 1;
    return fakeTurns.text(`ANSWER-${answers}: order o-1 is shipped.${answers > 1 ? ' It arrives on 2026-12-02.' : ''}`, agentUsage ? { usage: agentUsage } : {});
  };
}

/** Runs a task to its end; `closed` runs while the worker still serves it (a closed task's status query needs one). */
async function runTask(agent: string, prefix: string, closed: (taskId: string) => Promise<void> = async () => {}) {
  const taskId = h.taskId(prefix);
  const worker = await h.worker(gradedAgents(), { modelEnv: modelEnv(), taskQueue: h.taskQueue });
  return worker.runUntil(async () => {
    await h.client.start({ agent, prompt: PROMPT }, { taskId });
    const result = await h.client.result(taskId);
    await closed(taskId);
    return { taskId, result, status: await h.client.status(taskId) };
  });
}

const cli = (...args: string[]) => runMain([...args, '--address', h.server.address, '--task-queue', h.taskQueue]);

async function expectReplays(taskId: string): Promise<void> {
  const history = await h.client.client.workflow.getHandle(taskId).fetchHistory();
  await expect(Worker.runReplayHistory({ workflowBundle: h.bundle, dataConverter: createDataConverter() }, history, taskId)).resolves.toBeUndefined();
}

test('an answer that passes on its first attempt: answered, one grade, the grader saw only the prompt, the answer and the named evidence', async () => {
  respondWith([grade(true, 'States the status shipped as looked up.')]);
  const { taskId, result, status } = await runTask('graded3', 'pass-first');
  expect(api.rejected).toEqual([]);
  expect(result.outcome).toBe('answered');
  expect(result.text).toContain('ANSWER-1');
  expect(result.grades).toHaveLength(1);
  expect(result.grades![0]).toMatchObject({ attempt: 1, pass: true, score: 0.9, reasons: 'States the status shipped as looked up.' });
  expect(status.outcome).toMatchObject({ maxAttempts: 3, attempts: 1, passed: true });
  expect(status.events.some((e) => e.kind === 'answer_graded')).toBe(true);

  // The grader's request: its own instructions, one user message, no tools, nothing else of the conversation.
  const [graderCall] = graderCalls();
  expect(graderCalls()).toHaveLength(1);
  const body = graderCall!.body;
  expect(JSON.stringify(body.system)).toContain(GRADER_SYSTEM.slice(0, 60));
  expect(JSON.stringify(body.system)).not.toContain(AGENT_SYSTEM);
  expect(body.tools ?? []).toEqual([]);
  expect(body.messages).toHaveLength(1);
  const seen = textOfMessage(body.messages[0]);
  expect(seen).toContain(PROMPT);
  expect(seen).toContain('ANSWER-1');
  expect(seen).toContain(RUBRIC);
  // The evidence named (lookup_order's result), and not the tool the rubric does not name.
  expect(seen).toContain('2026-12-02');
  expect(seen).toContain('lookup_order');
  expect(seen).not.toContain('PRIVATE-NOTE');
  expect(seen).not.toContain('internal_notes');

  // The grader's tokens and cost count in the task's, as the fake billed them.
  const billed = graderCall!.billed!;
  const gradeUsage = result.grades![0]!.usage;
  expect([gradeUsage.inputTokens, gradeUsage.outputTokens, gradeUsage.cacheWriteTokens ?? 0, gradeUsage.cacheReadTokens ?? 0]).toEqual([
    billed.input_tokens,
    billed.output_tokens,
    billed.cache_creation_input_tokens,
    billed.cache_read_input_tokens,
  ]);
  expect(result.grades![0]!.costUsd).toBeGreaterThan(0);
  const agentCost = status.costUsd - status.outcome!.costUsd;
  expect(status.outcome!.costUsd).toBeCloseTo(result.grades![0]!.costUsd!, 10);
  expect(agentCost).toBeGreaterThan(0);
  expect(status.usage.outputTokens).toBe(api.billed.reduce((n, b) => n + b.output_tokens, 0));
  await expectReplays(taskId);
});

test("a fork's grader reads the origin's prompt and the fork's message, each labelled, never `fork of X@N` as the task", async () => {
  respondWith([grade(true, 'origin passes'), grade(true, 'fork passes')]);
  const origin = h.taskId('graded-origin');
  const message = 'Also say which carrier ships it.';
  const worker = await h.worker(gradedAgents(), { modelEnv: modelEnv(), taskQueue: h.taskQueue });
  const { fork, result } = await worker.runUntil(async () => {
    await h.client.start({ agent: 'graded3', prompt: PROMPT }, { taskId: origin });
    await h.client.result(origin);
    const fork = await h.client.fork(origin, 1, { message, blobStore: h.blobStore });
    return { fork, result: await h.client.result(fork.taskId) };
  });
  expect(api.rejected).toEqual([]);
  expect(result.outcome).toBe('answered');
  expect(graderCalls()).toHaveLength(2);
  const seen = textOfMessage(graderCalls()[1]!.body.messages[0]);
  const task = `<task>\nThe task's original request (from ${origin}):\n${PROMPT}\n\nThe message that started this fork:\n${message}\n</task>`;
  expect(seen).toContain(JSON.stringify(task).slice(1, -1));
  expect(seen).not.toContain(`fork of ${fork.forkedFrom}`);
});

test('a failing grade goes back to the task as a user message with the reasons; the second answer passes', async () => {
  respondWith([grade(false, 'REASON-7: the delivery date is missing.'), grade(true, 'Status and date both stated.')]);
  const { taskId, result, status } = await runTask('graded3', 'fail-then-pass');
  expect(api.rejected).toEqual([]);
  expect(result.outcome).toBe('answered');
  expect(result.text).toContain('ANSWER-2');
  expect(result.grades!.map((g) => [g.attempt, g.pass])).toEqual([
    [1, false],
    [2, true],
  ]);
  expect(status.outcome).toMatchObject({ attempts: 2, passed: true });

  // The second answer's request: the first answer, then a user message with the grader's reasons.
  const calls = agentCalls();
  expect(calls).toHaveLength(3);
  const messages = calls[2]!.body.messages as { role: string; content: unknown }[];
  const last = messages.at(-1)!;
  expect(last.role).toBe('user');
  expect(JSON.stringify(last.content)).toContain('REASON-7: the delivery date is missing.');
  expect(JSON.stringify(messages.at(-2))).toContain('ANSWER-1');
  // The first request went without it.
  expect(JSON.stringify(calls[1]!.body.messages)).not.toContain('REASON-7');
  // The second grade read the second answer.
  expect(textOfMessage(graderCalls()[1]!.body.messages[0])).toContain('ANSWER-2');
  await expectReplays(taskId);
});

test('out of attempts: the task ends outcome_failed, with every grade kept', async () => {
  respondWith([grade(false, 'FIRST: no date.'), grade(false, 'SECOND: still no date.', 0.4)]);
  // Two answers allowed (maxAttempts 2), and the grader fails both.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'graded-export-'));
  let rendered = '';
  const { taskId, result, status } = await runTask('graded2', 'out-of-attempts', async (id) => {
    rendered = (await cli('status', id)).out;
    const exported = await cli('export', id, '--out', path.join(dir, 'graded.json'), '--blob-store', `file:${path.join(h.tmpDir, 'blobs')}`);
    expect(exported.code).toBe(0);
  });
  expect(api.rejected).toEqual([]);
  expect(result.outcome).toBe('outcome_failed');
  expect(result.text).toContain('ANSWER-2');
  expect(result.grades!.map((g) => [g.attempt, g.pass, g.reasons])).toEqual([
    [1, false, 'FIRST: no date.'],
    [2, false, 'SECOND: still no date.'],
  ]);
  expect(status.agentStatus).toBe('completed');
  expect(status.outcome).toMatchObject({ maxAttempts: 2, attempts: 2, passed: false });
  expect(status.outcome!.grades).toHaveLength(2);
  expect(status.outcome!.usage.outputTokens).toBe(graderCalls().reduce((n, r) => n + r.billed!.output_tokens, 0));
  // `status` shows the outcome and each grade; the export keeps every grade, and counts the grader's spend.
  expect(rendered).toContain('outcome    failed (outcome_failed): 2 of 2 attempts graded');
  expect(rendered).toContain('attempt 1 (turn 2) fail 0.2 by claude-opus-4-5: FIRST: no date.');
  expect(rendered).toContain('attempt 2 (turn 3) fail 0.4 by claude-opus-4-5: SECOND: still no date.');
  const recording = JSON.parse(readFileSync(path.join(dir, 'graded.json'), 'utf8'));
  expect(recording.outcome).toMatchObject({ status: 'completed', outcome: 'outcome_failed' });
  expect(recording.outcome.grades.map((g: { reasons: string }) => g.reasons)).toEqual(['FIRST: no date.', 'SECOND: still no date.']);
  expect(recording.costUsd).toBeCloseTo(status.costUsd, 5);
  // Only one retry: two answers, two grades, no third answer.
  expect(agentCalls()).toHaveLength(3);
  expect(graderCalls()).toHaveLength(2);
  await expectReplays(taskId);
});

test("the grader's tokens count against the task's token budget: a grade that spends it blocks the task before another answer", async () => {
  // The agent's calls bill 110 tokens each, the grader's 5,100: 1,000 tokens last the agent's two calls, not the grade.
  respondWith([{ ...grade(false, 'not yet'), usage: { input: 5_000, output: 100 } } as FakeReply], { input: 100, output: 10 });
  const taskId = h.taskId('grader-budget');
  const worker = await h.worker(gradedAgents(), { modelEnv: modelEnv(), taskQueue: h.taskQueue });
  const { blocked, result } = await worker.runUntil(async () => {
    await h.client.start({ agent: 'graded3', prompt: PROMPT, budgets: { tokens: 1_000 } }, { taskId });
    const blocked = await statusWhen(h, taskId, (s) => s.agentStatus === 'blocked' || s.agentStatus === 'completed');
    // Nobody raises the budget: the task ends with what it has.
    if (blocked.agentStatus === 'blocked') await h.client.unblock(taskId, { by: 'ana' });
    return { blocked, result: await h.client.result(taskId) };
  });
  expect(api.rejected).toEqual([]);
  expect(blocked.blocked).toMatchObject({ code: 'token_budget' });
  expect(blocked.budgets.tokens).toMatchObject({ used: 2 * 110 + 5_100, limit: 1_000 });
  expect(blocked.outcome).toMatchObject({ attempts: 1, usage: { inputTokens: 5_000, outputTokens: 100 } });
  expect(result.outcome).toBe('budget_exhausted');
  // The failing grade's guidance was never answered: two agent calls, one grade.
  expect(agentCalls()).toHaveLength(2);
  expect(graderCalls()).toHaveLength(1);
  await expectReplays(taskId);
});

test('a cost cap the turns spent: the grader is not called, and the answer ends budget_exhausted, not graded', async () => {
  // Each agent call bills $0.0085 (1,200 input and 100 output tokens of claude-opus-4-5): the first
  // leaves the $0.0165 cap unspent, the second's maximum still fits what is left (each call is sent
  // with a max_tokens that fits), the answer spends the cap, and the grade would bill beyond it.
  respondWith([grade(true, 'never asked')], { input: 1_200, output: 100 });
  const taskId = h.taskId('grader-cost-cap');
  const worker = await h.worker(gradedAgents(), { modelEnv: modelEnv(), taskQueue: h.taskQueue });
  let rendered = '';
  const { blocked, result, status } = await worker.runUntil(async () => {
    await h.client.start({ agent: 'graded3', prompt: PROMPT, budgets: { costUsd: 0.0165 } }, { taskId });
    const blocked = await statusWhen(h, taskId, (s) => s.agentStatus === 'blocked' || s.agentStatus === 'completed');
    // Nobody raises the budget: the answer stands, ungraded.
    if (blocked.agentStatus === 'blocked') await h.client.unblock(taskId, { by: 'ana' });
    const result = await h.client.result(taskId);
    rendered = (await cli('status', taskId)).out;
    return { blocked, result, status: await h.client.status(taskId) };
  });
  expect(api.rejected).toEqual([]);
  // The fake counted every request: two agent calls, no grader call.
  expect(graderCalls()).toHaveLength(0);
  expect(agentCalls()).toHaveLength(2);
  expect(blocked.blocked).toMatchObject({ code: 'cost_budget' });
  expect(blocked.phase).toBe('blocked');
  expect(result.outcome).toBe('budget_exhausted');
  expect(result.text).toContain('ANSWER-1');
  expect(result.grades ?? []).toEqual([]);
  expect(status.outcome).toMatchObject({ attempts: 0, notGraded: expect.stringMatching(/^the budget was spent: The task spent \$0\.0170 of its \$0\.0165 budget/) });
  expect(status.outcome!.passed).toBeUndefined();
  expect(status.costUsd).toBeCloseTo(0.017, 6);
  expect(rendered).toContain('outcome    not graded (budget_exhausted): 0 of 3 attempts graded');
  await expectReplays(taskId);
});

test("the grader call has the model's retry classes: a 529 is retried by itself; a 400 blocks the task, and an unblock grades the same answer again", async () => {
  respondWith([fakeErrors.overloaded(), grade(false, 'RETRIED-529: no date'), fakeErrors.invalidRequest('grader request refused'), grade(true, 'GRADED-AFTER-UNBLOCK')]);
  const taskId = h.taskId('grader-retries');
  const worker = await h.worker(gradedAgents(), { modelEnv: modelEnv(), taskQueue: h.taskQueue });
  const { blocked, result } = await worker.runUntil(async () => {
    await h.client.start({ agent: 'graded3', prompt: PROMPT }, { taskId });
    const blocked = await statusWhen(h, taskId, (s) => s.agentStatus === 'blocked' || s.agentStatus === 'completed');
    if (blocked.agentStatus === 'blocked') await h.client.unblock(taskId, { by: 'ana' });
    return { blocked, result: await h.client.result(taskId) };
  });
  // The 529 was retried within the activity: its grade is the first; the 400 was not retried, it blocked.
  expect(blocked.blocked).toMatchObject({ code: 'grader_invalid_request' });
  expect(blocked.outcome).toMatchObject({ attempts: 1, grades: [{ pass: false, reasons: 'RETRIED-529: no date' }] });
  expect(result.outcome).toBe('answered');
  expect(result.grades!.map((g) => [g.attempt, g.pass, g.reasons])).toEqual([
    [1, false, 'RETRIED-529: no date'],
    [2, true, 'GRADED-AFTER-UNBLOCK'],
  ]);
  // Four grader requests (529, grade, 400, grade after the unblock), one answer per grade: the blocked answer was graded again, not answered again.
  expect(graderCalls()).toHaveLength(4);
  expect(agentCalls()).toHaveLength(3);
  expect(textOfMessage(graderCalls()[3]!.body.messages)).toContain('ANSWER-2');
  await expectReplays(taskId);
});

test("eval grades a replay's answer by the agent's own rubric: a failing grade is a regression with the grader's reasons, a passing one passes", async () => {
  respondWith([grade(true, 'ok')]);
  const { taskId } = await runTask('graded3', 'for-eval');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'graded-eval-'));
  writeFileSync(path.join(dir, 'graded.json'), JSON.stringify(await recordTask(h.client, taskId, { blobStore: h.blobStore })));
  writeFileSync(path.join(dir, 'graded.expect.json'), JSON.stringify({ outcome: 'answered', grade: {} }));
  // The replay runs the recorded model (Claude, through the fake); the grader is the same model.
  const options = { client: h.client, connection: h.connection, workflowBundle: h.bundle, modelEnv: modelEnv(), agents: gradedAgents() };
  respondWith([grade(false, 'EVAL-REASON: no date', 0.3)]);
  const failing = await evalRecordings(dir, options);
  expect(failing.regressions.map((r) => r.name)).toEqual(['graded']);
  expect(failing.rows[0]!.failures).toEqual(['grade failed (score 0.3): EVAL-REASON: no date']);
  // One grader call, after the replay: the prompt, the replay's answer and the named evidence only.
  expect(graderCalls()).toHaveLength(1);
  const seen = textOfMessage(graderCalls()[0]!.body.messages);
  expect(seen).toContain(RUBRIC);
  expect(seen).toContain('ANSWER-1');
  expect(seen).toContain('2026-12-02');
  expect(seen).not.toContain('PRIVATE-NOTE');
  respondWith([grade(true, 'states status and date')]);
  const passing = await evalRecordings(dir, options);
  expect(passing.passed).toBe(true);
});

test('a worker SIGKILLed while its grader call is in flight: the retry grades the answer once, and the task does not answer again', async () => {
  // The first grader call streams one delta and stalls until its client goes away (the killed worker).
  respondWith([{ ...grade(true, 'never delivered'), stream: { chunkChars: 4, holdAfterDeltas: 1 } } as FakeReply, grade(true, 'GRADED-AFTER-KILL')]);
  const taskId = h.taskId('kill-grading');
  const doomed = spawnWorker(h, ['--agents', path.join(__dirname, '../support/graded-agents.ts')], { ANTHROPIC_API_KEY: 'sk-ant-test', ANTHROPIC_BASE_URL: api.url });
  try {
    await h.client.start({ agent: 'graded3', prompt: PROMPT }, { taskId });
    await waitFor(
      'the grader call held mid-stream',
      () => {
        const call = graderCalls()[0];
        return call && (call.stream?.deltas ?? 0) >= 1 && call.stream?.ended === undefined ? call : undefined;
      },
      120_000,
    );
    await waitFor(
      'gradeAnswer running on the doomed worker',
      async () => {
        const d = await h.client.handle(taskId).describe();
        const started = temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED;
        return (d.raw.pendingActivities ?? []).some((a) => a.activityType?.name === 'gradeAnswer' && a.state === started) || undefined;
      },
      60_000,
    );
    // While the grader judges, status says so.
    expect((await h.client.status(taskId)).phase).toBe('grading');
  } finally {
    await sigkill(doomed);
  }
  const worker = await h.worker(gradedAgents(), { modelEnv: modelEnv(), taskQueue: h.taskQueue });
  const { result, status } = await worker.runUntil(async () => ({ result: await h.client.result(taskId), status: await h.client.status(taskId) }));
  expect(api.rejected).toEqual([]);
  expect(result.outcome).toBe('answered');
  // Graded once: one grade, the retry's.
  expect(result.grades).toHaveLength(1);
  expect(result.grades![0]).toMatchObject({ attempt: 1, pass: true, reasons: 'GRADED-AFTER-KILL' });
  expect(status.outcome).toMatchObject({ attempts: 1, passed: true });
  // Two grader requests (the killed one left mid-stream), two agent calls: the answer was not asked again.
  expect(graderCalls().map((r) => r.stream?.ended)).toEqual(['client_gone', 'finished']);
  expect(agentCalls()).toHaveLength(2);
  // One gradeAnswer activity in the history, started twice, completed once.
  const events = (await h.client.handle(taskId).fetchHistory()).events!;
  const scheduled = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'gradeAnswer');
  expect(scheduled).toHaveLength(1);
  const completed = events.filter((e) => e.activityTaskCompletedEventAttributes && String(e.activityTaskCompletedEventAttributes.scheduledEventId) === String(scheduled[0]!.eventId));
  expect(completed).toHaveLength(1);
  const started = events.find((e) => e.activityTaskStartedEventAttributes && String(e.activityTaskStartedEventAttributes.scheduledEventId) === String(scheduled[0]!.eventId));
  expect(started!.activityTaskStartedEventAttributes!.attempt).toBe(2);
  await expectReplays(taskId);
});
