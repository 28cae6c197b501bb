/**
 * Recordings carry their model script (issue 38, point 3): the seal covers the carried script, a
 * carried script's name cannot escape the replay's folder, version 1 files still load, and eval's
 * verdicts keep "cannot run" apart from a regression (exit 2, never 1 on its own).
 */
import { checkRecording, RecordingError, sealRecording, type RecordingBody } from '../../src/replay/recording';
import { evalExitCode, renderEvalTable, type EvalRow } from '../../src/replay/eval';

const script = { description: 'test script', turns: [{ content: [{ type: 'text' as const, text: 'done' }] }] };

function body(overrides: Partial<RecordingBody> = {}): RecordingBody {
  return {
    format: 'durable-agent.recording',
    version: 2,
    taskId: 't-1',
    exportedAt: '2026-11-27T00:00:00.000Z',
    runIds: ['r1'],
    agent: 'demo',
    prompt: 'p',
    modelChoice: { provider: 'scripted', script: 'script-1.json' },
    modelScript: { name: 'script-1.json', script },
    manifest: { name: 'demo', description: '', system: 's', tools: [], model: { provider: 'anthropic' }, maxTurns: 5 },
    turns: [],
    outcome: { status: 'completed', outcome: 'answered', text: 'done' },
    usage: { inputTokens: 0, outputTokens: 0 },
    costUsd: 0,
    claimChecked: [],
    ...overrides,
  };
}

test('the content hash covers the carried script: a script edited after export is refused like an edited answer', () => {
  const sealed = sealRecording(body());
  expect(checkRecording(JSON.parse(JSON.stringify(sealed)), 'r.json').modelScript).toEqual({ name: 'script-1.json', script });
  const edited = JSON.parse(JSON.stringify(sealed));
  edited.modelScript.script.turns[0].content[0].text = 'something else';
  expect(() => checkRecording(edited, 'r.json')).toThrow('r.json was changed after export: its content does not match its contentHash');
});

test('a carried script whose name is not one plain .json file name, or that is not a script, is refused on load', () => {
  for (const name of ['../escape.json', '/abs/script.json', 'sub/script.json', 'script.txt', '.hidden.json', 'a\\b.json']) {
    const sealed = sealRecording(body({ modelScript: { name, script } }));
    expect(() => checkRecording(sealed, 'r.json')).toThrow(new RecordingError('r.json: modelScript.name must be a plain .json file name'));
  }
  const notAScript = sealRecording(body({ modelScript: { name: 's.json', script: { turns: [] } as never } }));
  expect(() => checkRecording(notAScript, 'r.json')).toThrow(/modelScript\.script is not a model script/);
});

test('a version 1 recording (a script path, no script) still loads; an unknown version is refused naming the versions read', () => {
  const v1 = sealRecording(body({ version: 1, modelChoice: { provider: 'scripted', script: '/gone/script-1.json' }, modelScript: undefined }));
  delete (v1 as Partial<RecordingBody>).modelScript;
  expect(checkRecording(JSON.parse(JSON.stringify(v1)), 'old.json').modelChoice).toEqual({ provider: 'scripted', script: '/gone/script-1.json' });
  expect(() => checkRecording(sealRecording(body({ version: 3 })), 'new.json')).toThrow('new.json is recording version 3; this version reads 1 and 2');
});

const row = (name: string, verdict: EvalRow['verdict'], failures: string[] = []): EvalRow => ({
  name,
  taskId: name,
  recordedOutcome: 'answered',
  outcome: verdict === 'cannot_run' ? 'cannot run' : 'answered',
  turns: 1,
  toolCalls: 0,
  costUsd: 0,
  passed: verdict === 'passed',
  verdict,
  failures,
});

test('eval: a case that cannot run is no regression: exit 2 alone, exit 1 only when another one regressed, and the table says CANNOT RUN with the reason', () => {
  expect(evalExitCode([row('a', 'passed')])).toBe(0);
  expect(evalExitCode([row('a', 'passed'), row('b', 'cannot_run', ['the recording names model script /x.json without carrying it'])])).toBe(2);
  expect(evalExitCode([row('a', 'regressed', ['called cancel_order']), row('b', 'cannot_run', ['x'])])).toBe(1);
  const table = renderEvalTable([row('a', 'passed'), row('b', 'cannot_run', ['the recording names model script /x.json without carrying it'])]);
  expect(table).toContain('CANNOT RUN: the recording names model script /x.json without carrying it');
  expect(table.split('\n').at(-1)).toBe('1 of 2 could not run (no verdict)');
  expect(table).not.toContain('regressed');
  expect(
    renderEvalTable([row('a', 'regressed', ['called x']), row('b', 'cannot_run', ['y'])])
      .split('\n')
      .at(-1),
  ).toBe('1 of 2 regressed; 1 of 2 could not run (no verdict)');
});
