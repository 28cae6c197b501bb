/**
 * Graded outcomes' pure parts (docs/outcomes.md): an outcome that is not allowed fails when the agent
 * is defined, naming the field; the grader's reply read as a grade; the evidence a rubric names
 * picked from a conversation (and nothing else); the grader's one message; `eval`'s grade of a
 * replay with a scripted grader.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { defineAgent } from '../../src/agents/define-agent';
import { ScriptedModel } from '../../src/models/scripted-model';
import { agentVersionOf } from '../../src/protocol/agent-version';
import type { Message } from '../../src/protocol/messages';
import { gradingMessage, readGrade } from '../../src/protocol/outcome';
import { gradeReplay, replayEvidence } from '../../src/replay/grade-replay';
import type { RecordingBody } from '../../src/replay/recording';
import { defineTool } from '../../src/tools/define-tool';
import { evidenceIn } from '../../src/workflows/turn/grading';
import { taskPage } from '../../src/inbox/pages';
import type { TaskStatus } from '../../src/protocol/task';
import { recordGrade } from '../../src/workflows/state/grades';
import { TaskState } from '../../src/workflows/state/task-state';
import { restoreTask, snapshotOf } from '../../src/workflows/state/task-snapshot';
import { statusOf } from '../../src/workflows/state/task-status';

const lookup = defineTool({
  name: 'lookup_order',
  description: 'Look up an order.',
  input: z.object({ id: z.string() }),
  output: z.object({ status: z.string() }),
  effect: 'read',
  idempotent: true,
  run: async () => ({ status: 'shipped' }),
});
const base = { name: 'support', system: 's', tools: [lookup] };
const define = (outcome: unknown) => () => defineAgent({ ...base, outcome: outcome as never });
const model = { provider: 'scripted' as const, script: 'x.json' };

test.each([
  ['a string', 'be right', /^Agent "support": outcome must be an object/],
  ['no rubric', { maxAttempts: 2 }, /outcome\.rubric must be a non-empty string/],
  ['an empty rubric', { rubric: '  ', maxAttempts: 2 }, /outcome\.rubric must be a non-empty string/],
  ['no maxAttempts', { rubric: 'r' }, /outcome\.maxAttempts must be an integer from 1 to 10/],
  ['maxAttempts 0', { rubric: 'r', maxAttempts: 0 }, /outcome\.maxAttempts must be an integer from 1 to 10 \(answers the task may give\), got 0/],
  ['maxAttempts 11', { rubric: 'r', maxAttempts: 11 }, /outcome\.maxAttempts must be an integer from 1 to 10/],
  ['maxAttempts 1.5', { rubric: 'r', maxAttempts: 1.5 }, /outcome\.maxAttempts must be an integer/],
  ['a misspelt field', { rubric: 'r', maxAttempts: 2, maxAttempt: 3 }, /outcome has no field "maxAttempt" \(its fields: rubric, evidence, grader, maxAttempts\)/],
  ['evidence not a list', { rubric: 'r', maxAttempts: 2, evidence: 'tool:lookup_order' }, /outcome\.evidence must be a list of "tool:NAME" entries/],
  ['evidence without tool:', { rubric: 'r', maxAttempts: 2, evidence: ['lookup_order'] }, /outcome\.evidence entries must be "tool:NAME"/],
  ['evidence of an unknown tool', { rubric: 'r', maxAttempts: 2, evidence: ['tool:refund'] }, /outcome\.evidence names tool "refund", which the agent does not have/],
  ['a grader that is not a model choice', { rubric: 'r', maxAttempts: 2, grader: 'claude' }, /outcome\.grader must be a model choice/],
  ['a grader with an unknown provider', { rubric: 'r', maxAttempts: 2, grader: { provider: 'openai' } }, /^Agent "support": outcome\.grader: model\.provider must be/],
])('%s is a TypeError naming the agent and the field', (_what, outcome, message) => {
  expect(define(outcome)).toThrow(TypeError);
  expect(define(outcome)).toThrow(message);
});

test('an allowed outcome reaches the manifest and changes the agent version; without one the manifest and version are as before', () => {
  const plain = defineAgent(base).manifest(model);
  expect(plain).not.toHaveProperty('outcome');
  const graded = defineAgent({
    ...base,
    outcome: { rubric: 'cites the status', evidence: ['tool:lookup_order'], maxAttempts: 3, grader: { provider: 'anthropic', model: 'claude-haiku-4-5' } },
  }).manifest(model);
  expect(graded.outcome).toEqual({ rubric: 'cites the status', evidence: ['tool:lookup_order'], maxAttempts: 3, grader: { provider: 'anthropic', model: 'claude-haiku-4-5' } });
  expect(agentVersionOf(graded)).not.toBe(agentVersionOf(plain));
  // An MCP tool of a declared server may be named before its tools are listed.
  expect(() => defineAgent({ ...base, mcpServers: [{ name: 'crm', command: 'crm-server' }], outcome: { rubric: 'r', evidence: ['tool:crm__find'], maxAttempts: 1 } })).not.toThrow();
});

test.each([
  ['{"pass": true, "score": 0.8, "reasons": "ok"}', { pass: true, score: 0.8, reasons: 'ok' }],
  ['Here is my grade:\n{"pass": false, "reasons": "no date"}\nThanks', { pass: false, reasons: 'no date' }],
  ['{"pass": false, "score": 7, "reasons": ["no date", "no status"]}', { pass: false, score: 1, reasons: 'no date; no status' }],
  ['{"pass": true}', { pass: true, reasons: 'passed' }],
])('the grade in %j', (text, grade) => {
  expect(readGrade(text)).toEqual(grade);
});

test.each(['I think it passes.', '{"pass": "yes", "reasons": "ok"}', '{"pass": true', '[true]'])('no grade in %j', (text) => {
  expect(readGrade(text)).toBeUndefined();
});

const conversation: Message[] = [
  { role: 'user', content: 'Where is o-1?' },
  {
    role: 'assistant',
    content: [
      { type: 'tool_use', id: 'a', name: 'lookup_order', input: { id: 'o-1' } },
      { type: 'tool_use', id: 'b', name: 'internal_notes', input: { id: 'o-1' } },
    ],
  },
  {
    role: 'user',
    content: [
      { type: 'tool_result', tool_use_id: 'a', content: '{"status":"shipped"}' },
      { type: 'tool_result', tool_use_id: 'b', content: 'PRIVATE' },
    ],
  },
  { role: 'assistant', content: [{ type: 'tool_use', id: 'c', name: 'lookup_order', input: { id: 'o-2' } }] },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c', content: 'not found', is_error: true }] },
  { role: 'assistant', content: [{ type: 'text', text: 'o-1 shipped.' }] },
];

test('the evidence is the named tools results, in order, and nothing of the other tools', () => {
  const evidence = evidenceIn(conversation, ['lookup_order']);
  expect(evidence).toEqual([
    { tool: 'lookup_order', input: { id: 'o-1' }, result: '{"status":"shipped"}' },
    { tool: 'lookup_order', input: { id: 'o-2' }, result: 'not found', isError: true },
  ]);
  expect(evidenceIn(conversation, [])).toEqual([]);
  const message = gradingMessage({ rubric: 'RUBRIC', prompt: 'Where is o-1?', answer: 'o-1 shipped.', evidence });
  expect(message).toContain('Where is o-1?');
  expect(message).toContain('{"status":"shipped"}');
  expect(message).not.toContain('PRIVATE');
  expect(gradingMessage({ rubric: 'R', prompt: 'P', answer: 'A', evidence: [] })).toContain('<evidence>\n(none)\n</evidence>');
});

function replayed(text: string): RecordingBody {
  return {
    prompt: 'Where is o-1?',
    outcome: { status: 'completed', outcome: 'answered', text },
    turns: [
      {
        turn: 1,
        model: 'm',
        stopReason: 'tool_use',
        text: '',
        usage: { inputTokens: 1, outputTokens: 1 },
        toolCalls: [
          { id: 'a', tool: 'lookup_order', input: { id: 'o-1' }, result: { content: '{"status":"shipped"}', isError: false } },
          { id: 'b', tool: 'internal_notes', input: { id: 'o-1' }, result: { content: 'PRIVATE', isError: false } },
        ],
      },
    ],
  } as unknown as RecordingBody;
}

test("eval's grade: the agent's outcome or the expectation's own rubric, by the grader's verdict", async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'grade-replay-'));
  const grader = (reply: string) => {
    const file = path.join(dir, `${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(file, JSON.stringify({ turns: [{ content: [{ type: 'text', text: reply }] }] }));
    return ScriptedModel.fromFile(file, [dir]);
  };
  const agentOutcome = { rubric: 'states the status', evidence: ['tool:lookup_order'], maxAttempts: 2 };
  const replayModel = { provider: 'scripted' as const, script: 'unused.json' };
  expect(await gradeReplay(replayed('shipped'), {}, { agentOutcome, replayModel, model: grader('{"pass": true, "reasons": "ok"}') })).toEqual([]);
  expect(await gradeReplay(replayed('no idea'), {}, { agentOutcome, replayModel, model: grader('{"pass": false, "score": 0.1, "reasons": "no status"}') })).toEqual([
    'grade failed (score 0.1): no status',
  ]);
  expect(await gradeReplay(replayed('x'), {}, { replayModel, model: grader('{"pass": true}') })).toEqual(['grade: the agent has no outcome rubric; give the expectation a "rubric"']);
  expect(await gradeReplay(replayed('x'), { rubric: 'own' }, { replayModel, model: grader('{"pass": true}') })).toEqual([]);
  await expect(gradeReplay(replayed('x'), { rubric: 'own' }, { replayModel, model: grader('looks fine') })).rejects.toThrow(/without a JSON grade/);
  expect(replayEvidence(replayed('x'), ['lookup_order'])).toEqual([{ tool: 'lookup_order', input: { id: 'o-1' }, result: '{"status":"shipped"}' }]);
});

test('grades are counted in the task spend, shown in status and carried across continue-as-new; a task without them writes the snapshot it wrote before', () => {
  const clock = { now: () => new Date('2026-11-27T10:00:00Z'), newId: () => 'id' };
  const input = { agent: 'support', prompt: 'Where is o-1?' };
  const manifest = defineAgent({ ...base, outcome: { rubric: 'r', maxAttempts: 3 } }).manifest(model);
  const state = new TaskState(input, clock);
  state.begin(manifest);
  expect(snapshotOf(state)).not.toHaveProperty('grades');
  expect(statusOf(state).outcome).toEqual({ maxAttempts: 3, attempts: 0, grades: [], usage: { inputTokens: 0, outputTokens: 0, cacheWriteTokens: 0, cacheReadTokens: 0 }, costUsd: 0 });
  state.startTurn();
  recordGrade(state, { pass: false, score: 0.2, reasons: 'no date', model: 'claude-x', usage: { inputTokens: 100, outputTokens: 10, cacheReadTokens: 5 }, costUsd: 0.01 }, 3);
  expect(state.usage).toMatchObject({ inputTokens: 100, outputTokens: 10, cacheReadTokens: 5 });
  expect(state.costUsd).toBeCloseTo(0.01);
  expect(statusOf(state).outcome).toMatchObject({ attempts: 1, costUsd: 0.01 });
  expect(state.audit.events.at(-1)).toMatchObject({ kind: 'answer_graded', detail: 'attempt 1 of 3 failed (score 0.2) [115 tokens, $0.0100]: no date' });
  const restored = restoreTask(input, clock, JSON.parse(JSON.stringify(snapshotOf(state))));
  restored.adoptManifest(manifest);
  expect(restored.grades).toEqual(state.grades);
  expect(statusOf(restored).outcome).toMatchObject({ attempts: 1, grades: [{ attempt: 1, turn: 1, pass: false, reasons: 'no date' }] });
  // A grade with no price names its model among the unpriced ones, as a model turn does.
  recordGrade(restored, { pass: true, reasons: 'ok', model: 'claude-unpriced', usage: { inputTokens: 1, outputTokens: 1 } }, 3);
  expect(restored.unpricedModels).toContain('claude-unpriced');
  expect(statusOf(restored).outcome).toMatchObject({ attempts: 2, passed: true });
  expect(restored.complete('answered').grades).toHaveLength(2);
  // An agent without an outcome: no `outcome` in status, no `grades` in its result.
  const plain = new TaskState(input, clock);
  plain.begin(defineAgent(base).manifest(model));
  expect(statusOf(plain)).not.toHaveProperty('outcome');
  expect(plain.complete('answered')).not.toHaveProperty('grades');
});

test("the inbox task page shows a graded outcome: verdict, attempts, the grader's cost and each grade's reasons, escaped", () => {
  const status = {
    agent: 'support',
    agentStatus: 'completed',
    phase: 'completed',
    turn: 3,
    budgets: { turns: { used: 3, limit: 20, left: 17 }, toolCalls: { used: 0, limit: 50, left: 50 } },
    pendingApprovals: [],
    approvals: [],
    events: [],
    outcome: {
      maxAttempts: 2,
      attempts: 2,
      passed: false,
      usage: { inputTokens: 10, outputTokens: 2 },
      costUsd: 0.0123,
      grades: [
        { attempt: 1, turn: 2, pass: false, score: 0.2, reasons: 'no <b>date</b>', model: 'm', usage: { inputTokens: 5, outputTokens: 1 }, at: 'now' },
        { attempt: 2, turn: 3, pass: false, reasons: 'still none', model: 'm', usage: { inputTokens: 5, outputTokens: 1 }, at: 'now' },
      ],
    },
    result: { outcome: 'outcome_failed', text: 'soon', turns: 3, toolCalls: 0, usage: { inputTokens: 10, outputTokens: 2 }, costUsd: 0.02, model: 'm' },
  } as unknown as TaskStatus;
  const out = taskPage({ csrf: 'c' }, { taskId: 't-1', summary: { taskId: 't-1', runId: 'r', executionStatus: 'COMPLETED', startTime: new Date(0) }, status, recent: [] });
  expect(out).toContain('<dt>Outcome</dt><dd>failed (outcome_failed): 2 of 2 attempts graded, grader $0.0123');
  expect(out).toContain('<li>attempt 1: fail 0.2 — no &lt;b&gt;date&lt;/b&gt;</li>');
  expect(out).toContain('<li>attempt 2: fail — still none</li>');
  expect(out).toContain('Result (outcome_failed):');
});
