/**
 * A fork's request for its `auto` classifier and its grader (protocol/fork-prompt.ts): its input's
 * prompt only names it (`fork of TASK@N`, or its message), so they are given the prompt its
 * conversation opened with, read from the conversation's first message (the origin's, carried over
 * from its history, kept at the head through compaction and continue-as-new), and the fork's message.
 */
import type { ForkPrompt } from '../../protocol/fork-prompt';
import type { Message } from '../../protocol/messages';
import type { BranchPoint } from '../../protocol/fork';
import type { TaskInput } from '../../protocol/task';

/** A compaction's additions to the first message (conversation.ts): they are not the prompt. */
const ADDED_TO_FIRST = ['[summary of earlier turns]', '[context] '];

/** Undefined for a task that is not a fork. */
export function forkPromptOf(input: TaskInput, lineage: readonly BranchPoint[], messages: readonly Message[]): ForkPrompt | undefined {
  const forkOf = input.forkOf;
  if (!forkOf) return undefined;
  // The conversation's first prompt is that of the first task of the lineage, or of the nearest
  // sub-agent's task in it (a delegation entry: its prompt was written by its parent's model).
  let originTaskId = forkOf.taskId;
  let originDelegated = false;
  for (const point of lineage) {
    if (point.via === 'delegation') {
      originDelegated = true;
      break;
    }
    originTaskId = point.taskId;
  }
  const originPrompt = firstPromptOf(messages);
  return {
    originTaskId,
    ...(originPrompt !== undefined ? { originPrompt } : {}),
    ...(originDelegated ? { originDelegated: true as const } : {}),
    ...(forkOf.message ? { message: forkOf.message } : {}),
  };
}

function firstPromptOf(messages: readonly Message[]): string | undefined {
  const first = messages[0];
  if (first?.role !== 'user') return undefined;
  if (typeof first.content === 'string') return first.content;
  const block = first.content.find((b) => b.type === 'text' && !ADDED_TO_FIRST.some((label) => b.text.startsWith(label)));
  return block?.type === 'text' ? block.text : undefined;
}

/** `{ fork }` for an activity's input, or nothing (a task that is not a fork sends what it sent before). */
export function withFork(fork: ForkPrompt | undefined): { fork?: ForkPrompt } {
  return fork ? { fork } : {};
}
