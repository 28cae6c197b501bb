/**
 * The shapes scripts read from `status --json`, `list --json` and `result --json`, as zod schemas.
 * The published JSON Schemas (schemas/*.schema.json) are generated from these
 * (scripts/write-schemas.ts), and the type checks at the bottom make tsc refuse any difference
 * between a schema and the TypeScript type the CLI prints, so neither can drift from the other.
 */
import { z } from 'zod';
import type { ArchivedEntry, TaskSummary, TaskView } from '../client/task-client';
import type { NestedPending } from '../client/child-tasks';
import type { TaskResult } from '../protocol/task';
import type { ToolError } from '../protocol/tool-error';
import { ERROR_CLASSES } from '../protocol/tool-error';
import { AGENT_STATUSES, TASK_OUTCOMES } from '../protocol/task';
import type { ModelProgress } from '../protocol/messages';
import { safeJson } from './render';

export const count = z.number().int().min(0);

export const toolError = z
  .strictObject({
    error_class: z.enum(ERROR_CLASSES),
    code: z.string(),
    detail: z.string(),
    hint: z.string().optional(),
    retryable: z.boolean(),
    attempts: count,
    budget_left: z.number().optional(),
  })
  .meta({ id: 'ToolError', title: 'ToolError', description: 'The one error value of the taxonomy (docs/architecture.md).' });

export const usage = z
  .strictObject({
    inputTokens: count,
    outputTokens: count,
    cacheWriteTokens: count.optional(),
    cacheReadTokens: count.optional(),
  })
  .meta({ id: 'Usage' });

const agentStatus = z.enum(AGENT_STATUSES as [TaskSummary['agentStatus'] & string, ...(TaskSummary['agentStatus'] & string)[]]);
const effect = z.enum(['read', 'write', 'destructive']);
const approverRules = z.strictObject({
  tools: z.record(z.string(), z.array(z.string())).optional(),
  read: z.array(z.string()).optional(),
  write: z.array(z.string()).optional(),
  destructive: z.array(z.string()).optional(),
  unblock: z.array(z.string()).optional(),
  message: z.array(z.string()).optional(),
  branch: z.array(z.string()).optional(),
});
const identity = z
  .strictObject({
    id: z.string(),
    roles: z.array(z.string()),
    verified: z.boolean(),
    keyId: z.string().optional(),
    problem: z.string().optional(),
  })
  .meta({ id: 'VerifiedIdentity' });
export const escalation = z
  .strictObject({
    id: z.string(),
    level: z.enum(['auto', 'inform', 'confirm', 'block']),
    code: z.string(),
    reason: z.string(),
    turn: count,
    at: z.string(),
    resolved: z.strictObject({ by: z.string(), at: z.string(), how: z.string() }).optional(),
    bound: z.strictObject({ agentVersion: z.string() }).optional().meta({
      description: 'A block: the agent version it was raised under. An unblock that meets another version is refused, and the block is raised again (code agent_changed) with the difference.',
    }),
  })
  .meta({ id: 'Escalation' });
const approvalFields = {
  id: z.string(),
  tool: z.string(),
  toolUseId: z.string(),
  input: z.unknown(),
  inputHash: z.string(),
  effect,
  reason: z.string(),
  turn: count,
  requestedAt: z.string(),
  expiresAt: z.string(),
  onExpiry: z.enum(['deny', 'block']),
  question: z.strictObject({ server: z.string(), message: z.string(), requestedSchema: z.record(z.string(), z.unknown()) }).optional(),
  onBehalfOf: z
    .string()
    .optional()
    .meta({ description: 'The verified person who started the task: the call runs on their behalf, with their own vault credentials where they have them (docs/credentials.md).' }),
  bound: z.strictObject({ agentVersion: z.string(), toolContract: z.string() }).optional().meta({
    description: "What the decision binds: the agent version and the tool's contract hash when asked; a tool changed by the time the call would run is asked about again (docs/guarantees.md).",
  }),
};
export const approvalRequest = z.strictObject(approvalFields).meta({ id: 'ApprovalRequest' });
const approvalRecord = z
  .strictObject({
    ...approvalFields,
    decision: z.enum(['approved', 'denied', 'expired']),
    by: z.string(),
    decidedAt: z.string(),
    comment: z.string().optional(),
    denyReason: z.string().optional(),
    editedInput: z.unknown().optional(),
    identity: identity.optional(),
  })
  .meta({ id: 'ApprovalRecord' });
