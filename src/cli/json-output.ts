/**
 * The shapes scripts read from `status --json`, `list --json` and `result --json`, as zod schemas.
 * The published JSON Schemas (schemas/*.schema.json) are generated from these
 * (scripts/write-schemas.ts), and the type checks at the bottom make tsc refuse any difference
 * between a schema and the TypeScript type the CLI prints, so neither can drift from the other.
 */
import { z } from 'zod';
import type { ArchivedEntry, TaskSummary, TaskView } from '../client/task-client';
import type { TaskResult } from '../protocol/task';
import type { ToolError } from '../protocol/tool-error';
import { ERROR_CLASSES } from '../protocol/tool-error';
import { AGENT_STATUSES } from '../protocol/task';

const count = z.number().int().min(0);

const toolError = z
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

const usage = z
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
const escalation = z
  .strictObject({
    id: z.string(),
    level: z.enum(['auto', 'inform', 'confirm', 'block']),
    code: z.string(),
    reason: z.string(),
    turn: count,
    at: z.string(),
    resolved: z.strictObject({ by: z.string(), at: z.string(), how: z.string() }).optional(),
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
};
const approvalRequest = z.strictObject(approvalFields).meta({ id: 'ApprovalRequest' });
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
const branchPoint = z.strictObject({ taskId: z.string(), turn: count, via: z.literal('delegation').optional() }).meta({ id: 'BranchPoint' });
const event = z
  .strictObject({
    seq: count,
    at: z.string(),
    kind: z.enum([
      'task_started',
      'task_forked',
      'model_replied',
      'tool_called',
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
    ]),
    turn: count,
    tool: z.string().optional(),
    toolUseId: z.string().optional(),
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

export const taskResultJson = z
  .strictObject({
    outcome: z.enum(['answered', 'max_turns', 'budget_exhausted', 'refused', 'max_tokens', 'cancelled']),
    text: z.string(),
    turns: count,
    toolCalls: count,
    usage,
    costUsd: z.number(),
    model: z.string(),
    finalCallWithoutTools: z.boolean().optional(),
    delegated: spend.optional(),
  })
  .meta({ id: 'TaskResult', title: 'TaskResult', description: "A closed task's result: `durable-agent result TASK_ID --json` when the task did not fail." });

const taskStatus = z
  .strictObject({
    agent: z.string(),
    untakenDecisions: count.optional().meta({ description: 'Decisions sent as signals in this run that changed nothing (the first 100 are in `decisions`).' }),
    phase: z.enum(['starting', 'running', 'calling_model', 'running_tools', 'awaiting_approval', 'blocked', 'completed', 'failed', 'cancelled']),
    agentStatus,
    model: z.string(),
    turn: count,
    budgets: z.strictObject({
      turns: reading,
      toolCalls: reading,
      toolCallsPerTurn: z.number(),
      correctionsPerTool: z.number(),
      tokens: reading.optional(),
      costUsd: reading.optional(),
    }),
    unpricedModels: z.array(z.string()),
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
  })
  .meta({ id: 'TaskSummary', title: 'TaskSummary', description: 'One task as `list` shows it, from its search attributes and memo.' });

export const taskViewJson = z
  .strictObject({
    summary: taskSummaryJson,
    status: taskStatus.optional().meta({ description: 'The live status, when a worker answered the query.' }),
    result: taskResultJson.optional(),
    failure: toolError.optional(),
    note: z.string().optional().meta({ description: 'Why `status` is missing, when it is.' }),
    forks: z.array(branchPoint).optional().meta({ description: 'The tasks forked from this one, each with the turn it started from.' }),
    toolProgress: z.array(z.strictObject({ tool: z.string(), progress: z.number(), total: z.number().optional(), message: z.string().optional() })).optional(),
    nested: z
      .array(
        z.strictObject({
          taskId: z.string(),
          path: z.array(z.string()),
          agentStatus: z.string().optional(),
          approvals: z.array(z.strictObject({ id: z.string(), tool: z.string(), effect: z.string(), reason: z.string(), expiresAt: z.string() })),
          block: z.strictObject({ id: z.string(), code: z.string(), reason: z.string() }).nullable(),
        }),
      )
      .optional()
      .meta({ description: "What the task's running sub-agent children (and theirs) wait for from a person." }),
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

/** The published schemas, by file name under schemas/. */
export const PUBLISHED_SCHEMAS = {
  'status.schema.json': taskViewJson,
  'list.schema.json': taskListJson,
  'result.schema.json': resultOutputJson,
} as const;

// ---- tsc refuses a schema that differs from the type the CLI prints (JSON turns a Date into a string).
type Jsonified<T> = T extends Date ? string : T extends (infer U)[] ? Jsonified<U>[] : T extends object ? { [K in keyof T]: Jsonified<T[K]> } : T;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sameView: Same<z.infer<typeof taskViewJson>, Jsonified<TaskView & { archived?: ArchivedEntry[] }>> = true;
const sameList: Same<z.infer<typeof taskListJson>, Jsonified<TaskSummary[]>> = true;
const sameResult: Same<z.infer<typeof resultOutputJson>, TaskResult | { failure: ToolError }> = true;
void [sameView, sameList, sameResult];

/** The text of each published schema file, as scripts/write-schemas.ts writes it and a test compares it. */
export function publishedSchemaFiles(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(PUBLISHED_SCHEMAS).map(([file, schema]) => [file, `${JSON.stringify({ $id: `durable-agent/schemas/${file}`, ...z.toJSONSchema(schema, { io: 'output' }) }, null, 2)}\n`]),
  );
}
