/**
 * The conversation the model reads: messages in the Messages API's shape, people's guidance waiting
 * for the next call, the parts of an answer cut at max_tokens, and the compaction that keeps it
 * inside the context window (older tool results stubbed and recallable, then the oldest turns out).
 */
import { textOf, type CompactionBlock, type Message, type ToolResultBlock, type Usage, type UserBlock } from '../../protocol/messages';
import type { ContextSpend, ContextState } from '../../protocol/task';
import { BLOB_ID_SOURCE, MARKER_PATTERN, markerIds, resolvedLength } from '../../protocol/blob-marker';
import { RECALL_TOOL } from '../../protocol/recall-tool';
import type { AuditTrail } from './audit-trail';
import type { TaskLimits } from '../../rules/task-limits';

/** How the durable summary is marked at the head of the conversation. */
export const SUMMARY_LABEL = '[summary of earlier turns]';

type MeasuredBlock = { type: string; text?: string; content?: string | null; input?: unknown; thinking?: string };

/** What a block (or a message with plain text) measured last, with the value it measured then. */
type Measures = WeakMap<object, { of: unknown; chars: number }>;

/**
 * The characters of a message as the model reads it (a marker counts as the content it stands for).
 * Every turn asks this of every message, and almost all of them are as they were: a block's length
 * is kept with the value it was measured from, and measured again once that value is replaced (every
 * change to a block in this module assigns a new string, array or object).
 */
function charsOf(message: Message, measures: Measures): number {
  if (typeof message.content === 'string') return measured(measures, message, message.content, resolvedLength);
  let chars = 0;
  for (const block of message.content as MeasuredBlock[]) {
    if (block.type === 'text') chars += measured(measures, block, block.text ?? '', resolvedLength);
    else if (block.type === 'tool_result') chars += measured(measures, block, block.content ?? '', resolvedLength);
    else if (block.type === 'tool_use') chars += measured(measures, block, block.input, inputLength);
    else if (block.type === 'thinking') chars += measured(measures, block, block.thinking ?? '', resolvedLength);
    else if (block.type === 'compaction') chars += measured(measures, block, block.content ?? '', resolvedLength);
  }
  return chars;
}

function measured<T>(measures: Measures, holder: object, value: T, measure: (value: T) => number): number {
  const last = measures.get(holder);
  if (last !== undefined && last.of === value) return last.chars;
  const chars = measure(value);
  measures.set(holder, { of: value, chars });
  return chars;
}

function inputLength(input: unknown): number {
  return resolvedLength(JSON.stringify(input) ?? '');
}

function spend(into: ContextSpend, usage: Usage, costUsd: number | undefined, turn: number): void {
  into.count += 1;
  into.usage.inputTokens += usage.inputTokens;
  into.usage.outputTokens += usage.outputTokens;
  into.costUsd += costUsd ?? 0;
  into.lastTurn = turn;
}

export function newContextState(triggerTokens: number): ContextState {
  const empty = () => ({ count: 0, usage: { inputTokens: 0, outputTokens: 0 }, costUsd: 0 });
  return { strategy: 'auto', triggerTokens, compactions: empty(), summaries: { ...empty(), failed: 0 }, trims: 0 };
}

export class Conversation {
  readonly messages: Message[] = [];
  /** People's guidance for the next model call. */
  pendingGuidance: string[] = [];
  /** Text of an answer cut at max_tokens, part by part, until it is complete. */
  answerParts: string[] = [];
  /** Times the conversation was compacted to fit the context window, and turns taken out of it. */
  compactions = 0;
  droppedTurns = 0;
  /** The context strategy, once the conversation first needed room (see ContextState). */
  context?: ContextState;
  private readonly measures: Measures = new WeakMap();

  constructor(
    private readonly limits: TaskLimits,
    private readonly audit: AuditTrail,
  ) {}