const decision = z.strictObject({
  at: z.string(),
  by: z.string(),
  action: z.enum(['unblock', 'message', 'approve', 'deny']),
  detail: z.string(),
  outcome: z.enum(['applied', 'refused', 'superseded']).optional().meta({
    description:
      'What became of the decision, in the words the verbs that send one use: applied (the task took it; a message joined the conversation), refused (it broke a rule; a message kept from the model) or superseded (a decision sent as a signal whose approval or block was already answered).',
  }),
  identity: identity.optional(),
});
export const branchPoint = z.strictObject({ taskId: z.string(), turn: count, via: z.literal('delegation').optional(), firstRunId: z.string().optional() }).meta({ id: 'BranchPoint' });
export const event = z
  .strictObject({
    seq: count,
    at: z.string(),
    kind: z.enum([
      'task_started',
      'task_forked',
      'model_replied',
      'tool_called',
      'tool_classified',
      'tool_succeeded',
      'tool_failed',
      'approval_requested',
      'approval_decided',
      'informed',
      'task_blocked',
      'task_unblocked',
      'decision_refused',
      'guidance_added',
      'task_completed',
      'task_failed',
      'task_cancelled',
      'version_changed',
      'model_fallback',
      'answer_graded',
    ]),
    turn: count,
    tool: z.string().optional(),
    toolUseId: z.string().optional(),
    credentialsOf: z.string().optional(),
    detail: z.string(),
  })
  .meta({ id: 'TaskEvent' });
const reading = z
  .strictObject({
    used: z.number(),
    limit: z.number(),
    left: z.number(),
    held: z.number().optional().meta({ description: "What the task's running sub-agent children hold of it (their slices); counted out of `left`." }),
  })
  .meta({ id: 'BudgetReading' });
const spend = z
  .strictObject({ turns: count, toolCalls: count, usage: z.strictObject({ inputTokens: count, outputTokens: count, cacheWriteTokens: count, cacheReadTokens: count }), costUsd: z.number() })
  .meta({ id: 'DelegatedSpend', description: "What a task's sub-agent children spent, their own children's included." });
const slice = z.strictObject({ turns: count, toolCalls: count, tokens: count.optional(), costUsd: z.number().optional() });
const child = z
  .strictObject({
    taskId: z.string(),
    agent: z.string(),
    toolUseId: z.string(),
    state: z.enum(['waiting', 'running', 'completed', 'failed', 'cancelled']),
    slice,
    spent: spend.optional(),
  })
  .meta({ id: 'ChildTask', description: "A sub-agent's child task as its parent counts it." });

/** One grade of a graded outcome (docs/outcomes.md). */
export const gradeJson = z
  .strictObject({
    attempt: count,
    turn: count,
    pass: z.boolean(),
    score: z.number().min(0).max(1).optional(),
    reasons: z.string(),
    model: z.string(),
    usage,
    costUsd: z.number().optional(),
    at: z.string(),
  })
  .meta({ id: 'Grade', description: "The grader's verdict on one answer, with what grading it cost." });

/** A graded task's outcome in status (docs/outcomes.md). */
export const outcomeStatusJson = z
  .strictObject({
    maxAttempts: count,
    attempts: count,
    grades: z.array(gradeJson),
    usage,
    costUsd: z.number(),
    passed: z.boolean().optional(),
    notGraded: z.string().optional(),
  })
  .meta({ id: 'OutcomeStatus', description: 'Attempts, every grade and what the grader spent (also counted in the task usage and cost).' });

export const taskResultJson = z
  .strictObject({
    outcome: z.enum(TASK_OUTCOMES as [TaskResult['outcome'], ...TaskResult['outcome'][]]),
    text: z.string(),
    turns: count,
    toolCalls: count,
    usage,
    costUsd: z.number(),
    model: z.string(),
    finalCallWithoutTools: z.boolean().optional(),
    delegated: spend.optional(),
    grades: z.array(gradeJson).optional(),
  })
  .meta({ id: 'TaskResult', title: 'TaskResult', description: "A closed task's result: `durable-agent result TASK_ID --json` when the task did not fail." });

