/**
 * The task's final text against its live output (docs/live-output.md, "The streamed text and
 * `result.text`"): the stream keeps what the model sent; the final text, made in workflow code
 * (Conversation.answerText), trims its ends and joins one call's text blocks with a newline. This
 * pins that difference, so a change to it is seen here and in the page at once.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { AssistantBlock } from '../../src/protocol/messages';
import { TaskState } from '../../src/workflows/state/task-state';

function conversation() {
  return new TaskState({ agent: 'demo', prompt: 'x' }, { now: () => new Date(0), newId: () => 'id' }).conversation;
}
const text = (t: string): AssistantBlock => ({ type: 'text', text: t });
/** What a subscriber concatenating the `text` events of one call gets. */
const streamed = (blocks: AssistantBlock[]) => blocks.map((b) => (b.type === 'text' ? b.text : '')).join('');

test('a trailing space the model sent is in the stream and not in the final text', () => {
  const c = conversation();
  const answer = [text('Order o-1 has shipped; it arrives on 2026-12-02. ')];
  c.messages.push({ role: 'assistant', content: answer });
  expect(streamed(answer)).toBe('Order o-1 has shipped; it arrives on 2026-12-02. ');
  expect(c.answerText()).toBe('Order o-1 has shipped; it arrives on 2026-12-02.');
});

test('leading and trailing newlines and tabs go too; whitespace inside stays', () => {
  const c = conversation();
  c.messages.push({ role: 'assistant', content: [text('\n\t Two  spaces\n\nkept. \n')] });
  expect(c.answerText()).toBe('Two  spaces\n\nkept.');
});

test("one call's text blocks are joined with a newline; the stream has them apart, by block", () => {
  const c = conversation();
  c.messages.push({ role: 'assistant', content: [text('Hello'), text('world.')] });
  expect(c.answerText()).toBe('Hello\nworld.');
});

test('an answer continued after max_tokens: parts joined with nothing between, whitespace where they meet kept, ends trimmed', () => {
  const c = conversation();
  c.messages.push({ role: 'assistant', content: [text(' The first half, ')] });
  c.continueCutAnswer();
  c.messages.push({ role: 'assistant', content: [text('and the '), text('second. ')] });
  expect(c.answerText()).toBe('The first half, and the second.');
});

test('an answer over consecutive assistant messages (a paused turn resumed): joined with nothing between, ends trimmed', () => {
  const c = conversation();
  c.messages.push({ role: 'assistant', content: [text(' Part one, ')] });
  c.messages.push({ role: 'assistant', content: [text('part '), text('two. ')] });
  expect(c.answerText()).toBe('Part one, part two.');
});

test('docs/live-output.md says so and names where the trim is', () => {
  const doc = readFileSync(path.join(__dirname, '../../docs/live-output.md'), 'utf8');
  for (const words of [
    '## The streamed text and `result.text`',
    '`result.text` is `Hello\\nworld.`',
    'Conversation.answerText()',
    'src/workflows/state/conversation.ts',
    'test/unit/answer-text.test.ts',
  ]) {
    expect(doc).toContain(words);
  }
});
