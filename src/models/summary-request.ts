/**
 * The durable summary for models without server-side compaction: the request that asks a model to
 * fold the turns leaving the conversation (and the summary so far) into one summary, and the
 * extractive summary a scripted model writes in its place (labelled as such, no model involved).
 */
import type { Message } from '../protocol/messages';
import type { ModelRequest } from './model';

/** Characters of one block in the transcript the summary model reads, and of the whole transcript. */
export const SUMMARY_BLOCK_CHARS = 2_000;
export const SUMMARY_TRANSCRIPT_CHARS = 200_000;
/** The extractive summary's bound (a model's is bounded by its max_tokens). */
export const EXTRACTIVE_SUMMARY_CHARS = 8_000;
export const SUMMARY_LABEL = '[summary of earlier turns]';

export const SUMMARY_SYSTEM =
  'You maintain the running summary of a long agent task whose oldest turns are leaving its context window. ' +
  'Merge the summary so far with the turns below into one summary for the agent to continue from: keep every fact, ' +
  'number, identifier, decision and open question the task may still need, name the tools used and what they returned, ' +
  'drop chatter. Write plain text, no preamble.';

/** The summary call: the summary so far and the leaving turns as a transcript, no tools. */
export function summaryRequest(previousSummary: string | undefined, messages: Message[], maxTokens: number, model?: string): ModelRequest {
  return {
    system: SUMMARY_SYSTEM,
    messages: [{ role: 'user', content: transcriptOf(previousSummary, messages) }],
    tools: [],
    maxTokens,
    ...(model ? { model } : {}),
  };
}

/** The turns as text, each block clipped, the whole bounded (the summary so far first). */
export function transcriptOf(previousSummary: string | undefined, messages: Message[]): string {
  const lines = linesOf(messages, SUMMARY_BLOCK_CHARS);
  const text = `${previousSummary ? `Summary so far:\n${previousSummary}\n\n` : ''}Turns leaving the conversation:\n${lines.join('\n')}`;
  return text.length > SUMMARY_TRANSCRIPT_CHARS ? `${text.slice(0, SUMMARY_TRANSCRIPT_CHARS)}\n[transcript cut at ${SUMMARY_TRANSCRIPT_CHARS} characters]` : text;
}

/**
 * A scripted model's summary: the summary so far, then the start of every block, bounded by
 * keeping the oldest part (the earliest facts) and the latest.
 */
export function extractiveSummary(previousSummary: string | undefined, messages: Message[]): string {
  const text = [...(previousSummary ? [previousSummary] : []), ...linesOf(messages, 200)].join('\n');
  if (text.length <= EXTRACTIVE_SUMMARY_CHARS) return text;
  const head = Math.floor(EXTRACTIVE_SUMMARY_CHARS / 2);
  return `${text.slice(0, head)}\n[...]\n${text.slice(text.length - (EXTRACTIVE_SUMMARY_CHARS - head - 7))}`;
}

function linesOf(messages: Message[], clipAt: number): string[] {
  const clip = (text: string) => {
    const flat = text.replace(/\s+/g, ' ').trim();
    return flat.length > clipAt ? `${flat.slice(0, clipAt)}…` : flat;
  };
  const lines: string[] = [];
  for (const message of messages) {
    if (typeof message.content === 'string') {
      lines.push(`${message.role}: ${clip(message.content)}`);
      continue;
    }
    for (const block of message.content) {
      if (block.type === 'text') lines.push(`${message.role}: ${clip(block.text)}`);
      else if (block.type === 'tool_use') lines.push(`${message.role} called ${block.name} ${clip(JSON.stringify(block.input) ?? '')}`);
      else if (block.type === 'tool_result') lines.push(`result${block.is_error ? ' (error)' : ''}: ${clip(block.content)}`);
      else if (block.type === 'compaction' && block.content) lines.push(block.content);
    }
  }
  return lines;
}