const contextSpend = z.strictObject({ count, usage, costUsd: z.number(), lastTurn: count.optional().meta({ description: 'The turn of the last one.' }) });
const contextState = z
  .strictObject({
    strategy: z.enum(['auto', 'trim']).meta({
      description:
        "'auto': native compaction where the model has it, else a summary of the turns that leave, trimming only when the summary failed or its budget is spent; 'trim': the sliding window.",
    }),
    native: z.boolean().optional().meta({ description: 'false once the model said it has no native compaction (the summary takes over).' }),
    triggerTokens: count.meta({ description: 'The input tokens at which the API compacts (native compaction).' }),
    compactions: contextSpend,
    summaries: contextSpend.extend({ failed: count }),
    trims: count.meta({ description: 'Times turns left without a summary (the last resort).' }),
  })
  .meta({ id: 'ContextState', description: 'How the task keeps its conversation in the context window, and what compaction and summaries cost (docs/context.md).' });

const fallbackStatus = z
  .strictObject({
    fallbacks: z.array(z.string()).meta({ description: "The task's fallback models, in order." }),
    current: z.string().meta({ description: 'The model calls go to now.' }),
    model: z.string().optional().meta({ description: "The fallback answering now; absent while the task's own model does." }),
    switches: z.array(
      z.strictObject({
        at: z.string(),
        turn: count,
        from: z.string(),
        to: z.string(),
        reason: z.enum(['overloaded', 'rate_limited', 'not_served']),
        code: z.string(),
        detail: z.string(),
      }),
    ),
    skipped: z.array(z.strictObject({ at: z.string(), turn: count, model: z.string(), reason: z.string() })),
  })
  .meta({ id: 'FallbackStatus', description: 'Only for a task with fallback models: the model answering now and every move to the next one (docs/model-fallback.md).' });

const taskStatus = z
  .strictObject({
    agent: z.string(),
    untakenDecisions: count.optional().meta({ description: 'Decisions sent as signals in this run that changed nothing (the first 100 are in `decisions`).' }),
    phase: z.enum(['starting', 'running', 'calling_model', 'running_tools', 'grading', 'awaiting_approval', 'blocked', 'completed', 'failed', 'cancelled']),
    agentStatus,
    model: z.string(),
    turn: count,
    context: contextState.optional(),
    budgets: z.strictObject({
      turns: reading,
      toolCalls: reading,
      toolCallsPerTurn: z.number(),
      correctionsPerTool: z.number(),
      tokens: reading.optional(),
      costUsd: reading.optional(),
      summaryTokens: reading.optional().meta({ description: "The summary calls' own token budget, once the task has made one." }),
      summaryCostUsd: reading.optional().meta({ description: "The summary calls' own cost budget, once the task has made one (priced models only)." }),
      recoveryCalls: reading.optional().meta({ description: 'Calls run again to recover from faults, against the budget that asks a person (set only when the task has one).' }),
      recoveryCostUsd: reading.optional().meta({ description: "USD of lost model-call attempts (estimated), against the task's recovery cost budget (set only when it has one)." }),
    }),
    unpricedModels: z.array(z.string()),
    recovery: z.strictObject({ callsRepeated: count, tokensAgain: count, costUsdAgain: z.number(), waitedMs: count }).optional().meta({
      description:
        "What recovering from faults cost the task's own calls: attempts beyond the first (retries, re-reads), tokens that lost model attempts had used (estimated from their last heartbeat) and their USD, and the time between first attempts and the ones that answered. Absent when nothing needed recovering.",
    }),
    fallback: fallbackStatus.optional(),
    toolCalls: z.strictObject({ total: count, succeeded: count, failed: count }),
    pendingApprovals: z.array(approvalRequest),
    approvals: z.array(approvalRecord),
    escalations: z.array(escalation),
    decisions: z.array(decision),
    approvers: z
      .strictObject({
        verification: z.enum(['signed', 'unverified']),
        keyIds: z.array(z.string()),
        rules: approverRules.optional(),
        forbidSelfApproval: z.boolean().optional(),
      })
      .optional(),
    starter: identity.optional(),
    blocked: escalation.optional(),
    lastError: toolError.optional(),
    usage,
    costUsd: z.number(),
    delegated: spend.optional(),
    children: z.array(child).optional(),
    archive: z
      .strictObject({
        scope: z.string(),
        markers: z.array(z.string()),
        pending: z.array(z.strictObject({ kind: z.string(), entry: z.unknown() })),
      })
      .optional(),
    events: z.array(event),
    eventCount: count,
    lineage: z.array(branchPoint).optional().meta({
      description: "The task's ancestry, nearest first: the task and turn a fork or rewind started from, or (via: delegation) the task that delegated to it and in which turn, then that task's own.",
    }),
    agentVersion: z.string().optional().meta({ description: "The agent definition's version this run runs with: a hash of system prompt, model, tool names and schemas, policy and budgets." }),
    build: z
      .strictObject({ deploymentName: z.string(), buildId: z.string() })
      .optional()
      .meta({ description: 'The Worker Deployment build this run is on (Pinned: it finishes there, or moves at a continue-as-new); absent when unversioned.' }),
    outcome: outcomeStatusJson.optional(),
    result: taskResultJson.optional(),
  })
  .meta({ id: 'TaskStatus', description: "The `status` query's answer: phase, turn, budgets, tool calls, approvals, events." });

