/**
 * One task run uninterrupted and with each kind of resume (a worker SIGKILLed mid-call, a
 * continue-as-new, a fork, a child's wake), through the real SDK against the strict fake Messages
 * API, which bills caching by byte-identical prefix as the API documents (prompt-cache.ts). Shared
 * by test/integration/cache-resumes.test.ts and `npm run bench -- cache-resumes`.
 *
 * The model (the fake's responder) asks for two pages per turn in parallel, so the order of
 * parallel results is part of every prompt; what it answers depends only on the conversation, so
 * every run sends the same prompts unless a resume changes them.
 */
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { FakeMessagesApi, fakeTurns, type FakeReply, type RecordedRequest } from '../../src/testing/fake-messages-api';
import { createCacheAgents, LEAD_SYSTEM } from './cache-agents';
import type { Harness } from './harness';
import { sigkill, spawnCli, waitFor } from './processes';

export type ResumeKind = 'crash' | 'continue-as-new' | 'fork' | 'child-wake' | 'child-wake-late';
/** The resumes whose prompt must keep the cache. */
export const RESUME_KINDS: ResumeKind[] = ['crash', 'continue-as-new', 'fork', 'child-wake'];
/**
 * A child's wake after the child ran longer than the cache's 5-minute lifetime (the fake's clock
 * moves 6 minutes when the child answers): the bytes are kept, the cache is not. Measured, not required.
 */
export const LATE_CHILD_MS = 6 * 60_000;

export interface CacheResumeOptions {
  /** Model calls that read pages (each reads two); one more answers. */
  turns: number;
  pageChars: number;
  /** The Claude model and its window (default: the worker's default model, 200 000 tokens). A small window makes the task summarise. */
  model?: { model?: string; contextWindowTokens?: number };
  /** The call the resume happens at (crash: killed during it; continue-as-new: every this many turns; fork: at this turn; child: delegated at it). */
  resumeAt: number;
}

export const DEFAULT_CACHE_RESUME_OPTIONS: CacheResumeOptions = { turns: 12, pageChars: 6_000, resumeAt: 6 };

export interface CallUsage {
  input: number;
  cacheRead: number;
  cacheWrite: number;
}

export interface TaskCalls {
  /** The accepted requests of one task, in order (a call killed mid-answer included). */
  requests: RecordedRequest[];
  usage: CallUsage[];
}

export interface ResumeRun {
  kind: ResumeKind | 'uninterrupted';
  /** The task's calls from the first one after the resume (for a fork, the fork's own calls). */
  after: TaskCalls;
  /** The uninterrupted run's calls that `after` corresponds to, call for call (a child's wake: the same turns of the uninterrupted task). */
  baseline: TaskCalls;
  /** The task's last call before the resume (a fork: its origin's call at the fork's turn), whose prefix the cache holds. */
  before: RecordedRequest;
  /** The uninterrupted run's call before `baseline`'s first. */
  baselineBefore: RecordedRequest;
  rejected: string[];
}

const PROMPT = 'Read the document two pages at a time and report what it says.';
const CHILD_TASK = 'Read the appendix two pages at a time, from page 100.';
const CHILD_TURNS = 3;

/** Which task sent a request: the lead, a pager started by hand, or a pager working for the lead. */
function roleOf(record: RecordedRequest): 'lead' | 'pager' | 'child' {
  if (JSON.stringify(record.body.system ?? '').includes(LEAD_SYSTEM)) return 'lead';
  return JSON.stringify(record.body.messages[0]).includes('from page 100') ? 'child' : 'pager';
}

/** The model: two parallel reads per call until `turns` calls, then an answer; the lead delegates at `delegateAt`. */
function responder(options: CacheResumeOptions, delegateAt?: number) {
  return (record: RecordedRequest): FakeReply => {
    const role = roleOf(record);
    const n = record.body.messages.filter((m) => (m as { role?: string }).role === 'assistant').length;
    const turns = role === 'child' ? CHILD_TURNS : options.turns;
    const base = role === 'child' ? 100 : 0;
    if (role === 'lead' && n === delegateAt) return fakeTurns.toolUse(`toolu_${n}_delegate`, 'delegate_to_pager', { task: CHILD_TASK });
    if (n >= turns) return fakeTurns.text(`Read ${n} turns of pages.`);
    return {
      kind: 'turn',
      content: [
        { type: 'tool_use', id: `toolu_${role}_${n}_page`, name: 'read_page', input: { offset: base + n } },
        { type: 'tool_use', id: `toolu_${role}_${n}_note`, name: 'read_note', input: { offset: base + n } },
      ],
    };
  };
}

