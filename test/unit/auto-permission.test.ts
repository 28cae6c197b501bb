/** The `auto` mode's fixed parts: how a classifier's answer is read, and the engine's rule for destructive calls. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { AUTO_CLASSIFIER_SYSTEM, autoClassifierMessage, oversizedView, readClassifierAnswer, ungroundedValue, AUTO_VIEW_CHARS } from '../../src/rules/auto-permission';

test.each([
  ['{"decision":"allow","reason":"asked for"}', { verdict: 'allow', reason: 'asked for' }],
  ['```json\n{"decision":"deny","reason":"not the task"}\n```', { verdict: 'deny', reason: 'not the task' }],
  ['{"decision":"ask","reason":"  two\\nlines  "}', { verdict: 'ask', reason: 'two lines' }],
])('%j is read as a verdict', (text, expected) => {
  expect(readClassifierAnswer(text)).toEqual(expected);
});

test.each([
  ['Sure, allow it.', /^not one JSON object/],
  ['{"decision":"allow"}', /gives no reason/],
  ['{"decision":"ALLOW","reason":"x"}', /"decision" is not allow, deny or ask/],
  ['{"decision":"allow","reason":"x"} and also {"decision":"deny"}', /^not one JSON object/],
  ['["allow"]', /not an object/],
  ['', /^not one JSON object: \(empty\)/],
])('%j is unreadable (so a person decides)', (text, why) => {
  const read = readClassifierAnswer(text);
  expect('unreadable' in read && read.unreadable).toMatch(why);
});

test('a destructive call is grounded only when every string of 3+ characters and every number it carries is in the prompt', () => {
  const prompt = 'Delete old.log and order O-0007, keep 3 copies.';
  expect(ungroundedValue({ path: 'old.log' }, prompt)).toBeUndefined();
  expect(ungroundedValue({ order_id: 'O-0007', keep: 3, force: true, x: 'ab' }, prompt)).toBeUndefined();
  expect(ungroundedValue({ path: 'old.log.bak' }, prompt)).toBe('old.log.bak');
  expect(ungroundedValue({ paths: ['old.log', 'precious.txt'] }, prompt)).toBe('precious.txt');
  expect(ungroundedValue({ nested: { keep: 30 } }, prompt)).toBe('30');
  expect(ungroundedValue({ reason: 'the note said so' }, prompt)).toBe('the note said so');
});

test('the classifier is shown the prompt, the rules and the call, labelled; a view too long to show whole is refused', () => {
  const view = { tool: 'delete_file', description: 'Delete a file.', effect: 'destructive' as const, input: { path: 'a.txt' }, prompt: 'Delete a.txt', rules: ['Never delete under private/.'] };
  expect(autoClassifierMessage(view)).toBe(
    '<task_prompt>\nDelete a.txt\n</task_prompt>\n\n<operator_rules>\n- Never delete under private/.\n</operator_rules>\n\n<call>\ntool: delete_file\neffect: destructive\ndescription: Delete a file.\narguments: {"path":"a.txt"}\n</call>\n\nDecide for this call.',
  );
  expect(autoClassifierMessage({ ...view, rules: [] })).toContain('<operator_rules>\n(none)\n</operator_rules>');
  expect(AUTO_CLASSIFIER_SYSTEM).toContain('You never see the conversation or any tool result');
  expect(oversizedView(view)).toBeUndefined();
  expect(oversizedView({ ...view, prompt: 'x'.repeat(AUTO_VIEW_CHARS + 1) })).toMatch(/prompt is over/);
  expect(oversizedView({ ...view, input: { content: 'x'.repeat(AUTO_VIEW_CHARS) } })).toMatch(/arguments are over/);
});

test('docs/auto-permissions.md quotes the fixed prompt verbatim', () => {
  const page = readFileSync(path.join(__dirname, '../../docs/auto-permissions.md'), 'utf8');
  const quoted = page
    .split('\n')
    .filter((line) => line.startsWith('> '))
    .map((line) => line.slice(2))
    .join(' ');
  // The page wraps the prompt's lines, so line breaks (the prompt's own and the page's) read as spaces.
  expect(quoted).toBe(AUTO_CLASSIFIER_SYSTEM.replace(/\n/g, ' '));
});