export const taskSummaryJson = z
  .strictObject({
    taskId: z.string(),
    runId: z.string(),
    agent: z.string().optional(),
    agentStatus: agentStatus.optional(),
    executionStatus: z.string().meta({ description: "Temporal's own execution status: RUNNING, COMPLETED, FAILED, ..." }),
    startTime: z.string().meta({ description: 'ISO 8601' }),
    closeTime: z.string().optional(),
    waitingFor: z.string().optional(),
    taskQueue: z.string().optional().meta({ description: "The task's queue (its agent's, unless overridden)." }),
    note: z.string().optional().meta({ description: 'For a running task that no worker polls for: "no worker serves agent X on queue Q".' }),
    parentTask: z.string().optional().meta({ description: "A sub-agent's child task: the task that started it, as Temporal records it." }),
    forkedFrom: z.string().optional().meta({ description: 'TASK@N: the task and turn this one was forked from (the ForkedFrom search attribute).' }),
    build: z
      .string()
      .optional()
      .meta({ description: "The Worker Deployment build the run is on (a pinned override's, else the one it runs on), from the execution's versioning info; absent when unversioned." }),
    agentVersion: z
      .string()
      .optional()
      .meta({ description: "The agent version the task's current run took from its worker (the run's memo); absent before its first workflow task, or for a task of an older build." }),
  })
  .meta({ id: 'TaskSummary', title: 'TaskSummary', description: 'One task as `list` shows it, from its search attributes and memo.' });

/** What a sub-agent child task (at any depth) waits for from a person. */
export const nestedPendingJson = z
  .strictObject({
    taskId: z.string(),
    path: z.array(z.string()),
    agentStatus: z.string().optional(),
    approvals: z.array(z.strictObject({ id: z.string(), tool: z.string(), effect: z.string(), reason: z.string(), expiresAt: z.string() })),
    block: z.strictObject({ id: z.string(), code: z.string(), reason: z.string() }).nullable(),
  })
  .meta({ id: 'NestedPending' });

export const taskViewJson = z
  .strictObject({
    summary: taskSummaryJson,
    status: taskStatus.optional().meta({ description: 'The live status, when a worker answered the query.' }),
    result: taskResultJson.optional(),
    failure: toolError.optional(),
    note: z.string().optional().meta({ description: 'Why `status` is missing, when it is.' }),
    forks: z.array(branchPoint).optional().meta({ description: 'The tasks forked from this one, each with the turn it started from.' }),
    toolProgress: z.array(z.strictObject({ tool: z.string(), progress: z.number(), total: z.number().optional(), message: z.string().optional() })).optional(),
    nested: z.array(nestedPendingJson).optional().meta({ description: "What the task's running sub-agent children (and theirs) wait for from a person." }),
    archived: z
      .array(z.strictObject({ kind: z.string(), entry: z.unknown() }))
      .optional()
      .meta({ description: 'Only with `--all`: the audit entries the task archived to its blob store.' }),
  })
  .meta({ title: 'TaskView', description: '`durable-agent status TASK_ID --json`: what can be known of a task now.' });

