/** The `auto` mode's fixed parts: how a classifier's answer is read, and the engine's rule for destructive calls. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  AUTO_CLASSIFIER_SYSTEM,
  autoClassifierMessage,
  groundingGap,
  groundingReason,
  hasWholeToken,
  oversizedView,
  readClassifierAnswer,
  ungroundedValue,
  AUTO_VIEW_CHARS,
} from '../../src/rules/auto-permission';

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

test('a destructive call is grounded only when every string and number it carries is a whole token of the prompt', () => {
  const prompt = 'Delete old.log and order O-0007, keep 3 copies.';
  expect(ungroundedValue({ path: 'old.log' }, prompt)).toBeUndefined();
  expect(ungroundedValue({ order_id: 'O-0007', keep: 3 }, prompt)).toBeUndefined();
  expect(ungroundedValue({ path: 'old.log.bak' }, prompt)).toBe('old.log.bak');
  expect(ungroundedValue({ paths: ['old.log', 'precious.txt'] }, prompt)).toBe('precious.txt');
  expect(ungroundedValue({ nested: { keep: 30 } }, prompt)).toBe('30');
  expect(ungroundedValue({ reason: 'the note said so' }, prompt)).toBe('the note said so');
});

// Each of these passed the old substring test (prompt.includes(value), strings under 3 characters and booleans skipped).
describe('grounding holes of the substring test: each is asked now', () => {
  test('delete_invoice(47) on a prompt naming invoice 4711 is not grounded (47 only inside 4711)', () => {
    expect(groundingGap({ invoice: 47 }, 'Summarize invoice 4711 for me.')).toEqual({ value: '47', why: 'inside' });
  });
  test('delete_file("report.txt") on a prompt naming notes/2024-report.txt is not grounded (only inside a path)', () => {
    expect(groundingGap({ path: 'report.txt' }, 'Summarize notes/2024-report.txt, please.')).toEqual({ value: 'report.txt', why: 'inside' });
  });
  test('delete_file("db") is never grounded, even on a prompt holding "db" (shorter than 3 characters)', () => {
    expect(groundingGap({ path: 'db' }, 'List what is in the db folder.')).toEqual({ value: 'db', why: 'short' });
    expect(groundingGap({ path: ' x ' }, 'x')).toEqual({ value: 'x', why: 'short' });
    expect(groundingGap({ path: '' }, 'anything')).toEqual({ value: '', why: 'short' });
  });
  test('purge_archive({confirm:true}) is never grounded (a boolean flag), nor a false one', () => {
    expect(groundingGap({ confirm: true }, 'Purge the archive: confirm true.')).toEqual({ value: 'confirm: true', why: 'flag' });
    expect(groundingGap({ name: 'archive-7', options: { dry_run: false } }, 'Purge archive-7.')).toEqual({ value: 'dry_run: false', why: 'flag' });
    expect(groundingReason({ value: 'confirm: true', why: 'flag' })).toBe('"confirm: true" is a flag, which the task\'s prompt cannot name');
  });
  test('a value found only inside longer tokens is not grounded: a longer number, a prefix, a suffix, a domain, a decimal', () => {
    expect(ungroundedValue({ id: 711 }, 'Refund order 4,711.')).toBe('711');
    expect(ungroundedValue({ id: 4711 }, 'Look at 4711.5 EUR.')).toBe('4711');
    expect(ungroundedValue({ id: 'O-0007' }, 'Cancel O-00071.')).toBe('O-0007');
    expect(ungroundedValue({ id: '0007' }, 'Cancel O-0007.')).toBe('0007');
    expect(ungroundedValue({ host: 'example.com' }, 'Mail bob@example.com the list.')).toBe('example.com');
    expect(ungroundedValue({ path: 'report.txt' }, "Read report.txt's summary.")).toBe('report.txt');
  });
  test('a value found whole once is grounded even when it also appears inside a longer token', () => {
    expect(ungroundedValue({ path: 'report.txt' }, 'Keep report.txt.bak; delete report.txt')).toBeUndefined();
  });
});

describe('grounding what a user expects to be grounded', () => {
  test('delete_invoice(4711) on "delete invoice 4711" is grounded; so is "#4711", "(4711)" and "4711,"', () => {
    expect(ungroundedValue({ invoice: 4711 }, 'delete invoice 4711')).toBeUndefined();
    expect(ungroundedValue({ invoice: 4711 }, 'Delete invoice #4711, it is a duplicate.')).toBeUndefined();
    expect(ungroundedValue({ invoice: 4711 }, 'Delete the duplicate (4711).')).toBeUndefined();
    expect(ungroundedValue({ invoice: 4711 }, 'Delete invoices 4711, 4712 and 4713.')).toBeUndefined();
  });
  test('delete_file("notes/2024-report.txt") on a prompt naming exactly that path is grounded, bare, quoted or in backticks', () => {
    for (const prompt of ['Delete notes/2024-report.txt.', 'Delete "notes/2024-report.txt" now', 'Delete `notes/2024-report.txt`!', 'notes/2024-report.txt: delete it']) {
      expect([prompt, ungroundedValue({ path: 'notes/2024-report.txt' }, prompt)]).toEqual([prompt, undefined]);
    }
  });
  test('a value of several words is grounded when the prompt holds the same words whole', () => {
    expect(ungroundedValue({ title: 'Old Drafts' }, 'Remove the folder "Old Drafts" and nothing else.')).toBeUndefined();
    expect(ungroundedValue({ title: 'Old Draft' }, 'Remove the folder "Old Drafts" and nothing else.')).toBe('Old Draft');
  });
  test('several prompts (a fork: its origin prompt and its message) each ground on their own; the join between them grounds nothing', () => {
    expect(ungroundedValue({ paths: ['a1.txt', 'b2.txt'] }, ['Tidy a1.txt.', 'Also delete b2.txt'])).toBeUndefined();
    expect(ungroundedValue({ name: 'end start' }, ['the end', 'start again'])).toBe('end start');
    expect(ungroundedValue({ path: 'a1.txt' }, [])).toBe('a1.txt');
  });
  test('case counts, as before', () => {
    expect(ungroundedValue({ path: 'Report.txt' }, 'Delete report.txt')).toBe('Report.txt');
  });
});

test('hasWholeToken: the bounds of a whole token', () => {
  expect(hasWholeToken('a 4711 b', '4711')).toBe(true);
  expect(hasWholeToken('4711', '4711')).toBe(true);
  expect(hasWholeToken('x4711', '4711')).toBe(false);
  expect(hasWholeToken('4711x', '4711')).toBe(false);
  expect(hasWholeToken('**4711**', '4711')).toBe(true);
  expect(hasWholeToken('id=4711', '4711')).toBe(false);
  expect(hasWholeToken('anything', '')).toBe(false);
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
