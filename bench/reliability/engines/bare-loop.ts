/**
 * A hand-written agent loop on the bare Anthropic SDK, as a careful developer writes one without a
 * durable engine: `messages.create` in a loop, the SDK's own retries (429/529/5xx with retry-after,
 * maxRetries raised to 4), prompt caching on the system prompt and the conversation's last block,
 * tool inputs validated, writes sent with the tool_use id as Idempotency-Key, every tool call retried
 * the way the SDK retries its own requests (connection errors, timeouts, 408/409/429/5xx) with that
 * same key, a timeout per tool call, errors returned to the model as is_error results,
 * old tool results cleared when the conversation grows long, and a person asked (over HTTP, the
 * approval desk) before a call that needs approval. What it lacks is durability: its state lives in
 * its process, so after a crash it starts the task again from the beginning.
 */
import Anthropic from '@anthropic-ai/sdk';
import { APPROVAL_TOOLS, callStore, CLERK_SYSTEM, DELEGATE_TOOL, LEAD_SYSTEM, STORE_SYSTEM, STORE_TOOL_INPUTS, storeToolSpecs, type StoreToolName } from '../store-tools';
import { TOOL_TIMEOUT_MS } from './durable-agents';

export interface BareLoopOptions {
  prompt: string;
  agent: 'store' | 'lead' | 'clerk';
  storeUrl: string;
  apiUrl: string;
  model: string;
  /** Base URL of the approval desk: POST /ask answers with the person's decision. */
  deskUrl: string;
  maxTurns?: number;
}

export interface BareLoopResult {
  status: 'answered' | 'failed';
  text?: string;
  error?: string;
  turns: number;
}

/** Tool results older than this many turns are cleared (replaced by a short note) to bound the context. */
const KEEP_RESULTS_TURNS = 20;
const RETRIED_STATUSES = new Set([408, 409, 429, 500, 502, 503, 504, 529]);
const MAX_TOOL_ATTEMPTS = 3;

type Block = Anthropic.Messages.ContentBlockParam;

export async function runBareLoop(options: BareLoopOptions): Promise<BareLoopResult> {
  const client = new Anthropic({ apiKey: 'sk-ant-bench', baseURL: options.apiUrl, maxRetries: 4 });
  const system = options.agent === 'lead' ? LEAD_SYSTEM : options.agent === 'clerk' ? CLERK_SYSTEM : STORE_SYSTEM;
  const tools = storeToolSpecs(options.agent === 'lead');
  const messages: Anthropic.Messages.MessageParam[] = [{ role: 'user', content: options.prompt }];
  const maxTurns = options.maxTurns ?? 400;
  for (let turn = 1; turn <= maxTurns; turn++) {
    clearOldResults(messages);
    let reply: Anthropic.Messages.Message;
    try {
      reply = await client.messages.create({
        model: options.model,
        max_tokens: 1_024,
        system: [{ type: 'text', text: system, cache_control: { type: 'ephemeral' } }],
        tools: tools as Anthropic.Messages.Tool[],
        messages: withCacheBreakpoint(messages),
      });
    } catch (err) {
      return { status: 'failed', error: `model call failed: ${(err as Error).message}`, turns: turn };
    }
    messages.push({ role: 'assistant', content: reply.content as Block[] });
    const uses = reply.content.filter((b): b is Anthropic.Messages.ToolUseBlock => b.type === 'tool_use');
    if (uses.length === 0) {
      return { status: 'answered', text: reply.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join(''), turns: turn };
    }
    const results: Anthropic.Messages.ToolResultBlockParam[] = [];
    for (const use of uses) results.push(await runTool(use, options));
    messages.push({ role: 'user', content: results });
  }
  return { status: 'failed', error: `no answer in ${maxTurns} turns`, turns: maxTurns };
}

