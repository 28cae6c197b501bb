/**
 * A tool is defined once and carries its own contract: schemas, effect, idempotency, limits and
 * semantic checks. Tool code runs only inside activities; the workflow sees its manifest.
 */
import type { z } from 'zod';
import type { ToolEffect, ToolManifest } from '../protocol/agent-manifest';
import type { ErrorClass } from '../protocol/tool-error';
import type { ToolQuestionAnswer } from '../protocol/activity-contracts';
import { validatorOf, type ToolSchema } from './schema';

export interface ToolContext {
  /** `<taskId>:<firstRunId>:<n>` (n the task's call number): stable across retries and worker crashes, so a service can dedupe a write. */
  idempotencyKey: string;
  workflowId: string;
  toolUseId: string;
  /** 1 on the first attempt. */
  attempt: number;
  /** Aborted when the activity is cancelled or times out. */
  signal: AbortSignal;
  /**
   * Reports progress that must survive a crash (e.g. `{ page: 7 }`). The worker re-sends the last
   * details on its own timer, so a long tool only calls this when its progress changes; a call
   * without details just says "alive" and keeps the last ones. Local tools have no heartbeat.
   */
  heartbeat(details?: unknown): void;
  /**
   * The details the last attempt of this same call reported through `heartbeat` before it died or
   * failed; undefined on a first attempt or when it reported none. A long tool resumes from here
   * instead of starting over (as Temporal's `heartbeatDetails`, not validated: check its shape).
   */
  previousHeartbeat?: unknown;
  /**
   * People's answers to the questions this call asked before (throw NeedsInputError to ask one), in
   * the order asked; undefined until a question was answered.
   */
  answers?: ToolQuestionAnswer[];
  /**
   * The agent's credentials this call may use (`defineAgent({ credentials: { github: 'vault:github-token' } })`,
   * those the tool names in its `credentials`), resolved from the vault in the activity at this call,
   * so a revoked or rotated entry reaches the next call. Never in history: do not return them or put
   * them in an error message (runTool replaces any that come back with `[credential NAME]`). Set by
   * runTool (`{}` for a tool that gets none); absent only where a test calls the tool directly.
   * docs/credentials.md.
   */
  credentials?: Readonly<Record<string, string>>;
}

/** What a semantic check returns when a valid output is still not a good answer. */
export interface SemanticIssue {
  errorClass: Extract<ErrorClass, 'partial_data' | 'semantic'>;
  code: string;
  detail: string;
  hint: string;
}

/** What a tool's `reconcile` is given: the call's key, what its earlier attempt beat, and the attempt's abort signal. */
export interface ReconcileContext {
  idempotencyKey: string;
  previousHeartbeat?: unknown;
  signal: AbortSignal;
}

/** What a look at the service found about an earlier attempt of a write, with the evidence a person would read. */
export type Reconciliation<O> = { happened: true; output: O; evidence: string } | { happened: false; evidence: string } | { happened: 'unknown'; evidence: string };

export interface ToolConfig<I, O> {
  /** Letters, digits, `_` and `-`, at most 64 characters (the Messages API's rule). */
  name: string;
  description: string;
  input: z.ZodType<I>;
  output: z.ZodType<O>;
  effect: ToolEffect;
  /** True when running it twice with the same input leaves the world as running it once. */
  idempotent: boolean;
  /** Per attempt. Default 30 000 ms. */
  timeoutMs?: number;
  /**
   * Run as a Temporal local activity: on the worker that runs the task, without a round trip through
   * the server's task queue, for tools that answer in milliseconds. There is no heartbeat, so a call
   * whose worker died runs again once the workflow task times out (10 s). Reads and idempotent
   * writes only. Unset: a read runs locally once it has answered within a second on the regular
   * path (src/workflows/base/fast-reads.ts), other tools never. `false`: never.
   */
  local?: boolean;
  /** Attempts on transient errors. Default: 4 for reads and idempotent writes, 2 for a write with `reconcile`, else 1. */
  maxAttempts?: number;
  /** Tools of the same agent to try, in order and with the same input, when this one fails permanently. */
  fallbacks?: string[];
  /**
   * How long an identical read is answered from the task's ledger instead of running again.
   * Default 300 000 ms for reads; writes are never answered from the ledger. 0 for data that changes.
   */
  cacheTtlMs?: number;
  /**
   * The implementation. May return the output object, or raw text (what an HTTP service sent),
   * which the guard parses as JSON and validates against `output`.
   */
  run(input: I, ctx: ToolContext): Promise<O | string>;
  /** Checks that a schema cannot express: partial pages, empty results that should not be. */
  check?(output: O, input: I): SemanticIssue | undefined;
  /**
   * Whether what the call made under `idempotencyKey` still stands (nothing changed or undid it
   * since). Asked before another branch of the task's family reuses that key for the same call, so
   * the service's remembered answer is never taken for an effect that is gone: when it says false,
   * a person is asked instead. Absent: the service's answer to the key is taken as standing.
   */
  stillStands?(idempotencyKey: string, input: I): Promise<boolean>;
  /**
   * For a write that is not idempotent: how to tell, by looking, whether an earlier attempt of this
   * call took effect (its worker died mid-call, its reply was lost). Asked before the call is sent
   * again; `happened: true` settles it as done with what the look found (not sent again),
   * `happened: false` lets it be sent (it never took effect), `'unknown'` leaves it to a person, who
   * is shown the evidence. `previousHeartbeat` is what the earlier attempt reported through
   * `heartbeat` (a tool can beat what it saw before sending: the check compares with it). With a
   * reconcile, such a write gets 2 attempts by default instead of 1 (docs/tool-errors.md).
   */
  reconcile?(input: I, ctx: ReconcileContext): Promise<Reconciliation<O>>;
  /**
   * The agent's credentials this tool reads (names in the agent's `credentials`). Only these are
   * resolved for its calls, so revoking another one does not stop it. Default: none (all of the
   * agent's when the agent sets `credentialsForAllTools: true`).
   */
  credentials?: string[];
}

