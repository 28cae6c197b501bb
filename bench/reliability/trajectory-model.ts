/**
 * The model every engine talks to: the strict fake Messages API answering from the tasks' scripted
 * trajectories. It reads each request the way a model reads its context: the latest tool result it
 * knows (by the tool_use id it gave) says which step of which trajectory the conversation is at,
 * and whether that step's answer is usable. A usable answer moves it to the next step (whose
 * arguments may be computed from the earlier answers); an error ("already cancelled" and the like
 * aside, which it reads as done), a body that is not JSON, or one without the fields it needs makes
 * it call the same tool with the same arguments again, up to
 * MAX_ATTEMPTS_PER_STEP; a conversation with no tool result yet starts at step 1 of the trajectory
 * its first message is tagged with (`[task KEY]`). So an engine that restarts a task from scratch
 * gets the whole trajectory again, and one that resumes gets the rest of it.
 *
 * Tool-use ids are random, as the API's are: an engine cannot get an idempotency key for free by
 * replaying the model's ids.
 */
import { randomBytes } from 'node:crypto';
import type { FakeReply, RecordedRequest } from '../../src/testing/fake-messages-api';
import { SUMMARY_SYSTEM } from '../../src/models/summary-request';
import { type Answers, defaultCheck, MAX_ATTEMPTS_PER_STEP, type Step, type Trajectory, trajectoryByKey } from './tasks';

export interface IssuedCall {
  key: string;
  step: number;
  attempt: number;
  /** The answers of the steps before this one, in order. */
  answers: Answers;
  /** The step's own arguments (a call made on the step's behalf, `aside`, has its own in `asideInput`). */
  input: Record<string, unknown>;
  /** Set on a call that is not the step's own call but made for it (hint-model.ts: a look before a repeat, a narrower query). */
  aside?: { tool: string; input: Record<string, unknown>; purpose: string; state?: unknown };
}

export interface TrajectoryModelStats {
  /** Replies that called a tool. */
  toolCalls: number;
  /** Calls that repeated a step whose answer was unusable. */
  repeats: number;
  /** Trajectories given up (a step failed MAX_ATTEMPTS_PER_STEP times, or its input could not be computed). */
  givenUp: number;
  summaries: number;
}

export class TrajectoryModel {
  protected readonly issued = new Map<string, IssuedCall>();
  /** Per trajectory, the latest tool result read: where a compacted conversation goes on from. */
  private readonly lastSeen = new Map<string, { call: IssuedCall; block: ToolResult }>();
  readonly stats: TrajectoryModelStats = { toolCalls: 0, repeats: 0, givenUp: 0, summaries: 0 };

  constructor(protected readonly lookup: (key: string) => Trajectory | undefined = trajectoryByKey) {}

  /** The fake API's responder. */
  readonly respond = (request: RecordedRequest): FakeReply => {
    const body = request.body;
    if (systemText(body.system).startsWith(SUMMARY_SYSTEM.slice(0, 60))) {
      this.stats.summaries += 1;
      return { kind: 'turn', content: [{ type: 'text', text: 'Summary: the task read the pages listed above and is continuing step by step as its prompt says.' }] };
    }
    const messages = body.messages as { role: string; content: unknown }[];
    const last = this.latestKnownResult(messages);
    if (last) {
      this.lastSeen.set(last.call.key, last);
      return this.afterResult(last.call, last.block);
    }
    const key = taggedKey(messages);
    const trajectory = key ? this.lookup(key) : undefined;
    if (!trajectory) return text('I do not know which task this is.');
    // A conversation that goes on without any result of ours in it was compacted (its old turns
    // folded into a summary): the model carries on from the summary, i.e. from the last result it
    // read. A new conversation (no assistant turn yet) starts the trajectory.
    const seen = messages.some((m) => m.role === 'assistant') ? this.lastSeen.get(trajectory.key) : undefined;
    if (seen) return this.afterResult(seen.call, seen.block);
    return this.stepReply(trajectory, 0, 1, []);
  };

  /** The reply to a tool result of `call`: the next step, the same one again, or giving up. */
  protected afterResult(call: IssuedCall, block: ToolResult): FakeReply {
    const trajectory = this.lookup(call.key)!;
    const step = trajectory.steps[call.step]!;
    const answer = usableAnswer(step, call.input, block);
    if (answer.usable) return this.stepReply(trajectory, call.step + 1, 1, [...call.answers, answer.value]);
    if (call.attempt >= MAX_ATTEMPTS_PER_STEP) {
      this.stats.givenUp += 1;
      return text(`I could not complete ${step.tool} after ${call.attempt} attempts; stopping here.`);
    }
    this.stats.repeats += 1;
    return this.stepReply(trajectory, call.step, call.attempt + 1, call.answers, call.input);
  }