async function runTool(use: Anthropic.Messages.ToolUseBlock, options: BareLoopOptions): Promise<Anthropic.Messages.ToolResultBlockParam> {
  const error = (text: string): Anthropic.Messages.ToolResultBlockParam => ({ type: 'tool_result', tool_use_id: use.id, content: text, is_error: true });
  if (use.name === DELEGATE_TOOL && options.agent === 'lead') {
    const task = (use.input as { task?: unknown }).task;
    if (typeof task !== 'string' || !task) return error('Error: task must be a non-empty string');
    const sub = await runBareLoop({ ...options, agent: 'clerk', prompt: task });
    return sub.status === 'answered' ? { type: 'tool_result', tool_use_id: use.id, content: sub.text ?? '' } : error(`Error: the clerk failed: ${sub.error}`);
  }
  const name = use.name as StoreToolName;
  const schema = STORE_TOOL_INPUTS[name];
  if (!schema) return error(`Error: unknown tool ${use.name}`);
  const parsed = schema.safeParse(use.input);
  if (!parsed.success) return error(`Error: invalid input: ${parsed.error.message}`);
  if (APPROVAL_TOOLS.includes(name)) {
    const decision = await ask(options.deskUrl, name, parsed.data);
    if (decision !== 'approve') return error('Error: a person denied this call.');
  }
  // Retried as the SDK retries its own requests (a connection error, a timeout, 408/409/429/5xx with
  // retry-after), up to three attempts, with the same Idempotency-Key, so a retried write is safe.
  for (let attempt = 1; ; attempt++) {
    let answer: Awaited<ReturnType<typeof callStore>>;
    try {
      answer = await callStore(options.storeUrl, name, parsed.data as Record<string, unknown>, { idempotencyKey: use.id, signal: AbortSignal.timeout(TOOL_TIMEOUT_MS) });
    } catch (err) {
      if (attempt < MAX_TOOL_ATTEMPTS) {
        await sleep(500 * attempt);
        continue;
      }
      return error(`Error: ${(err as Error).message}`);
    }
    if (RETRIED_STATUSES.has(answer.status) && attempt < MAX_TOOL_ATTEMPTS) {
      await sleep(retryAfterMs(answer.headers['retry-after']));
      continue;
    }
    if (answer.status >= 400) return error(`Error: HTTP ${answer.status}: ${answer.body}`);
    return { type: 'tool_result', tool_use_id: use.id, content: answer.body };
  }
}

/** Asks the approval desk and waits for the person's answer. */
async function ask(deskUrl: string, tool: string, input: unknown): Promise<string> {
  const res = await fetch(new URL('/ask', deskUrl), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ tool, input }) });
  const body = (await res.json()) as { decision: string };
  return body.decision;
}

/**
 * Old tool results replaced by a note, so a long task stays inside the context window: once more
 * than twice KEEP_RESULTS_TURNS results are whole, all but the last KEEP_RESULTS_TURNS are cleared
 * at once (in batches, so the cached prefix survives most turns).
 */
function clearOldResults(messages: Anthropic.Messages.MessageParam[]): void {
  const whole = messages.flatMap((m, i) => (m.role === 'user' && Array.isArray(m.content) && m.content.some((b) => b.type === 'tool_result' && b.content !== '[cleared]') ? [i] : []));
  if (whole.length <= 2 * KEEP_RESULTS_TURNS) return;
  for (const i of whole.slice(0, whole.length - KEEP_RESULTS_TURNS)) {
    const m = messages[i]!;
    m.content = (m.content as Block[]).map((b) => (b.type === 'tool_result' ? { ...b, content: '[cleared]' } : b));
  }
}

/** The conversation with a cache breakpoint on its last block (the SDK docs' pattern for multi-turn caching). */
function withCacheBreakpoint(messages: Anthropic.Messages.MessageParam[]): Anthropic.Messages.MessageParam[] {
  const last = messages.at(-1)!;
  const content: Block[] = typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : [...last.content];
  const end = content.length - 1;
  content[end] = { ...content[end], cache_control: { type: 'ephemeral' } } as Block;
  return [...messages.slice(0, -1), { role: last.role, content } as Anthropic.Messages.MessageParam];
}

function retryAfterMs(header: string | undefined): number {
  const seconds = Number(header);
  return Number.isFinite(seconds) && seconds >= 0 ? Math.min(seconds, 10) * 1000 : 1_000;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