function callsOf(requests: RecordedRequest[]): TaskCalls {
  return {
    requests,
    usage: requests.map((r) => ({
      input: r.billed?.input_tokens ?? 0,
      cacheRead: r.billed?.cache_read_input_tokens ?? 0,
      cacheWrite: r.billed?.cache_creation_input_tokens ?? 0,
    })),
  };
}

/** cache_read / (input + cache_read + cache_creation) over the calls. */
export function cacheReadShare(calls: TaskCalls): number {
  const sum = (pick: (u: CallUsage) => number) => calls.usage.reduce((n, u) => n + pick(u), 0);
  const all = sum((u) => u.input + u.cacheRead + u.cacheWrite);
  return all === 0 ? 0 : sum((u) => u.cacheRead) / all;
}

/**
 * The request's prompt as the cache keys it, block by block: the model, tools, system, then each
 * message's blocks in order (with its role), without the cache_control markers themselves; and the
 * index of its last breakpoint.
 */
function promptBlocks(record: RecordedRequest): { blocks: string[]; lastBreakpoint: number } {
  const blocks: string[] = [JSON.stringify(record.body.model)];
  let lastBreakpoint = -1;
  const add = (value: unknown, role?: string) => {
    const { cache_control: marker, ...content } = typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : { type: 'text', text: value };
    if (marker !== undefined) lastBreakpoint = blocks.length;
    blocks.push(JSON.stringify(role ? [role, content] : content));
  };
  for (const tool of record.body.tools ?? []) add(tool);
  const system = record.body.system;
  if (Array.isArray(system)) for (const block of system) add(block);
  else if (typeof system === 'string') add(system);
  for (const message of record.body.messages as { role: string; content: unknown }[]) {
    if (Array.isArray(message.content)) for (const block of message.content) add(block, message.role);
    else add(message.content, message.role);
  }
  return { blocks, lastBreakpoint };
}

/** The request's prompt up to and including its last cache breakpoint, markers left out. */
export function cachedPrefix(record: RecordedRequest): string {
  const { blocks, lastBreakpoint } = promptBlocks(record);
  return blocks.slice(0, lastBreakpoint + 1).join('\n');
}

/**
 * Where `next` stops sending what `previous` sent up to its last breakpoint (the prefix `previous`
 * wrote to the cache), as a message naming the first differing block; undefined when it sends it all.
 */
export function prefixBreak(previous: RecordedRequest, next: RecordedRequest): string | undefined {
  const before = promptBlocks(previous);
  const after = promptBlocks(next).blocks;
  for (let i = 0; i <= before.lastBreakpoint; i++) {
    if (before.blocks[i] !== after[i]) return `block ${i} of ${before.lastBreakpoint + 1} differs:\n  before: ${before.blocks[i]?.slice(0, 240)}\n  after:  ${after[i]?.slice(0, 240)}`;
  }
  return undefined;
}

/**
 * Where a resumed run's prompts part from what keeps the cache, or none: each call after the resume
 * must send the prefix the call before it cached wherever the uninterrupted run's matching call
 * did (making room in the context window rewrites old blocks with or without a resume), and but
 * for a child's wake (the lead has its own prompt) the uninterrupted run's prompt up to its last
 * breakpoint, byte for byte.
 */
export function resumeBreaks(run: ResumeRun): string[] {
  const breaks: string[] = [];
  const ownPrompt = run.kind === 'child-wake' || run.kind === 'child-wake-late';
  const calls = [run.before, ...run.after.requests];
  const plain = [run.baselineBefore, ...run.baseline.requests];
  for (let i = 1; i < calls.length; i++) {
    const broken = prefixBreak(calls[i - 1]!, calls[i]!);
    const plainBroken = plain[i] ? prefixBreak(plain[i - 1]!, plain[i]!) : undefined;
    if (broken && !plainBroken) breaks.push(`call ${i - 1} after the ${run.kind} does not send what the call before it cached: ${broken}`);
    if (ownPrompt || !plain[i]) continue;
    if (cachedPrefix(calls[i]!) !== cachedPrefix(plain[i]!))
      breaks.push(`call ${i - 1} after the ${run.kind} is not the uninterrupted prompt: ${prefixBreak(plain[i]!, calls[i]!) ?? 'it stops earlier'}`);
  }
  if (!ownPrompt && run.after.requests.length !== run.baseline.requests.length)
    breaks.push(`${run.after.requests.length} calls after the ${run.kind}, ${run.baseline.requests.length} in the uninterrupted run`);
  return breaks;
}