  /**
   * An answer cut at max_tokens goes on in a new user turn (current models refuse an assistant
   * prefill); its text so far is kept so the final answer holds every part.
   */
  continueCutAnswer(): void {
    const last = this.messages.at(-1);
    if (last?.role === 'assistant') this.answerParts.push(last.content.map((b) => (b.type === 'text' ? b.text : '')).join(''));
    this.messages.push({
      role: 'user',
      content: [{ type: 'text', text: 'Your answer was cut off at the output limit. Continue exactly where it stopped, without repeating what you already wrote.' }],
    });
  }

  /** A turn with tool calls starts a new answer. */
  clearAnswerParts(): void {
    this.answerParts = [];
  }

  /** The user message after a turn: tool results first (the API requires it), then notes. */
  addToolResults(results: ToolResultBlock[], notes: string[] = []): void {
    const blocks: UserBlock[] = [...results];
    for (const text of notes) blocks.push({ type: 'text', text });
    this.messages.push({ role: 'user', content: blocks });
  }

  get hasPendingGuidance(): boolean {
    return this.pendingGuidance.length > 0;
  }

  /**
   * Puts a person's pending guidance into the conversation before the next model call: appended to
   * the last user message (tool results), or as a new one after an assistant answer.
   */
  flushGuidance(): void {
    const guidance = this.takeGuidance();
    if (guidance.length === 0) return;
    const blocks = guidance.map((text) => ({ type: 'text' as const, text }));
    const last = this.messages.at(-1);
    if (last?.role === 'user') {
      last.content = [...(typeof last.content === 'string' ? [{ type: 'text' as const, text: last.content }] : last.content), ...blocks];
    } else {
      this.messages.push({ role: 'user', content: blocks });
    }
  }

  /**
   * Makes room in the context window: the content of tool results older than the last `keepTurns`
   * turns is replaced by a short note. Returns how many characters were removed.
   */
  compactOldToolResults(keepTurns = 2): number {
    const { chars: removed, withRefs } = this.stubOldToolResults(keepTurns, 200);
    // Stubs that name refs are recallable: the recall tool is offered from now on.
    if (withRefs) this.compactions = Math.max(this.compactions, 1);
    if (removed) this.audit.record('informed', `compacted old tool results: ${removed} characters removed`);
    return removed;
  }

  /**
   * What the next model call will read, estimated without resolving anything: characters of text,
   * tool inputs and results (a marker counts as the content it stands for), about 3 per token.
   */
  estimatedPromptTokens(extraChars = 0): number {
    let chars = extraChars;
    for (const message of this.messages) chars += charsOf(message, this.measures);
    return Math.ceil(chars / 3);
  }

  /**
   * Whether the conversation needs work before the next call. Native compaction leaves it to the
   * API unless the API would refuse the prompt outright; otherwise: over the compaction budget or
   * past the message limit (context-fit.ts).
   */
  needsRoom(contextWindowTokens: number, extraChars: number): boolean {
    if (this.context?.strategy === 'auto' && this.context.native !== false) return this.estimatedPromptTokens(extraChars) > contextWindowTokens;
    return this.estimatedPromptTokens(extraChars) > Math.floor(contextWindowTokens * this.limits.compactAtRatio) || this.messages.length > this.limits.maxConversationMessages;
  }

  /**
   * The API compacted the conversation (pause_after_compaction): its block stands for everything
   * after the first prompt, which leaves state for good (the API reads nothing before the block; the
   * first prompt stays so the conversation still opens with a user turn).
   */
  recordNativeCompaction(block: CompactionBlock, usage: Usage, costUsd: number | undefined, turn: number): string {
    const removed = this.messages.length - 1;
    const turns = this.messages.filter((m) => m.role === 'assistant').length;
    this.messages.splice(1);
    this.messages.push({ role: 'assistant', content: [block] });
    this.droppedTurns += turns;
    const context = this.context!;
    spend(context.compactions, usage, costUsd, turn);
    const line = `compacted the conversation natively (the API's compaction): ${removed} messages replaced by its summary; ${usage.inputTokens + usage.outputTokens} tokens${costUsd !== undefined ? `, $${costUsd.toFixed(4)}` : ''}`;
    this.audit.record('informed', line);
    return line;
  }