  protected stepReply(trajectory: Trajectory, index: number, attempt: number, answers: Answers, sameInput?: Record<string, unknown>): FakeReply {
    const step: Step | undefined = trajectory.steps[index];
    if (!step) return text(typeof trajectory.answer === 'string' ? trajectory.answer : trajectory.answer(answers));
    let input: Record<string, unknown>;
    try {
      input = sameInput ?? (typeof step.input === 'function' ? step.input(answers) : step.input);
    } catch (err) {
      this.stats.givenUp += 1;
      return text(`I cannot go on: ${(err as Error).message}.`);
    }
    return this.issue({ key: trajectory.key, step: index, attempt, answers, input }, attempt > 1 ? `That did not work; trying ${step.tool} again.` : `Step ${index + 1}: ${step.tool}.`);
  }

  /** A reply calling `call`'s tool (its aside's, when it has one), remembered under a new random tool_use id. */
  protected issue(call: IssuedCall, say: string): FakeReply {
    const trajectory = this.lookup(call.key)!;
    const id = `toolu_01${randomBytes(11).toString('hex')}`;
    this.issued.set(id, call);
    this.stats.toolCalls += 1;
    const name = call.aside?.tool ?? trajectory.steps[call.step]!.tool;
    return {
      kind: 'turn',
      content: [
        { type: 'text', text: say },
        { type: 'tool_use', id, name, input: call.aside?.input ?? call.input },
      ],
    };
  }

  /** The last tool_result in the conversation whose tool_use id this model gave. */
  private latestKnownResult(messages: { role: string; content: unknown }[]): { call: IssuedCall; block: ToolResult } | undefined {
    for (let i = messages.length - 1; i >= 0; i--) {
      const content = messages[i]!.content;
      if (messages[i]!.role !== 'user' || !Array.isArray(content)) continue;
      for (let j = content.length - 1; j >= 0; j--) {
        const block = content[j] as ToolResult;
        if (block.type !== 'tool_result') continue;
        const call = this.issued.get(block.tool_use_id);
        if (call) return { call, block };
      }
    }
    return undefined;
  }
}

export interface ToolResult {
  type: string;
  tool_use_id: string;
  content?: string | { type: string; text?: string }[];
  is_error?: boolean;
}

/** What the model makes of a tool result: the answer it can use, or not usable. */
export function usableAnswer(step: Step, input: Record<string, unknown>, block: ToolResult): { usable: true; value: unknown } | { usable: false } {
  const raw = resultText(block);
  const done = alreadyDone(step, input, raw);
  if (done) return { usable: true, value: done };
  if (block.is_error) return { usable: false };
  let value: any;
  try {
    value = JSON.parse(raw);
    // durable-agent sends a flagged answer (valid, with a note such as "more pages") as { data, note }.
    if (value && typeof value === 'object' && 'data' in value && 'note' in value) value = value.data;
    // ... an approved call's answer as { approval, result }, a read answered from its ledger as { ledger, result }.
    if (value && typeof value === 'object' && ('approval' in value || 'ledger' in value) && 'result' in value) value = value.result;
  } catch {
    value = raw;
  }
  if (value && typeof value === 'object' && 'error' in value) return { usable: false };
  const check = step.check ?? ((answer: unknown) => defaultCheck(step.tool, input, answer));
  return check(value) ? { usable: true, value } : { usable: false };
}

/** A tool result's text. */
export function resultText(block: ToolResult): string {
  return typeof block.content === 'string' ? block.content : (block.content ?? []).map((b) => b.text ?? '').join('');
}

/**
 * A write refused because its effect is already in place, read as done, as a model reads "already
 * cancelled": the store's 409 for a cancelled order, its 422 for a refund beyond what is left when
 * the amount asked is already refunded. (A loop that starts a task again meets these.)
 */
export function alreadyDone(step: Step, input: Record<string, unknown>, raw: string): Record<string, unknown> | undefined {
  if (step.tool === 'cancel_order' && /is already cancelled/.test(raw)) return { order_id: input.order_id, status: 'cancelled' };
  const refunded = /totals (\d+) cents; (\d+) already refunded/.exec(raw);
  if (step.tool === 'refund_order' && refunded && Number(refunded[2]) >= Number(input.amount_cents)) return { order_id: input.order_id, refunded_total_cents: Number(refunded[2]) };
  return undefined;
}

export function text(t: string): FakeReply {
  return { kind: 'turn', content: [{ type: 'text', text: t }] };
}

function systemText(system: unknown): string {
  if (typeof system === 'string') return system;
  if (Array.isArray(system)) return system.map((b: { text?: string }) => b.text ?? '').join('');
  return '';
}

/** `KEY` of the first `[task KEY]` of the conversation: its prompt's, or where a compaction summary quotes it. */
function taggedKey(messages: { role: string; content: unknown }[]): string | undefined {
  const first = messages.find((m) => m.role === 'user');
  const firstText = first ? (typeof first.content === 'string' ? first.content : JSON.stringify(first.content)) : '';
  return (/\[task ([\w-]+)\]/.exec(firstText) ?? /\[task ([\w-]+)\]/.exec(JSON.stringify(messages)))?.[1];
}
