/**
 * The guard around one tool call (seed 000's pattern): validate the input, run, parse raw output as
 * JSON, validate it against the output schema, run the semantic check. The result is a validated
 * payload or a ToolError: never a stack trace, never an empty string.
 *
 * Re-reads (issue 49): with `options.reread` (runTool always passes it), a read or an idempotent
 * call whose answer came back broken (not JSON, empty, breaking its output schema, or an empty first
 * page that says more is to come) is run again by the engine, after a short backoff, before the
 * model sees anything. One good answer ends it: the model gets that answer and no error. Only an
 * answer broken the same way twice in a row (same code, same cut point or the same broken fields)
 * is the tool's own fault, as the seed's undocumented gateway cap is: then the model is told once,
 * with what was cut and a smaller query that fits. A non-idempotent write is never sent again.
 */
import { classify } from '../errors/classify';
import { toolError, type ToolError } from '../protocol/tool-error';
import type { ToolContext, ToolDefinition } from './define-tool';
import { validatorOf } from './schema';
import { NeedsInputError } from './needs-input';

export type GuardedResult =
  | { kind: 'ok'; output: unknown }
  /** Valid output that a semantic check flagged (partial_data or semantic): the model gets both. */
  | { kind: 'flagged'; output: unknown; error: ToolError }
  | { kind: 'failed'; error: ToolError; retryAfterMs?: number };

// biome-ignore lint/suspicious/noExplicitAny: the guard runs tools of every input and output type.
type AnyTool = ToolDefinition<any, any>;

/** How the engine reads a broken answer again (runTool passes DEFAULT_REREAD). */
export interface RereadOptions {
  /** The wait before each extra read, in ms; its length is how many extra reads at most. */
  delaysMs: readonly number[];
  /**
   * When the call's time is up (epoch ms, the activity attempt's start-to-close): an extra read that
   * would not finish before it (its wait plus as long as the last read took) is not started.
   */
  deadline?: number;
  /** Told of each extra read before it starts (runTool logs it). */
  onReread?(info: { read: number; after: ToolError; delayMs: number }): void;
  /** For tests: the clock and the wait. */
  now?(): number;
  sleep?(ms: number, signal: AbortSignal): Promise<void>;
}

export interface GuardOptions {
  reread?: RereadOptions;
}

/** Two extra reads at most, after 200 ms and then 800 ms: a passing fault clears, a cap shows twice. */
export const DEFAULT_REREAD: RereadOptions = { delaysMs: [200, 800] };

export async function guardedCall(tool: AnyTool, rawInput: unknown, ctx: ToolContext, options: GuardOptions = {}): Promise<GuardedResult> {
  const input = validatorOf(tool.input).parseInput(rawInput);
  if (!input.success) {
    return {
      kind: 'failed',
      error: toolError('model', 'invalid_arguments', input.message, `Call ${tool.name} again with corrected arguments; the schema is in the tool definition.`),
    };
  }
  const reread = options.reread;
  // Only a call that leaves the world as one call would may be sent again: a read, or an idempotent
  // call (a write re-sent under the same ctx.idempotencyKey, so the service answers with what it stored).
  if (!reread || reread.delaysMs.length === 0 || !(tool.effect === 'read' || tool.idempotent)) {
    return (await readOnce(tool, input.data, ctx)).result;
  }
  const now = reread.now ?? Date.now;
  const sleep = reread.sleep ?? abortableSleep;
  let started = now();
  let read = await readOnce(tool, input.data, ctx);
  let reads = 1;
  for (const delayMs of reread.delaysMs) {
    if (!read.broken) return read.result;
    const took = now() - started;
    if (ctx.signal.aborted || (reread.deadline !== undefined && now() + delayMs + took >= reread.deadline)) break;
    const error = brokenError(read.result)!;
    reread.onReread?.({ read: reads + 1, after: error, delayMs });
    // Alive while waiting and before the next read (a bare beat keeps the tool's own details).
    ctx.heartbeat();
    await sleep(delayMs, ctx.signal);
    if (ctx.signal.aborted) break;
    ctx.heartbeat();
    started = now();
    const next = await readOnce(tool, input.data, ctx);
    reads += 1;
    const same = next.broken !== undefined && next.broken === read.broken;
    read = next;
    if (same) return toolsOwnFault(tool, rawInput, read, reads, 'same');
  }
  if (!read.broken) return read.result;
  return toolsOwnFault(tool, rawInput, read, reads, reads > 1 ? 'different' : 'once');
}

interface Read {
  result: GuardedResult;
  /** Set when the answer came back broken in a way another read may fix: how it broke (code and cut). */
  broken?: string;
  /** For an answer that was not JSON: where it stops. */
  cut?: Cut;
}