/**
 * One harness: the uninterrupted run and each resume kind, each on a fresh fake API (an empty cache),
 * so no run reads what another run wrote: a resume's share is what its own task kept (a fork's is
 * what its origin, run again on the same fake just before it, left in the cache).
 */
export class CacheResumeBench {
  private api = new FakeMessagesApi();
  private uninterrupted?: { calls: TaskCalls };
  /** How far the fake's cache clock is ahead of the wall clock (a late child moves it). */
  private skewMs = 0;

  constructor(
    private readonly h: Harness,
    readonly options: CacheResumeOptions = DEFAULT_CACHE_RESUME_OPTIONS,
  ) {}

  /** Runs `body` against a fresh fake API with the model's answers. */
  private async withFreshApi<T>(body: () => Promise<T>): Promise<T> {
    this.skewMs = 0;
    this.api = new FakeMessagesApi({ promptCache: { now: () => Date.now() + this.skewMs } });
    this.api.responder = responder(this.options, this.options.resumeAt);
    await this.api.start();
    try {
      return await body();
    } finally {
      await this.api.stop();
    }
  }

  private modelEnv() {
    return { anthropicApiKey: 'sk-ant-test', anthropicBaseURL: this.api.url };
  }

  private worker() {
    return this.h.worker(createCacheAgents(this.options.pageChars), { modelEnv: this.modelEnv() });
  }

  private budgets() {
    return { turns: this.options.turns + 20, toolCalls: 4 * this.options.turns + 20 };
  }

  /** What every task of the bench starts with besides its agent and prompt. */
  private input() {
    return { budgets: this.budgets(), ...(this.options.model ? { model: { provider: 'anthropic' as const, ...this.options.model } } : {}) };
  }

  /** The accepted requests made after `from` by the task whose requests `of` picks. */
  private requestsSince(from: number, of: (r: RecordedRequest) => boolean): RecordedRequest[] {
    return this.api.requests.slice(from).filter((r) => r.rejected === undefined && of(r));
  }

  private rejectedSince(from: number): string[] {
    return this.api.requests.slice(from).flatMap((r) => (r.rejected === undefined ? [] : [r.rejected]));
  }

  private async runToEnd(taskId: string, start?: () => Promise<unknown>): Promise<void> {
    const worker = await this.worker();
    await worker.runUntil(async () => {
      if (start) await start();
      const result = await this.h.client.result(taskId);
      if (result.outcome !== 'answered') throw new Error(`${taskId} ended ${result.outcome}: ${result.text}`);
    });
  }

  async runUninterrupted(): Promise<ResumeRun> {
    const run = await this.withFreshApi(() => this.plainRun());
    this.uninterrupted = run;
    return run.run;
  }

  private async plainRun(): Promise<{ taskId: string; calls: TaskCalls; run: ResumeRun }> {
    const from = this.api.requests.length;
    const taskId = this.h.taskId('cache-plain');
    await this.runToEnd(taskId, () => this.h.client.start({ agent: 'pager', prompt: PROMPT, ...this.input() }, { taskId }));
    const calls = callsOf(this.requestsSince(from, (r) => roleOf(r) === 'pager'));
    return { taskId, calls, run: { kind: 'uninterrupted', after: calls, baseline: calls, before: calls.requests[0]!, baselineBefore: calls.requests[0]!, rejected: this.rejectedSince(from) } };
  }

  private baseline(): TaskCalls {
    if (!this.uninterrupted) throw new Error('run the uninterrupted task first');
    return this.uninterrupted.calls;
  }

  private slice(calls: TaskCalls, from: number, count = calls.requests.length - from): TaskCalls {
    return { requests: calls.requests.slice(from, from + count), usage: calls.usage.slice(from, from + count) };
  }

  async run(kind: ResumeKind): Promise<ResumeRun> {
    const base = this.baseline();
    return this.withFreshApi(async () => {
      // A fork's origin: the same task again, on this fake, just before it.
      const origin = kind === 'fork' ? await this.plainRun() : undefined;
      return this.runKind(kind, base, origin);
    });
  }

