/**
 * A fork's request as its `auto` classifier and its grader read it: its own prompt (`fork of X@N`, or
 * its message) is never taken for the starter's words; the origin's prompt and the fork's message are
 * shown, each labelled, and a destructive call is grounded on those two only.
 */
import { groundingPrompts, labelledPrompt, type ForkPrompt } from '../../src/protocol/fork-prompt';
import { gradingMessage } from '../../src/protocol/outcome';
import type { Message } from '../../src/protocol/messages';
import type { TaskInput } from '../../src/protocol/task';
import { autoClassifierMessage, ungroundedValue } from '../../src/rules/auto-permission';
import { forkPromptOf } from '../../src/workflows/turn/fork-prompt';

const origin = 'Summarize notes-9.txt and delete draft-9.txt.';
const messages: Message[] = [
  { role: 'user', content: origin },
  { role: 'assistant', content: [{ type: 'text', text: 'Reading it.' }] },
];
const forkInput = (message?: string): TaskInput => ({ agent: 'demo', prompt: message ?? 'fork of task-a@2', forkOf: { taskId: 'task-a', turn: 2, ...(message ? { message } : {}) } }) as TaskInput;

test("a fork's request is the origin's prompt (from the conversation's first message) and the fork's message, each labelled", () => {
  const fork = forkPromptOf(forkInput('Also delete old-9.log.'), [{ taskId: 'task-a', turn: 2 }], messages)!;
  expect(fork).toEqual({ originTaskId: 'task-a', originPrompt: origin, message: 'Also delete old-9.log.' });
  expect(labelledPrompt('Also delete old-9.log.', fork)).toBe(`The task's original request (from task-a):\n${origin}\n\nThe message that started this fork:\nAlso delete old-9.log.`);
  // The classifier's message and the grader's hold the labelled request, never `fork of ...` as the starter's words.
  const view = { tool: 'delete_file', description: 'Delete a file.', effect: 'destructive' as const, input: { path: 'old-9.log' }, prompt: labelledPrompt('Also delete old-9.log.', fork), rules: [] };
  expect(autoClassifierMessage(view)).toContain(`<task_prompt>\nThe task's original request (from task-a):\n${origin}\n\nThe message that started this fork:\nAlso delete old-9.log.\n</task_prompt>`);
  expect(gradingMessage({ rubric: 'R', prompt: 'Also delete old-9.log.', fork, answer: 'A', evidence: [] })).toContain(
    `<task>\nThe task's original request (from task-a):\n${origin}\n\nThe message that started this fork:\nAlso delete old-9.log.\n</task>`,
  );
});

test('a fork started without a message: its prompt `fork of X@N` is not shown as a request, nor grounds anything', () => {
  const fork = forkPromptOf(forkInput(), [{ taskId: 'task-a', turn: 2 }], messages)!;
  expect(fork).toEqual({ originTaskId: 'task-a', originPrompt: origin });
  const text = labelledPrompt('fork of task-a@2', fork);
  expect(text).not.toContain('fork of task-a@2');
  expect(text).toContain('The message that started this fork:\n(none: the fork was started without a message; it goes on with the original request)');
  expect(groundingPrompts('fork of task-a@2', fork)).toEqual([origin]);
  // Grounded on the origin's words; the fork's label and the origin's id ground nothing.
  expect(ungroundedValue({ path: 'draft-9.txt' }, groundingPrompts('fork of task-a@2', fork))).toBeUndefined();
  expect(ungroundedValue({ task: 'task-a' }, groundingPrompts('fork of task-a@2', fork))).toBe('task-a');
  expect(ungroundedValue({ what: 'original request' }, groundingPrompts('fork of task-a@2', fork))).toBe('original request');
});

test("grounding a fork's destructive call uses the origin's prompt plus the fork's message, each on its own", () => {
  const fork = forkPromptOf(forkInput('Also delete old-9.log.'), [{ taskId: 'task-a', turn: 2 }], messages)!;
  const prompts = groundingPrompts('Also delete old-9.log.', fork);
  expect(prompts).toEqual([origin, 'Also delete old-9.log.']);
  expect(ungroundedValue({ paths: ['draft-9.txt', 'old-9.log'] }, prompts)).toBeUndefined();
  expect(ungroundedValue({ path: 'precious-9.txt' }, prompts)).toBe('precious-9.txt');
});

test("a fork of a fork reads the first origin's prompt, labelled with the first origin's id; a summary added to the first message is not the prompt", () => {
  const compacted: Message[] = [
    {
      role: 'user',
      content: [
        { type: 'text', text: origin },
        { type: 'text', text: '[summary of earlier turns] the model deleted x' },
      ],
    },
  ];
  const fork = forkPromptOf(
    forkInput('Go on.'),
    [
      { taskId: 'task-b', turn: 1 },
      { taskId: 'task-a', turn: 2 },
    ],
    compacted,
  )!;
  expect(fork).toEqual({ originTaskId: 'task-a', originPrompt: origin, message: 'Go on.' });
});

test("a fork of a sub-agent's task: the origin's prompt was written by a model, so it is labelled so and grounds nothing", () => {
  const fork = forkPromptOf(
    forkInput('Delete draft-9.txt now.'),
    [
      { taskId: 'child-1', turn: 1 },
      { taskId: 'lead', turn: 3, via: 'delegation' },
    ],
    messages,
  )!;
  expect(fork).toEqual({ originTaskId: 'child-1', originPrompt: origin, originDelegated: true, message: 'Delete draft-9.txt now.' });
  expect(labelledPrompt('x', fork)).toMatch(/^The task's original request, written by its parent task's model \(from child-1\):\n/);
  expect(groundingPrompts('x', fork)).toEqual(['Delete draft-9.txt now.']);
  expect(ungroundedValue({ path: 'notes-9.txt' }, groundingPrompts('x', fork))).toBe('notes-9.txt');
});

test('a task that is not a fork is read as before: its prompt, unlabelled', () => {
  expect(forkPromptOf({ agent: 'demo', prompt: origin } as TaskInput, [], messages)).toBeUndefined();
  expect(labelledPrompt(origin, undefined)).toBe(origin);
  expect(groundingPrompts(origin, undefined)).toEqual([origin]);
  const noFirst = forkPromptOf(forkInput('m1'), [{ taskId: 'task-a', turn: 2 }], [])! as ForkPrompt;
  expect(noFirst.originPrompt).toBeUndefined();
  expect(groundingPrompts('m1', noFirst)).toEqual(['m1']);
});
