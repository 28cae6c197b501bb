/**
 * What this run sent the model last, so the next call sends only what changed
 * (rules/conversation-change.ts). A message counts as unchanged while it is the same object holding
 * the same content: the conversation changes a block by assigning a new string, array or object,
 * never by editing one in place (conversation.ts), so comparing references finds every change
 * without reading any text.
 */
import type { Message } from '../../protocol/messages';
import type { ConversationChange } from '../../rules/conversation-change';

type Block = { text?: unknown; content?: unknown; input?: unknown; thinking?: unknown };

/** The references a message is compared by: itself, its content, and each block with its value. */
function fingerprint(message: Message): unknown[] {
  const refs: unknown[] = [message, message.content];
  if (typeof message.content !== 'string') {
    for (const block of message.content as Block[]) refs.push(block, block.text, block.content, block.input, block.thinking);
  }
  return refs;
}

/** Whether `message` still has the fingerprint `refs` (compared in place: every turn asks it of every message). */
function unchanged(refs: unknown[], message: Message): boolean {
  if (refs[0] !== message || refs[1] !== message.content) return false;
  if (typeof message.content === 'string') return refs.length === 2;
  const blocks = message.content as Block[];
  if (refs.length !== 2 + 5 * blocks.length) return false;
  for (let i = 0, r = 2; i < blocks.length; i++, r += 5) {
    const block = blocks[i]!;
    if (refs[r] !== block || refs[r + 1] !== block.text || refs[r + 2] !== block.content || refs[r + 3] !== block.input || refs[r + 4] !== block.thinking) return false;
  }
  return true;
}

export class SentConversation {
  private readonly sent: unknown[][] = [];
  private calls = 0;

  constructor(private readonly run: string) {}

  /** The change to send with the next call, which this run then counts as sent. */
  next(messages: Message[]): ConversationChange {
    const keep = this.calls === 0 ? 0 : this.unchangedPrefix(messages);
    const change: ConversationChange = {
      run: this.run,
      call: this.calls + 1,
      ...(this.calls > 0 ? { from: { call: this.calls, keep } } : {}),
      append: messages.slice(keep),
    };
    this.sent.length = keep;
    for (let i = keep; i < messages.length; i++) this.sent.push(fingerprint(messages[i]!));
    this.calls += 1;
    return change;
  }

  /** The conversation of the call in flight, when `call` is it and nothing changed since it was sent (a worker that lost it asks). */
  inFlight(call: number, messages: Message[]): Message[] | undefined {
    if (call !== this.calls || call === 0) return undefined;
    return this.unchangedPrefix(messages) === this.sent.length && messages.length === this.sent.length ? messages : undefined;
  }

  private unchangedPrefix(messages: Message[]): number {
    const limit = Math.min(messages.length, this.sent.length);
    let keep = 0;
    while (keep < limit && unchanged(this.sent[keep]!, messages[keep]!)) keep++;
    return keep;
  }
}
