/**
 * One store tool call as a careful application on any peer makes it: the input validated by the
 * tool's schema, a timeout on the request, and the answer sorted into what goes back to the model
 * and what the peer's own retry mechanism should retry. The peers differ in how they retry (a
 * LangGraph node's RetryPolicy, a DBOS step's retries), not in this.
 */
import { STORE_TOOL_INPUTS, callStore, type StoreToolName } from '../../reliability/store-tools';

/** A failure worth another attempt: the peer's retry policy matches this class. */
export class RetryableToolError extends Error {
  override name = 'RetryableToolError';
  constructor(
    message: string,
    /** From Retry-After, when the store sent one (a retry policy may or may not honour it). */
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

export interface ToolAnswer {
  content: string;
  isError: boolean;
}

/** Statuses that say "later": rate limited, overloaded, unavailable, a repeat of a write still being handled. */
const RETRYABLE_STATUS = new Set([408, 409, 429, 500, 502, 503, 504, 529]);
/**
 * The per-call timeout every engine of the suite gets (TOOL_TIMEOUT_MS of engines/durable-agents.ts,
 * not imported: that module would load durable-agent's own code into the peer's worker process).
 */
export const STORE_CALL_TIMEOUT_MS = 3_000;

/**
 * Calls `tool`; `idempotencyKey` goes with writes (the peers' docs ask that side effects be made
 * idempotent, and this store honours the header). Throws RetryableToolError for a transient failure;
 * anything else becomes the tool result the model reads.
 */
export async function storeCall(storeUrl: string, tool: StoreToolName, rawInput: unknown, idempotencyKey?: string): Promise<ToolAnswer> {
  const parsed = STORE_TOOL_INPUTS[tool].safeParse(rawInput);
  if (!parsed.success) return { content: `Invalid input for ${tool}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`, isError: true };
  let answer: Awaited<ReturnType<typeof callStore>>;
  try {
    answer = await callStore(storeUrl, tool, parsed.data as Record<string, unknown>, { ...(idempotencyKey ? { idempotencyKey } : {}), signal: AbortSignal.timeout(STORE_CALL_TIMEOUT_MS) });
  } catch (err) {
    // A timeout, a reset or a refused connection: the request may or may not have reached the store.
    throw new RetryableToolError(`${tool}: ${(err as Error).name}: ${(err as Error).message}`);
  }
  if (RETRYABLE_STATUS.has(answer.status)) {
    const seconds = Number(answer.headers['retry-after']);
    throw new RetryableToolError(`${tool}: HTTP ${answer.status}`, Number.isFinite(seconds) ? seconds * 1000 : undefined);
  }
  return { content: answer.body, isError: answer.status >= 400 };
}