  private async runKind(kind: ResumeKind, base: TaskCalls, origin: { taskId: string; calls: TaskCalls } | undefined): Promise<ResumeRun> {
    const from = this.api.requests.length;
    const at = this.options.resumeAt;
    if (kind === 'continue-as-new') {
      const taskId = this.h.taskId('cache-can');
      await this.runToEnd(taskId, () => this.h.client.start({ agent: 'pager', prompt: PROMPT, ...this.input(), continueAsNewEveryTurns: at }, { taskId }));
      const calls = callsOf(this.requestsSince(from, (r) => roleOf(r) === 'pager'));
      return { kind, after: this.slice(calls, at), baseline: this.slice(base, at), before: calls.requests[at - 1]!, baselineBefore: base.requests[at - 1]!, rejected: this.rejectedSince(from) };
    }
    if (kind === 'fork') {
      const fork = await this.h.client.fork(origin!.taskId, at, { blobStore: this.h.blobStore });
      await this.runToEnd(fork.taskId);
      const calls = callsOf(this.requestsSince(from, (r) => roleOf(r) === 'pager'));
      // The fork goes on from the origin's call at its turn: the calls it makes match the origin's last ones.
      const first = base.requests.length - calls.requests.length;
      return { kind, after: calls, baseline: this.slice(base, first), before: origin!.calls.requests[first - 1]!, baselineBefore: base.requests[first - 1]!, rejected: this.rejectedSince(from) };
    }
    if (kind === 'child-wake' || kind === 'child-wake-late') {
      if (kind === 'child-wake-late') {
        const answer = responder(this.options, at);
        this.api.responder = (record) => {
          const reply = answer(record);
          // The child's answer comes LATE_CHILD_MS after its last call, on the cache's clock.
          if (roleOf(record) === 'child' && reply.kind === 'turn' && reply.content.every((b) => b.type !== 'tool_use')) this.skewMs += LATE_CHILD_MS;
          return reply;
        };
      }
      const taskId = this.h.taskId('cache-lead');
      await this.runToEnd(taskId, () => this.h.client.start({ agent: 'lead', prompt: PROMPT, ...this.input() }, { taskId }));
      const calls = callsOf(this.requestsSince(from, (r) => roleOf(r) === 'lead'));
      // The lead's first call after its child answered: the wake.
      return {
        kind,
        after: this.slice(calls, at + 1),
        baseline: this.slice(base, at + 1, calls.requests.length - at - 1),
        before: calls.requests[at]!,
        baselineBefore: base.requests[at]!,
        rejected: this.rejectedSince(from),
      };
    }
    return this.runCrash(from, base, at);
  }

  /** A worker process SIGKILLed while call `at` streams; an in-process worker finishes the task. */
  private async runCrash(from: number, base: TaskCalls, at: number): Promise<ResumeRun> {
    const taskId = this.h.taskId('cache-crash');
    const answer = responder(this.options);
    let held: RecordedRequest | undefined;
    this.api.responder = (record) => {
      const reply = answer(record);
      const n = record.body.messages.filter((m) => (m as { role?: string }).role === 'assistant').length;
      if (held || n !== at || reply.kind !== 'turn') return reply;
      held = record;
      return { ...reply, stream: { chunkChars: 4, holdAfterDeltas: 2 } };
    };
    let child: ChildProcess | undefined;
    let stderr = '';
    try {
      child = spawnCli(['worker', '--address', this.h.server.address, '--task-queue', this.h.taskQueue, '--agents', path.join(__dirname, 'cache-agents.ts')], {
        DURABLE_AGENT_SCRIPT_DIRS: this.h.tmpDir,
        DURABLE_AGENT_BLOB_STORE: `file:${path.join(this.h.tmpDir, 'blobs')}`,
        ANTHROPIC_API_KEY: 'sk-ant-test',
        ANTHROPIC_BASE_URL: this.api.url,
        CACHE_AGENT_PAGE_CHARS: String(this.options.pageChars),
      });
      child.stderr!.on('data', (d) => (stderr += d));
      await waitFor('the worker process to start', () => stderr.includes('worker: ') || (child!.exitCode !== null ? Promise.reject(new Error(`worker exited: ${stderr}`)) : undefined), 60_000);
      await this.h.client.start({ agent: 'pager', prompt: PROMPT, ...this.input() }, { taskId });
      await waitFor('the call to stream', () => ((held?.stream?.deltas ?? 0) >= 2 ? true : undefined), 120_000);
      if ((await sigkill(child)) !== 'SIGKILL') throw new Error('the worker process was not SIGKILLed');
      await this.runToEnd(taskId);
    } finally {
      if (child) await sigkill(child);
      this.api.responder = responder(this.options, this.options.resumeAt);
    }
    const calls = callsOf(this.requestsSince(from, (r) => roleOf(r) === 'pager'));
    // From the retried call on: the killed call's answer never reached the task.
    return { kind: 'crash', after: this.slice(calls, at + 1), baseline: this.slice(base, at), before: calls.requests[at]!, baselineBefore: base.requests[at - 1]!, rejected: this.rejectedSince(from) };
  }
}