  /** Turns (assistant, user pairs after the first prompt) that must leave for the conversation to fit: under the budget and back to trimConversationTo. */
  turnsToLeave(contextWindowTokens: number, extraChars: number): number {
    const budget = Math.floor(contextWindowTokens * this.limits.compactAtRatio);
    const sizes = this.messages.map((message) => charsOf(message, this.measures));
    let chars = extraChars + sizes.reduce((a, b) => a + b, 0);
    let length = this.messages.length;
    const over = () => Math.ceil(chars / 3) > budget;
    const trimTo = length > this.limits.maxConversationMessages ? Math.min(this.limits.trimConversationTo ?? Infinity, this.limits.maxConversationMessages) : this.limits.maxConversationMessages;
    let pairs = 0;
    while ((length > trimTo || over()) && length > 3 + 2 * this.limits.keepRecentTurns) {
      chars -= sizes[1 + 2 * pairs]! + sizes[2 + 2 * pairs]!;
      length -= 2;
      pairs += 1;
    }
    return pairs;
  }

  /** Stubs older tool results when the conversation is over its budget (the first step of making room). Returns how many. */
  stubForContext(contextWindowTokens: number, extraChars: number): number {
    if (this.estimatedPromptTokens(extraChars) <= Math.floor(contextWindowTokens * this.limits.compactAtRatio)) return 0;
    const { count, withRefs } = this.stubOldToolResults(this.limits.keepRecentTurns, 300);
    if (withRefs) this.compactions = Math.max(this.compactions, 1);
    return count;
  }

  /** The durable summary at the head of the conversation, if any. */
  get summary(): string | undefined {
    const first = this.messages[0];
    if (!first || typeof first.content === 'string') return undefined;
    const block = first.content.find((b) => b.type === 'text' && b.text.startsWith(SUMMARY_LABEL));
    return block?.type === 'text' ? block.text.slice(SUMMARY_LABEL.length).trimStart() : undefined;
  }

  /**
   * The oldest `pairs` turns leave; with a summary, it replaces the one at the head of the
   * conversation (it already holds the earlier summary), else they are trimmed and the audit trail
   * says why (`trimmedBecause`). Returns the audit line.
   */
  leaveTurns(pairs: number, stubbed: number, summary: { text: string; usage: Usage; costUsd?: number } | undefined, trimmedBecause: string | undefined, turn: number): string {
    const context = this.context!;
    this.messages.splice(1, 2 * pairs);
    this.compactions += 1;
    this.droppedTurns += pairs;
    let how: string;
    if (summary) {
      this.putSummary(summary.text);
      spend(context.summaries, summary.usage, summary.costUsd, turn);
      how = `${pairs} oldest turns summarised (${summary.usage.inputTokens + summary.usage.outputTokens} tokens${summary.costUsd !== undefined ? `, $${summary.costUsd.toFixed(4)}` : ''}; the summary stays at the head)`;
    } else {
      context.trims += 1;
      if (pairs) this.noteDroppedTurns();
      how = `${pairs} oldest turns trimmed without a summary (last resort: ${trimmedBecause ?? 'no summary'})`;
    }
    const line = `compacted the conversation for the context window: ${stubbed} older tool results stubbed (recallable with ${RECALL_TOOL}), ${how} (${this.droppedTurns} turns out in all)`;
    this.audit.record('informed', line);
    return line;
  }

  private putSummary(text: string): void {
    const first = this.messages[0];
    if (!first || first.role !== 'user') return;
    const blocks = typeof first.content === 'string' ? [{ type: 'text' as const, text: first.content }] : first.content;
    const kept = blocks.filter((b) => !(b.type === 'text' && (b.text.startsWith(SUMMARY_LABEL) || b.text.startsWith('[context] '))));
    first.content = [...kept, { type: 'text', text: `${SUMMARY_LABEL} ${text}` }];
  }