/**
 * The same contract with schemas of either kind: zod, or a SchemaValidator such as
 * jsonSchemaValidator(...) for a contract written in JSON Schema (tools from MCP servers).
 */
export interface SchemaToolConfig<I, O> extends Omit<ToolConfig<I, O>, 'input' | 'output'> {
  input: ToolSchema<I>;
  output: ToolSchema<O>;
}

export interface ToolDefinition<I = unknown, O = unknown> extends SchemaToolConfig<I, O> {
  readonly manifest: ToolManifest;
}

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
export const DEFAULT_TOOL_TIMEOUT_MS = 30_000;
export const DEFAULT_READ_CACHE_TTL_MS = 300_000;

export function defineTool<I, O>(config: ToolConfig<I, O>): ToolDefinition<I, O> & Pick<ToolConfig<I, O>, 'input' | 'output'>;
export function defineTool<I, O>(config: SchemaToolConfig<I, O>): ToolDefinition<I, O>;
export function defineTool<I, O>(config: SchemaToolConfig<I, O>): ToolDefinition<I, O> {
  if (!TOOL_NAME.test(config.name)) {
    throw new TypeError(`Tool name "${config.name}" must match ${TOOL_NAME} (letters, digits, _ and -, 1-64 chars)`);
  }
  if (!config.description.trim()) throw new TypeError(`Tool "${config.name}" needs a description: the model reads it`);
  const timeoutMs = config.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
  if (!(timeoutMs > 0)) throw new TypeError(`Tool "${config.name}": timeoutMs must be positive`);
  // A write that can be reconciled may be attempted again: the second attempt looks before it sends.
  const maxAttempts = config.maxAttempts ?? (config.effect === 'read' || config.idempotent ? 4 : config.reconcile ? 2 : 1);
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) {
    throw new TypeError(`Tool "${config.name}": maxAttempts must be an integer >= 1`);
  }
  if (config.local && config.effect !== 'read' && !config.idempotent) {
    // A local activity is re-run whole when its workflow task is retried: no place for a write that must not repeat.
    throw new TypeError(`Tool "${config.name}": a non-idempotent write cannot be local`);
  }
  const manifest: ToolManifest = {
    name: config.name,
    description: config.description,
    inputSchema: inputJsonSchema(config.input),
    effect: config.effect,
    idempotent: config.idempotent,
    timeoutMs,
    maxAttempts,
    fallbacks: config.fallbacks ?? [],
    cacheTtlMs: config.effect === 'read' ? (config.cacheTtlMs ?? DEFAULT_READ_CACHE_TTL_MS) : 0,
    // Absent unless set, so manifests recorded before local tools existed read the same.
    ...(config.local !== undefined ? { local: config.local } : {}),
  };
  return { ...config, manifest };
}

function inputJsonSchema(schema: ToolSchema<unknown>): Record<string, unknown> {
  // The Messages API wants a bare object schema; the $schema marker only adds tokens (both validators drop it).
  const json = validatorOf(schema).jsonSchema();
  if (json.type !== 'object') throw new TypeError('A tool input schema must be a z.object(...) or a JSON Schema of type "object"');
  return json;
}
