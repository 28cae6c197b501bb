/** Recorded answers read back from what the model read, the seal of a recording, and eval's expectations. */
import { answersIn, RecordedAnswers } from '../../src/replay/recorded-answers';
import { checkRecording, RecordingError, sealRecording, type RecordingBody, type RecordedTurn } from '../../src/replay/recording';
import { checkExpectations } from '../../src/replay/eval';

const error = { error_class: 'permanent', code: 'http_404', detail: 'no such order', retryable: false, attempts: 1 } as const;

function body(turns: RecordedTurn[]): RecordingBody {
  return {
    format: 'durable-agent.recording',
    version: 1,
    taskId: 't-1',
    exportedAt: '2026-11-23T00:00:00.000Z',
    runIds: ['r1'],
    agent: 'demo',
    prompt: 'p',
    manifest: { name: 'demo', description: '', system: 's', tools: [], model: { provider: 'anthropic' }, maxTurns: 5 },
    turns,
    outcome: { status: 'completed', outcome: 'answered', text: 'done' },
    usage: { inputTokens: 10, outputTokens: 5 },
    costUsd: 0.25,
    claimChecked: [],
  };
}

const turn = (n: number, calls: RecordedTurn['toolCalls']): RecordedTurn => ({ turn: n, model: 'm', stopReason: 'tool_use', text: '', toolCalls: calls, usage: { inputTokens: 1, outputTokens: 1 } });

test("the tool's own answer is read through the approval and ledger notes the workflow wrapped it in", () => {
  expect(answersIn('refund', JSON.stringify({ approval: { approved_by: 'ana' }, result: { id: 'R-1' } }), false)).toEqual([{ tool: 'refund', answer: { kind: 'ok', output: { id: 'R-1' } } }]);
  expect(answersIn('search', JSON.stringify({ ledger: { note: 'same call' }, result: [1] }), false)).toEqual([{ tool: 'search', answer: { kind: 'ok', output: [1] } }]);
});

test('a fallback answer records the primary failure and the fallback output under their own names; a budget note leaves the error', () => {
  const content = JSON.stringify({ used_fallback: 'archive', primary_error: error, result: { orders: [] } });
  expect(answersIn('search', content, false)).toEqual([
    { tool: 'search', answer: { kind: 'failed', error } },
    { tool: 'archive', answer: { kind: 'ok', output: { orders: [] } } },
  ]);
  expect(answersIn('get', JSON.stringify({ error: { ...error, budget_left: 3 } }), true)).toEqual([{ tool: 'get', answer: { kind: 'failed', error } }]);
  const note = { ...error, error_class: 'partial_data', code: 'more_pages' };
  expect(answersIn('search', JSON.stringify({ data: { page: 1 }, note }), false)).toEqual([{ tool: 'search', answer: { kind: 'flagged', output: { page: 1 }, issue: note } }]);
});

test('a repeated call gets the next recorded answer, then the last again; a retried call (same tool_use id) the same one; a denied call none', () => {
  const answers = new RecordedAnswers(
    body([
      turn(1, [{ id: 'a', tool: 'poll', input: { job: 1 }, result: { content: '{"state":"running"}', isError: false } }]),
      turn(2, [{ id: 'b', tool: 'poll', input: { job: 1 }, result: { content: '{"state":"done"}', isError: false } }]),
      turn(3, [
        { id: 'c', tool: 'delete', input: { path: 'x' }, result: { content: JSON.stringify({ error: { ...error, code: 'denied_by_person' } }), isError: true }, approval: { decision: 'denied' } },
      ]),
    ]),
  );
  expect(answers.answer('poll', { job: 1 }, 'u1')).toEqual({ kind: 'ok', output: { state: 'running' } });
  expect(answers.answer('poll', { job: 1 }, 'u1')).toEqual({ kind: 'ok', output: { state: 'running' } });
  expect(answers.answer('poll', { job: 1 }, 'u2')).toEqual({ kind: 'ok', output: { state: 'done' } });
  expect(answers.answer('poll', { job: 1 }, 'u3')).toEqual({ kind: 'ok', output: { state: 'done' } });
  expect(answers.answer('poll', { job: 2 }, 'u4')).toBeUndefined();
  expect(answers.answer('delete', { path: 'x' }, 'u5')).toBeUndefined();
  expect(answers.recordedInputs('poll')).toEqual([{ job: 1 }, { job: 1 }]);
});

test('a sealed recording loads; one with any field changed, or of another format, is refused in one line', () => {
  const sealed = sealRecording(body([turn(1, [])]));
  expect(checkRecording(JSON.parse(JSON.stringify(sealed)), 'f.json').taskId).toBe('t-1');
  expect(() => checkRecording({ ...sealed, costUsd: 0 }, 'f.json')).toThrow(new RecordingError('f.json was changed after export: its content does not match its contentHash'));
  expect(() => checkRecording({ ...sealed, format: 'other' }, 'f.json')).toThrow(/is not a durable-agent recording/);
  expect(() => checkRecording([], 'f.json')).toThrow(/not a recording/);
});

test('expectations name each broken rule: outcome, required and forbidden calls (by name or exact arguments), turns and cost', () => {
  const replayed = sealRecording(body([turn(1, [{ id: 'a', tool: 'refund', input: { order: 'O-1', cents: 5 } }]), turn(2, [])]));
  expect(checkExpectations(replayed, { outcome: 'answered', requiredTools: ['refund', { tool: 'refund', input: { cents: 5, order: 'O-1' } }], maxTurns: 2, maxCostUsd: 0.25 })).toEqual([]);
  expect(
    checkExpectations(replayed, { outcome: 'max_turns', requiredTools: ['search', { tool: 'refund', input: { order: 'O-2' } }], forbiddenTools: ['refund'], maxTurns: 1, maxCostUsd: 0.1 }),
  ).toEqual(['outcome answered, expected max_turns', 'never called search', 'never called refund {"order":"O-2"}', 'called refund', '2 turns, at most 1', 'cost $0.25, at most $0.1']);
});
