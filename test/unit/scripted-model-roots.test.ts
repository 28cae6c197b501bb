/**
 * Issue 13 item 2: a task's `model.script` names a file on the worker, so only `.json` files under
 * the worker's script folders are read (symlinks resolved), and a refusal never echoes content.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createModel, defaultScriptRoots } from '../../src/models/create-model';
import { ScriptedModel } from '../../src/models/scripted-model';
import { ToolFailure } from '../../src/errors/tool-failure';

let tmp: string;
let root: string;
let outside: string;
const script = JSON.stringify({ turns: [{ content: [{ type: 'text', text: 'scripted hello' }] }] });

beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'script-roots-'));
  root = path.join(tmp, 'scripts');
  outside = path.join(tmp, 'elsewhere');
  mkdirSync(root);
  mkdirSync(outside);
  writeFileSync(path.join(root, 'ok.json'), script);
  writeFileSync(path.join(outside, 'secret.json'), '{"password":"hunter2"}');
  writeFileSync(path.join(outside, 'secret.txt'), 'root:x:0:0:hunter2');
  writeFileSync(path.join(root, 'not-json.json'), 'root:x:0:0:hunter2 is not json');
  writeFileSync(path.join(root, 'wrong-shape.json'), '{"turns":[{"content":[{"type":"hunter2"}]}]}');
  symlinkSync(path.join(outside, 'secret.json'), path.join(root, 'link.json'));
  symlinkSync(outside, path.join(root, 'linked-dir'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function refusal(file: string, roots = [root]): ToolFailure {
  try {
    ScriptedModel.fromFile(file, roots);
  } catch (err) {
    expect(err).toBeInstanceOf(ToolFailure);
    const failure = err as ToolFailure;
    expect(failure.errorClass).toBe('permanent');
    expect(failure.message).toContain(file);
    expect(`${failure.message} ${failure.hint}`).not.toMatch(/hunter2|root:x/);
    return failure;
  }
  throw new Error(`${file} was read`);
}

test('a .json script under a root is read and plays', async () => {
  const model = ScriptedModel.fromFile(path.join(root, 'ok.json'), [root]);
  expect(model.id).toBe('scripted:ok.json');
  expect((await model.complete({ system: '', messages: [{ role: 'user', content: 'hi' }], tools: [] })).content).toEqual([{ type: 'text', text: 'scripted hello' }]);
});

test('a relative name is looked up under the roots', () => {
  expect(ScriptedModel.fromFile('ok.json', [outside, root]).id).toBe('scripted:ok.json');
});

test('/etc/passwd is refused without being read', () => {
  expect(refusal('/etc/passwd').code).toBe('script_refused');
});

test('a .json file outside the roots is refused, and whether it exists is not told', () => {
  const existing = refusal(path.join(outside, 'secret.json'));
  const missing = refusal(path.join(outside, 'nothing.json'));
  expect(existing.code).toBe('script_refused');
  expect(missing.code).toBe('script_refused');
});

test('a refusal for a script outside the folders names every folder the worker reads and the DURABLE_AGENT_SCRIPT_DIRS setting', () => {
  const failure = refusal(path.join(outside, 'secret.json'), [root, path.join(tmp, 'second')]);
  expect(failure.message).toContain(`script folders (${root}, ${path.join(tmp, 'second')}; DURABLE_AGENT_SCRIPT_DIRS adds more)`);
  expect(failure.hint).toContain('DURABLE_AGENT_SCRIPT_DIRS');
  expect(failure.hint).toContain('docs/scripted-models.md');
});

test('../ out of a root is refused', () => {
  expect(refusal(path.join(root, '..', 'elsewhere', 'secret.json')).code).toBe('script_refused');
  expect(refusal('../elsewhere/secret.json').code).toBe('script_refused');
});

test('a symlink inside a root that points outside is refused (real paths are checked)', () => {
  expect(refusal(path.join(root, 'link.json')).code).toBe('script_refused');
  expect(refusal(path.join(root, 'linked-dir', 'secret.json')).code).toBe('script_refused');
});

test('only .json files are read, even under a root', () => {
  writeFileSync(path.join(root, 'notes.txt'), 'hunter2');
  expect(refusal(path.join(root, 'notes.txt')).code).toBe('script_refused');
});

test('invalid JSON is refused without quoting the file (V8 parse errors do)', () => {
  expect(refusal(path.join(root, 'not-json.json'))).toMatchObject({ code: 'script_invalid', message: expect.stringContaining('not valid JSON') });
});

test('a script of the wrong shape names the field, not the value', () => {
  expect(refusal(path.join(root, 'wrong-shape.json')).code).toBe('script_invalid');
});

test('a FIFO under a root is refused without blocking on it', () => {
  const fifo = path.join(root, 'pipe.json');
  execFileSync('mkfifo', [fifo]);
  expect(refusal(fifo).message).toMatch(/not a regular file/);
});

test('a missing script under a root is script_unreadable', () => {
  expect(refusal(path.join(root, 'gone.json')).code).toBe('script_unreadable');
});

test('createModel reads scripts only under env.scriptRoots', () => {
  expect(createModel({ provider: 'scripted', script: path.join(root, 'ok.json') }, { scriptRoots: [root] }).id).toBe('scripted:ok.json');
  expect(() => createModel({ provider: 'scripted', script: path.join(root, 'ok.json') }, { scriptRoots: [outside] })).toThrow(/refused/);
});

test('default roots: the demo scripts, DURABLE_AGENT_SCRIPT_DIRS and <state dir>/scripts', () => {
  const roots = defaultScriptRoots({ DURABLE_AGENT_SCRIPT_DIRS: [root, outside].join(path.delimiter) });
  expect(roots).toEqual([path.resolve(__dirname, '../../src/demo'), root, outside, expect.stringMatching(/scripts$/)]);
  // The demo's own script is readable with the defaults.
  expect(createModel({ provider: 'scripted', script: path.resolve(__dirname, '../../src/demo/demo-script.json') }).id).toBe('scripted:demo-script.json');
});