async function readOnce(tool: AnyTool, input: unknown, ctx: ToolContext): Promise<Read> {
  let raw: unknown;
  try {
    raw = await tool.run(input, ctx);
  } catch (err) {
    // A question for a person is no failure of the tool: the activity asks it.
    if (err instanceof NeedsInputError) throw err;
    const classified = classify(err);
    const result: GuardedResult = { kind: 'failed', ...classified };
    // A tool that parses its own answer (a SyntaxError) or says it broke its contract: read again too.
    return classified.error.error_class === 'schema_mismatch' ? { result, broken: `${classified.error.code}:${classified.error.detail}` } : { result };
  }

  let parsed: unknown = raw;
  if (typeof raw === 'string') {
    try {
      parsed = JSON.parse(raw);
    } catch (err) {
      if (raw.trim() === '') {
        return {
          result: {
            kind: 'failed',
            error: toolError('schema_mismatch', 'empty_output', 'The tool returned nothing.', "The tool itself is broken; don't retry with the same arguments. Try another tool, or tell the user."),
          },
          broken: 'empty_output',
        };
      }
      const cut = cutPoint(raw);
      const where = cut ? `; it stops inside \`${cut.path}\`${cut.items ? ` after ${cut.items.complete} complete item(s) of \`${cut.items.path}\`` : ''}` : '';
      return {
        result: {
          kind: 'failed',
          error: toolError(
            'schema_mismatch',
            'invalid_json',
            `Tool output is not valid JSON (${(err as Error).message}); it may be truncated (${raw.length} chars received)${where}.`,
            "The tool itself is broken; don't retry with the same arguments. Try narrower arguments, another tool, or tell the user.",
          ),
        },
        // The same length and the same place: the same cut, as a size cap makes it.
        broken: `invalid_json:${raw.length}:${cut?.path ?? ''}`,
        ...(cut ? { cut } : {}),
      };
    }
  }

  const output = validatorOf(tool.output).parseOutput(parsed);
  if (!output.success) {
    return {
      result: {
        kind: 'failed',
        error: toolError('schema_mismatch', 'schema_violation', `Tool output breaks its contract: ${output.message}`, "The tool's contract is broken; don't retry with the same arguments."),
      },
      broken: `schema_violation:${output.message}`,
    };
  }

  const issue = tool.check?.(output.data, input);
  const result: GuardedResult = issue ? { kind: 'flagged', output: output.data, error: toolError(issue.errorClass, issue.code, issue.detail, issue.hint) } : { kind: 'ok', output: output.data };
  // An empty first page that says more is to come is a service that answered before it had the data.
  return isEmptyPageWithMore(output.data) ? { result, broken: `empty_page:${issue?.code ?? ''}` } : { result };
}

/** The error of a broken read, for onReread; a broken page is flagged, or ok when the tool has no check. */
function brokenError(result: GuardedResult): ToolError | undefined {
  if (result.kind !== 'ok') return result.error;
  return toolError('partial_data', 'empty_page', 'The first page came back empty while saying more is to come.');
}

/**
 * The broken answer after the last read, as the model gets it. `same`: the last two reads broke the
 * same way, so the tool (or what stands between it and its service) is at fault and will be again.
 */
function toolsOwnFault(tool: AnyTool, rawInput: unknown, read: Read, reads: number, how: 'same' | 'different' | 'once'): GuardedResult {
  const { result } = read;
  if (result.kind === 'ok') return result;
  const note =
    how === 'same'
      ? ` The same answer came back on ${reads} reads, so it is the tool's own fault, not a passing one.`
      : how === 'different'
        ? ` It came back broken on each of ${reads} reads (not the same way each time).`
        : '';
  let { detail, hint } = result.error;
  if (read.cut && how === 'same') {
    detail = `${detail} A size cap between the tool and its service (such as a gateway's) cuts the answer at ${read.cut.chars} chars.`;
    const smaller = smallerQuery(tool, rawInput, read.cut);
    hint = `Don't retry with the same arguments: it will be cut at the same place. ${smaller ?? 'Ask for less at once (a narrower filter, fewer items per call).'}`;
  }
  const error: ToolError = { ...result.error, detail: `${detail}${note}`, ...(hint ? { hint } : {}), attempts: reads };
  return { ...result, error };
}

/** Where a JSON text that is cut short stops: the path being written, and the outermost list's complete items. */
export interface Cut {
  chars: number;
  /** Like `orders[2].total_cents`; `$` when the cut is at the top level. */
  path: string;
  items?: { path: string; complete: number };
}

type Frame = { kind: 'object'; key?: string; expectKey: boolean } | { kind: 'array'; index: number };

/** Reads a JSON text up to its end and says where it was cut; undefined for text that is not a JSON document's start. */
export function cutPoint(text: string): Cut | undefined {
  const stack: Frame[] = [];
  let i = 0;
  const n = text.length;
  const top = () => stack[stack.length - 1];
  while (i < n) {
    const c = text[i]!;
    if (/\s/.test(c) || c === ':') {
      i += 1;
    } else if (c === '{') {
      stack.push({ kind: 'object', expectKey: true });
      i += 1;
    } else if (c === '[') {
      stack.push({ kind: 'array', index: 0 });
      i += 1;
    } else if (c === '}' || c === ']') {
      stack.pop();
      i += 1;
    } else if (c === ',') {
      const frame = top();
      if (frame?.kind === 'array') frame.index += 1;
      else if (frame) {
        frame.expectKey = true;
        delete frame.key;
      }
      i += 1;
    } else if (c === '"') {
      let j = i + 1;
      let value = '';
      let closed = false;
      while (j < n) {
        const d = text[j]!;
        if (d === '\\') {
          value += text.slice(j, j + 2);
          j += 2;
        } else if (d === '"') {
          closed = true;
          break;
        } else {
          value += d;
          j += 1;
        }
      }
      const frame = top();
      if (frame?.kind === 'object' && frame.expectKey) {
        // A key cut in its name is shown as cut.
        frame.key = closed ? value : `${value}…`;
        frame.expectKey = false;
      }
      if (!closed) break;
      i = j + 1;
    } else if (/[-0-9tfn]/.test(c)) {
      while (i < n && !/[\s,\]}:]/.test(text[i]!)) i += 1;
    } else {
      return undefined;
    }
  }
  if (stack.length === 0) return undefined;
  let path = '$';
  let items: Cut['items'];
  for (const frame of stack) {
    if (frame.kind === 'array') {
      items ??= { path, complete: frame.index };
      path = `${path}[${frame.index}]`;
    } else if (frame.key !== undefined) {
      path = path === '$' ? frame.key : `${path}.${frame.key}`;
    }
  }
  return { chars: n, path, ...(items ? { items } : {}) };
}

