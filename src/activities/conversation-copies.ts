/**
 * The worker's copy of each run's latest conversation, so a model call's input carries only what
 * changed since the run's previous call (rules/conversation-change.ts) rather than the whole
 * conversation through the workflow, the codecs, the server and back every turn. Eager dispatch
 * gives a task's model calls to the worker whose workflow task scheduled them, so the copy is
 * usually here; where it is not (a restarted worker, another worker of a cluster), the call asks the
 * workflow for the conversation it sent, with a query, and goes on from that.
 */
import type { Context } from '@temporalio/activity';
import type { ConversationChange } from '../protocol/activity-contracts';
import { modelConversationQuery } from '../protocol/definitions';
import { toolError } from '../protocol/tool-error';
import { toApplicationFailure } from './failure';
import type { Message } from '../protocol/messages';
import { DurableAgentError } from '../errors/durable-agent-error';
import { applyChange, changeProblem } from '../rules/conversation-change';

/** A change no worker could apply: the call fails for good (a bug, or an input not written by a task). */
export class BadConversationChangeError extends DurableAgentError {
  readonly code = 'bad_conversation_change';
}

/** Runs kept when no size is given (the plugin gives its Worker's maxCachedWorkflows): a run's conversation is at most a payload's size (2 MB), most are far smaller. */
export const DEFAULT_CONVERSATION_COPIES = 100;

export interface ConversationCopyStats {
  /** Calls built from the copy here (a retry of a call included). */
  hits: number;
  /** Calls that asked the workflow for their conversation. */
  asked: number;
}

export class ConversationCopies {
  /** Per run, its latest call's conversation; in the order used, oldest first. */
  private readonly runs = new Map<string, { call: number; messages: readonly Message[] }>();
  readonly stats: ConversationCopyStats = { hits: 0, asked: 0 };

  constructor(private readonly capacity = DEFAULT_CONVERSATION_COPIES) {
    if (!Number.isInteger(capacity) || capacity < 0) throw new RangeError(`conversationCopies must be a whole number from 0, not ${String(capacity).slice(0, 40)}`);
  }

  /**
   * The whole conversation of the call `change` describes. `askWorkflow` gets it from the workflow
   * when this worker has not the call it builds on. The messages are frozen: they are the next
   * call's too, so a model that changed one in place would change what the task sent.
   */
  async messagesFor(change: ConversationChange, askWorkflow: () => Promise<Message[]>): Promise<readonly Message[]> {
    const problem = changeProblem(change);
    if (problem) throw new BadConversationChangeError(`The model call's conversation change ${problem}.`);
    const cached = this.runs.get(change.run);
    let messages: readonly Message[];
    // Built here only from the very call the change names; anything else, the task says what it sent.
    if (cached?.call === change.call) {
      // A retry of the call: its conversation is the one built for its first attempt.
      messages = cached.messages;
      this.stats.hits += 1;
    } else if (!change.from || (cached?.call === change.from.call && change.from.keep <= cached.messages.length)) {
      messages = applyChange(change, cached?.messages);
      if (change.from) this.stats.hits += 1;
    } else {
      messages = await askWorkflow();
      this.stats.asked += 1;
    }
    // Frozen ones (what stayed) are passed over at once.
    for (const message of messages) deepFreeze(message);
    Object.freeze(messages);
    this.remember(change.run, change.call, messages);
    return messages;
  }

  private remember(run: string, call: number, messages: readonly Message[]): void {
    this.runs.delete(run);
    this.runs.set(run, { call, messages });
    if (this.runs.size > this.capacity) this.runs.delete(this.runs.keys().next().value!);
  }
}

function deepFreeze(value: unknown): void {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
}

/**
 * A model call's whole conversation from the change its input carries: from this worker's copy of
 * the run's previous call, else from the workflow itself (a query), which answers with what it sent
 * while that call is in flight.
 */
export async function conversationOf(ctx: Context, conversation: ConversationChange | undefined, conversations: ConversationCopies): Promise<Message[]> {
  const attempt = ctx.info.attempt;
  if (!conversation) throw toApplicationFailure({ error: toolError('permanent', 'no_conversation', 'The model call carries no conversation (neither messages nor a change).') }, attempt);
  const task = ctx.info.workflowExecution;
  try {
    const askTask = async () => {
      if (!task) throw new Error('the call was not scheduled by a task');
      return ctx.client.workflow.getHandle(task.workflowId, task.runId).query(modelConversationQuery, conversation.call);
    };
    return (await conversations.messagesFor(conversation, askTask)) as Message[];
  } catch (err) {
    if (err instanceof BadConversationChangeError) throw toApplicationFailure({ error: toolError('permanent', err.code, err.message) }, attempt);
    // The workflow's worker is away, or the task moved on: the call is tried again (or cancelled with the turn).
    throw toApplicationFailure(
      {
        error: toolError('transient', 'conversation_unavailable', `The conversation of model call ${conversation.call} is not on this worker and the task did not give it: ${(err as Error).message}`),
      },
      attempt,
    );
  }
}
