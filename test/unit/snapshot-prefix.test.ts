/**
 * Fitting a continue-as-new snapshot under its ceiling leaves the first prompt alone unless it took
 * turns out: the first prompt is the head of every cached prefix of the conversation, so a note
 * rewritten there makes the next call miss the whole conversation's cache (issue 39).
 */
import { DEFAULT_LIMITS } from '../../src/rules/task-limits';
import { SUMMARY_LABEL } from '../../src/workflows/state/conversation';
import { TaskState } from '../../src/workflows/state/task-state';
import { fitSnapshot } from '../../src/workflows/state/task-snapshot';

const clock = { now: () => new Date(0), newId: () => 'id' };

function summarisedTask(turns: number): TaskState {
  const state = new TaskState({ agent: 'demo', prompt: 'read it all' }, clock, DEFAULT_LIMITS);
  const { conversation } = state;
  conversation.messages.push({
    role: 'user',
    content: [
      { type: 'text', text: 'read it all' },
      { type: 'text', text: `${SUMMARY_LABEL} pages 1 to 40 say little.` },
    ],
  });
  for (let i = 0; i < turns; i++) {
    conversation.messages.push({ role: 'assistant', content: [{ type: 'tool_use', id: `toolu_${i}`, name: 'read_page', input: { offset: i } }] });
    conversation.messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${i}`, content: 'x'.repeat(1_000) }] });
  }
  // Turns a summary took out earlier: the summary stands for them, no note does.
  conversation.droppedTurns = 40;
  return state;
}

test('over the ceiling with no turn to take out, the first prompt (with its summary) is what it was', () => {
  const state = summarisedTask(1);
  const before = JSON.stringify(state.conversation.messages[0]);
  const fitted = fitSnapshot(state, 100);
  expect(fitted.shrunk).not.toContain(expect.stringMatching(/oldest turns/));
  expect(JSON.stringify(state.conversation.messages[0])).toBe(before);
});

test('turns taken out to fit are noted in the first prompt, after the summary', () => {
  const state = summarisedTask(10);
  const size = JSON.stringify(state.conversation.messages).length;
  const fitted = fitSnapshot(state, size - 3_000);
  expect(fitted.shrunk).toContainEqual(expect.stringMatching(/oldest turns \(4\d removed in all\)/));
  const first = state.conversation.messages[0]!.content as { text: string }[];
  expect(first.map((b) => b.text.slice(0, 10))).toEqual(['read it al', SUMMARY_LABEL.slice(0, 10), '[context] ']);
});