const LIMIT_FIELD = /^(limit|page_?size|per_?page|max_?(results|items)|count|top|first|size)$/i;

/**
 * A query smaller than the one that was cut, from the tool's own input schema: fewer items per
 * call when it has a limit-like field (as many as were complete before the cut: that one fits), else
 * a filter the call did not set (it asks for less; whether that fits depends on the data).
 * Undefined when the schema offers neither.
 */
function smallerQuery(tool: AnyTool, rawInput: unknown, cut: Cut): string | undefined {
  let schema: Record<string, unknown>;
  try {
    schema = validatorOf(tool.input).jsonSchema();
  } catch {
    return undefined;
  }
  const properties = (schema.properties ?? {}) as Record<string, { type?: unknown; enum?: unknown[] }>;
  const given = typeof rawInput === 'object' && rawInput !== null && !Array.isArray(rawInput) ? (rawInput as Record<string, unknown>) : {};
  const limit = Object.entries(properties).find(([name, p]) => LIMIT_FIELD.test(name) && (p.type === 'integer' || p.type === 'number'));
  if (limit && cut.items && cut.items.complete >= 1) {
    return `A smaller query that fits: ${JSON.stringify({ ...given, [limit[0]]: cut.items.complete })} (${cut.items.complete} item(s) of \`${cut.items.path}\` came through whole before the cut).`;
  }
  const filter = Object.entries(properties).find(([name, p]) => Array.isArray(p.enum) && p.enum.length > 1 && given[name] === undefined);
  if (filter) {
    const [name, p] = filter;
    return `A smaller query that asks for less: ${JSON.stringify({ ...given, [name]: p.enum![0] })} (filter on \`${name}\`, one of ${p.enum!.map((v) => JSON.stringify(v)).join(', ')}, one value at a time; ${cut.items ? `${cut.items.complete} item(s) of \`${cut.items.path}\` fit under the cap` : 'less fits under the cap'}).`;
  }
  return undefined;
}

/**
 * An empty first page that says more is to come: `has_more` (or `hasMore`) true, every list in the
 * answer empty, and no page past the first.
 */
export function isEmptyPageWithMore(output: unknown): boolean {
  if (typeof output !== 'object' || output === null || Array.isArray(output)) return false;
  const o = output as Record<string, unknown>;
  if (o.has_more !== true && o.hasMore !== true) return false;
  if (o.page !== undefined && o.page !== 1) return false;
  if (o.offset !== undefined && o.offset !== 0) return false;
  const lists = Object.values(o).filter(Array.isArray);
  return lists.length > 0 && lists.every((l) => l.length === 0);
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
