/**
 * A model call's conversation as a change to the one before it. A task sends the model the whole
 * conversation every turn; most of it is what the previous call sent. The workflow sends only what
 * changed (the messages after those that stayed the same), the worker that ran the previous call
 * keeps that call's conversation, and the two make the whole again. Every reader of a history (forks,
 * recordings) rebuilds each call's conversation the same way, in the order the calls were scheduled.
 */
import type { ConversationChange } from '../protocol/activity-contracts';
import type { Message } from '../protocol/messages';

export type { ConversationChange };

/** The whole conversation of `change`, given the conversation of the call it builds on (`base`). */
export function applyChange(change: ConversationChange, base: readonly Message[] | undefined): Message[] {
  if (!change.from) return change.append;
  if (!base) throw new Error(`call ${change.call} of ${change.run} builds on call ${change.from.call}, whose conversation is not known here`);
  if (change.from.keep > base.length) throw new Error(`call ${change.call} of ${change.run} keeps ${change.from.keep} messages of call ${change.from.call}, which had ${base.length}`);
  return [...base.slice(0, change.from.keep), ...change.append];
}

/** A conversation problem a change cannot be applied to: what the reader reports. */
export function changeProblem(change: unknown): string | undefined {
  const c = change as Partial<ConversationChange> | null;
  if (!c || typeof c !== 'object') return 'is not an object';
  if (typeof c.run !== 'string' || c.run.length === 0) return 'has no run';
  if (!Number.isInteger(c.call) || (c.call as number) < 1) return 'has no call number';
  if (!Array.isArray(c.append)) return 'has no messages to append';
  if (c.from !== undefined) {
    const { call, keep } = c.from as { call: unknown; keep: unknown };
    if (!Number.isInteger(call) || (call as number) < 1 || (call as number) >= (c.call as number)) return 'builds on no earlier call';
    if (!Number.isInteger(keep) || (keep as number) < 0) return 'keeps no whole number of messages';
  }
  return undefined;
}

/**
 * Rebuilds each model call's conversation while reading one run's history in order (one reader per
 * run). A call scheduled with the whole conversation (`messages`: every call of a task before
 * changes, and of a run that began on older code) is taken as it is, and counts as the run's next
 * call, as the workflow counts it; a change is applied to the call it names.
 */
export class ConversationReader {
  /** The previous call's number and conversation: a change always builds on the call before it. */
  private last = { call: 0, messages: [] as Message[] };

  messagesOf(input: { messages?: Message[]; conversation?: ConversationChange }): Message[] {
    const change = input.conversation;
    if (input.messages || !change) {
      this.last = { call: this.last.call + 1, messages: input.messages ?? [] };
      return this.last.messages;
    }
    const problem = changeProblem(change);
    if (problem) throw new Error(`a model call's conversation change ${problem}`);
    const messages = applyChange(change, change.from?.call === this.last.call ? this.last.messages : undefined);
    this.last = { call: change.call, messages };
    return messages;
  }
}