  /**
   * Replaces tool results older than the last `keepTurns` turns, from `minChars` characters (as the
   * model reads them: a stored result counts as its content), by a stub that says how to get them back.
   */
  private stubOldToolResults(keepTurns: number, minChars: number): { count: number; chars: number; withRefs: number } {
    const done = { count: 0, chars: 0, withRefs: 0 };
    const userTurns = this.messages.map((m, i) => (m.role === 'user' && Array.isArray(m.content) ? i : -1)).filter((i) => i >= 0);
    for (const index of userTurns.slice(0, Math.max(0, userTurns.length - keepTurns))) {
      const message = this.messages[index]!;
      if (!Array.isArray(message.content)) continue;
      for (const block of message.content) {
        if (block.type !== 'tool_result' || block.content.startsWith('{"compacted"')) continue;
        const chars = resolvedLength(block.content);
        if (chars < minChars) continue;
        const refs = markerIds(block.content);
        block.content = JSON.stringify(
          refs.length
            ? { compacted: `${chars} characters removed to fit the context window`, recall: refs.map((ref) => ({ tool: RECALL_TOOL, ref })) }
            : { compacted: `${chars} characters removed to fit the context window; call the tool again if you need this.` },
        );
        done.count += 1;
        done.chars += chars;
        if (refs.length) done.withRefs += 1;
      }
    }
    return done;
  }

  /** The first prompt says how many turns left the conversation (once, updated). */
  noteDroppedTurns(): void {
    const first = this.messages[0];
    if (!first || first.role !== 'user') return;
    const note = `[context] ${this.droppedTurns} earlier turns of this task were removed from the conversation to fit the context window; their tool results stay stored and can be recalled by ref where a stub shows one.`;
    const blocks = typeof first.content === 'string' ? [{ type: 'text' as const, text: first.content }] : first.content;
    const kept = blocks.filter((b) => !(b.type === 'text' && b.text.startsWith('[context] ')));
    first.content = [...kept, { type: 'text', text: note }];
  }

  /** After a person unblocked a task whose stored content is gone: every reference to it becomes a note. */
  forgetMissingBlob(detail: string): void {
    const id = new RegExp(BLOB_ID_SOURCE).exec(detail)?.[0];
    if (!id) return;
    const gone = JSON.stringify({ missing: `stored content ${id} is no longer available` });
    const replace = (text: string) => text.replace(MARKER_PATTERN, (match, found: string) => (found === id ? gone : match));
    for (const message of this.messages) {
      if (typeof message.content === 'string') {
        message.content = replace(message.content);
        continue;
      }
      for (const block of message.content as { type: string; text?: string; content?: string; input?: unknown }[]) {
        if (block.type === 'text' && block.text) block.text = replace(block.text);
        if (block.type === 'tool_result' && block.content) block.content = replace(block.content);
        if (block.type === 'tool_use' && (block.input as { $blob?: string } | null)?.$blob === id) block.input = {};
      }
    }
    this.audit.record('informed', `stored content ${id} is missing; the conversation goes on without it`);
  }

  /** Whether the built-in recall tool must be offered (something was compacted). */
  get offersRecall(): boolean {
    return this.compactions > 0;
  }

  private takeGuidance(): string[] {
    const taken = this.pendingGuidance;
    this.pendingGuidance = [];
    return taken;
  }

  /** The final answer's text: a continued answer's parts in order, else the last assistant message. */
  answerText(): string {
    // An answer continued after max_tokens spans the trailing assistant messages.
    const trailing: string[] = [];
    for (let i = this.messages.length - 1; i >= 0 && this.messages[i]!.role === 'assistant'; i--) {
      const message = this.messages[i]!;
      // Untrimmed: the parts of a continued answer meet mid-sentence.
      if (message.role === 'assistant') trailing.unshift(message.content.map((b) => (b.type === 'text' ? b.text : '')).join(''));
    }
    const last = [...this.messages].reverse().find((m) => m.role === 'assistant');
    let text = trailing.length > 1 ? trailing.join('').trim() : last && last.role === 'assistant' ? textOf(last.content) : '';
    // An answer continued after max_tokens by a user turn: its parts, in order, then the last one.
    if (this.answerParts.length && last?.role === 'assistant') {
      text = [...this.answerParts, last.content.map((b) => (b.type === 'text' ? b.text : '')).join('')].join('').trim();
    }
    return text;
  }
}