export const taskListJson = z.array(taskSummaryJson).meta({ title: 'TaskList', description: '`durable-agent list --json`.' });

export const resultOutputJson = z
  .union([taskResultJson, z.strictObject({ failure: toolError })])
  .meta({ title: 'ResultOutput', description: '`durable-agent result TASK_ID --json`: the result, or `{ failure }` (exit code 1) when the task failed.' });

export const startedJson = z
  .strictObject({ taskId: z.string(), runId: z.string(), taskQueue: z.string() })
  .meta({ title: 'Started', description: '`durable-agent start ... --json` (without --watch): the task it started and its queue.' });

const progress = z.strictObject({ outputChars: count, thinkingChars: count, tail: z.string() }).meta({ id: 'ModelProgress', description: 'The model answer streaming in now.' });

/** One line of `watch --json` (and of `start --watch --json`, `demo --json`): JSON Lines, one object with one key each. */
export const watchLineJson = z
  .union([
    z.strictObject({ event }),
    z.strictObject({ approval: approvalRequest }),
    z.strictObject({ blocked: escalation }),
    z.strictObject({ nested: nestedPendingJson }),
    z.strictObject({ progress }),
    z.strictObject({ result: taskResultJson }),
    z
      .strictObject({ failure: toolError.optional() })
      .meta({ description: 'The last line of a task that did not answer (exit 1); `{}` when it closed without an error (cancelled, terminated, timed out).' }),
  ])
  .meta({
    title: 'WatchLine',
    description: '`durable-agent watch TASK_ID --json`, `start --watch --json`, `demo --json`: JSON Lines, each line one of these. The last line is `result` (exit 0) or `failure` (exit 1).',
  });

/** One line of `watch --json`, as the watch schema describes it: tsc checks the value against the schema's type. */
export function watchLine(line: z.output<typeof watchLineJson>): string {
  return JSON.stringify(line);
}

/** Prints `value` as the JSON `schema` describes: tsc checks the value against the schema's type. */
export function printJson<S extends z.ZodType>(_schema: S, value: z.output<S>, indent?: number): void {
  console.log(safeJson(value, indent));
}

// ---- tsc refuses a schema that differs from the type the CLI prints (JSON turns a Date into a string).
type Flat<T> = { [K in keyof T]: T[K] };
/** The keys whose value may be undefined: JSON leaves them out, so they are optional in what is printed. */
type MaybeKeys<T> = { [K in keyof T]-?: undefined extends T[K] ? (unknown extends T[K] ? never : K) : never }[keyof T];
/** What JSON.stringify makes of a type: dates are strings, a key whose value may be undefined may be missing. */
export type Jsonified<T> = T extends Date
  ? string
  : T extends readonly (infer U)[]
    ? Jsonified<U>[]
    : T extends object
      ? Flat<{ [K in keyof T as K extends MaybeKeys<T> ? never : K]: Jsonified<T[K]> } & { [K in keyof T as K extends MaybeKeys<T> ? K : never]?: Jsonified<Exclude<T[K], undefined>> }>
      : T;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** Every key of every object, optional or not, as a required key: two types whose key sets differ anywhere (an optional field one of them lacks) are not the Same. */
type Keys<T> = T extends readonly (infer U)[] ? Keys<U>[] : T extends object ? { [K in keyof T]-?: Keys<NonNullable<T[K]>> } : 'leaf';
/** The same type, and the same fields, optional ones included, at every depth. */
export type Exact<A, B> = Same<A, B> extends true ? Same<Keys<A>, Keys<B>> : false;
const sameView: Exact<z.infer<typeof taskViewJson>, Jsonified<TaskView & { archived?: ArchivedEntry[] }>> = true;
const sameList: Exact<z.infer<typeof taskListJson>, Jsonified<TaskSummary[]>> = true;
const sameResult: Exact<z.infer<typeof resultOutputJson>, TaskResult | { failure: ToolError }> = true;
const sameProgress: Exact<z.infer<typeof progress>, ModelProgress> = true;
const sameNested: Exact<z.infer<typeof nestedPendingJson>, Jsonified<NestedPending>> = true;
void [sameView, sameList, sameResult, sameProgress, sameNested];
