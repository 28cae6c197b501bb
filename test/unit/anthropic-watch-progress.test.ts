/**
 * `watch` prints the tail of a model's streaming answer: model-controlled text, so it is printed
 * without terminal escape sequences or control characters.
 */
import { printable } from '../../src/cli/commands/tasks';

test('escape sequences (colours, OSC title, cursor moves) and control characters are stripped', () => {
  const hostile = 'ok \u001b[31mred\u001b[0m \u001b]0;pwned\u0007title \u001b[2Jclear\u001b[1A up\u0008\u0007\u202eflip';
  const shown = printable(hostile);
  expect(shown).toBe('ok red title clear upflip');
  expect(shown).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202e]/);
});

test('line breaks become spaces so the progress stays on one line; plain text is unchanged', () => {
  expect(printable('first\r\nsecond\tthird')).toBe('first second third');
  expect(printable('Résumé: 3 orders, €12.50')).toBe('Résumé: 3 orders, €12.50');
});
