/**
 * What the API does with a passed-back `compaction` block, shared by the fake's rules and its
 * compaction: the block's signature, and the messages the API reads once a block is present.
 */
import type { ThinkingSigner } from './thinking-signature';

type Json = Record<string, unknown>;

/** A compaction block's signature: the fake's HMAC over its summary (not interchangeable with a thinking signature). */
export function signCompaction(signer: ThinkingSigner, content: string): string {
  return signer.sign(`compaction:${content}`);
}

export function verifyCompaction(signer: ThinkingSigner, content: unknown, signature: unknown): boolean {
  return typeof content === 'string' && signer.verify(`compaction:${content}`, signature);
}

/** The anthropic-beta header's values. */
export function betasOf(header: string | string[] | undefined): string[] {
  const values = Array.isArray(header) ? header : header ? [header] : [];
  return values
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean);
}

/**
 * The messages the API reads: from the last passed-back compaction block that holds a summary
 * (its message starting at the block), or all of them.
 */
export function effectiveMessages(messages: unknown[]): unknown[] {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i] as Json | undefined;
    if (message?.role !== 'assistant' || !Array.isArray(message.content)) continue;
    const content = message.content as Json[];
    for (let j = content.length - 1; j >= 0; j--) {
      if (content[j]?.type === 'compaction' && typeof content[j]!.content === 'string') {
        return [{ ...message, content: content.slice(j) }, ...messages.slice(i + 1)];
      }
    }
  }
  return messages;
}
