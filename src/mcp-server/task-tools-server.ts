/**
 * durable-agent as an MCP server: an MCP client (Claude Code, Claude Desktop, any agent) starts
 * durable tasks, reads their status and result, and answers their approvals. Every decision goes
 * through TaskClient.decide, so the task's own rules decide who may approve what (verified approvers
 * when the worker trusts signing keys); this server only says who is asking. Nothing here waits on
 * a worker: what is pending comes from the task's memo when no worker answers, and a decision no
 * worker takes within a second is recorded for the task to take when one runs it (`recorded: true`).
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { TaskNotFoundError, TaskRejectedError, type TaskClient } from '../client/task-client';
import { AGENT_NAME_PATTERN } from '../protocol/definitions';
import type { ApprovalRequest, ModelChoice, TaskInput, TaskStatus } from '../protocol/task';
import type { BlobStore } from '../blobs/blob-store';
import { ApprovalArguments, argumentsProblemOf, storedAsOf } from '../client/approval-arguments';
import { pendingAtRest, type ApprovalAtRest } from '../client/pending-at-rest';
import { nestedLabel, nestingOf } from '../client/child-tasks';
import type { DecisionOutcome } from '../client/send-decision';

/** How long a status query may wait for a worker before the memo is read instead. */
const STATUS_DEADLINE_MS = 3_000;
import { DurableAgentError } from '../errors/durable-agent-error';

export interface TaskToolsIdentity {
  /** Who answers approvals through this server (recorded with each decision). */
  by: string;
  roles: string[];
}

export interface TaskToolsServerOptions {
  client: TaskClient;
  /** Without one, the answering tools refuse: a decision must say who took it. */
  identity?: TaskToolsIdentity;
  version: string;
  /** The workers' blob store: long arguments travel there, and are read from it so the caller sees what it approves. */
  blobStore?: BlobStore;
}

/** How long `task_result` may wait for a task to close, at most. */
export const MAX_RESULT_WAIT_SECONDS = 60;

const taskId = z.string().min(1).max(200).describe('The task id (a Temporal workflow id).');
const approvalId = z.string().min(1).max(200).describe('The approval id, from task_status or list_pending_approvals.');

export function createTaskToolsServer(options: TaskToolsServerOptions): McpServer {
  const { client, identity } = options;
  const stored = new ApprovalArguments(client.client, options.blobStore);
  const server = new McpServer({ name: 'durable-agent', version: options.version });

  server.registerTool(
    'start_task',
    {
      title: 'Start a durable agent task',
      description: 'Starts a long-running agent task on Temporal and returns its id at once. Follow it with task_status and task_result.',
      inputSchema: {
        agent: z.string().min(1).max(200).describe('The agent to run (the built-in one is "demo").'),
        prompt: z.string().min(1).max(100_000).describe('What the agent should do.'),
        model: z.string().min(1).max(200).optional().describe("A Claude model id; default: the agent's or the worker's."),
        script: z.string().min(1).max(4_096).optional().describe('A model script file the worker may read (testing; exclusive with model).'),
        task_id: z.string().min(1).max(200).optional().describe('An id of your choosing; default: a new one.'),
        max_turns: z.number().int().min(1).max(10_000).optional(),
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    async (args) =>
      answer(async () => {
        if (args.model && args.script) throw new UsageProblem('give model or script, not both');
        // The name becomes the task queue's: refused here in the caller's terms, not as a server error.
        if (!client.taskQueue && !AGENT_NAME_PATTERN.test(args.agent)) throw new UsageProblem('agent: a name is 1-64 letters, digits, ".", "_" or "-"');
        const model: ModelChoice | undefined = args.script ? { provider: 'scripted', script: args.script } : args.model ? { provider: 'anthropic', model: args.model } : undefined;
        const input: TaskInput = {
          agent: args.agent,
          prompt: args.prompt,
          ...(model ? { model } : {}),
          ...(args.max_turns ? { maxTurns: args.max_turns } : {}),
          startedBy: identity?.by ?? 'mcp',
        };
        const handle = await client.start(input, args.task_id ? { taskId: args.task_id } : {}).catch((err: Error) => {
          if (err.name === 'WorkflowExecutionAlreadyStartedError') throw new UsageProblem(`a task with id "${args.task_id}" already exists`);
          throw err;
        });
        const taskQueue = client.queueFor(input.agent);
        const note = await client.waitingNote(input.agent, taskQueue, handle.workflowId);
        return { task_id: handle.workflowId, run_id: handle.firstExecutionRunId, task_queue: taskQueue, ...(note ? { note } : {}) };
      }),
  );

  server.registerTool(
    'task_status',
    {
      title: "Read a task's status",
      description: 'What the task is doing: its status, turns, cost, pending approvals (with their exact arguments) and why it is blocked, if it is.',
      inputSchema: { task_id: taskId },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args) =>
      answer(async () => {
        const view = await client.view(args.task_id);
        if (view.status) view.status = await stored.resolveStatus(args.task_id, view.status);
        return statusView(args.task_id, view);
      }),
  );

  server.registerTool(
    'task_result',
    {
      title: "Read a task's result",
      description: `The task's final answer once it has closed. Waits up to wait_seconds (at most ${MAX_RESULT_WAIT_SECONDS}) for a running task, then says it is still running.`,
      inputSchema: { task_id: taskId, wait_seconds: z.number().min(0).max(MAX_RESULT_WAIT_SECONDS).optional() },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args) =>
      answer(async () => {
        const waitMs = (args.wait_seconds ?? 0) * 1000;
        const closed = await Promise.race([
          client.result(args.task_id).then((result) => ({ closed: true as const, result })),
          new Promise<{ closed: false }>((resolve) => setTimeout(() => resolve({ closed: false }), waitMs).unref()),
        ]);
        if (closed.closed) return { task_id: args.task_id, closed: true, result: closed.result };
        const summary = await client.describe(args.task_id);
        return { task_id: args.task_id, closed: false, agent_status: summary.agentStatus, note: 'still running: call again later, or read task_status' };
      }),
  );

  server.registerTool(
    'list_pending_approvals',
    {
      title: 'List the approvals waiting for a person',
      description:
        'Every pending approval across the namespace: the task, the tool, the exact arguments, the effect, the reason and when it expires. A sub-agent\'s child task says which task it works for (parent_task, and nested: "TASK › researcher: tool"); approve it by its own task_id or by the parent\'s.',
      inputSchema: { agent: z.string().min(1).max(200).optional(), limit: z.number().int().min(1).max(200).optional() },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args) =>
      answer(async () => {
        const tasks = await client.list({ status: 'awaiting_approval', limit: args.limit ?? 50, ...(args.agent ? { agent: args.agent } : {}) });
        const approvals = [];
        for (const task of tasks) {
          // A sub-agent's child task is named under the task it works for: `TASK › researcher: delete_file`.
          const nesting = await nestingOf(client.client, task).catch(() => undefined);
          const nested = (tool: string) => (nesting ? { parent_task: task.parentTask, nested: nestedLabel(nesting.top, nesting, tool) } : {});
          const live = await liveStatus(task.taskId);
          if (live) {
            const status = await stored.resolveStatus(task.taskId, live);
            for (const a of status.pendingApprovals) approvals.push({ task_id: task.taskId, agent: task.agent, ...nested(a.tool), ...approvalView(a) });
            continue;
          }
          // No worker answered: the memo still says what waits, and a decision on it is recorded.
          const atRest = await pendingAtRest(client.client, stored, task.taskId).catch(() => undefined);
          for (const a of atRest?.approvals ?? []) approvals.push({ task_id: task.taskId, agent: task.agent, ...nested(a.tool), ...atRestView(a), note: NO_WORKER_NOTE });
        }
        return { approvals };
      }),
  );

  /** The status when a worker answers within the deadline, else undefined. */
  async function liveStatus(id: string): Promise<TaskStatus | undefined> {
    return client.client.connection.withDeadline(Date.now() + STATUS_DEADLINE_MS, () => client.status(id)).catch(() => undefined);
  }

  const requireIdentity = (): TaskToolsIdentity => {
    if (!identity) throw new UsageProblem('this server was started without --as NAME: it cannot record who decided, so it answers no approvals');
    return identity;
  };

  server.registerTool(
    'approve',
    {
      title: 'Approve a pending tool call',
      description: "Lets the pending call run, optionally with edited arguments (checked against the tool's schema by the task). The decision is recorded with this server's identity.",
      inputSchema: {
        task_id: taskId,
        approval_id: approvalId,
        edited_arguments: z.record(z.string(), z.unknown()).optional().describe('Run these arguments instead; the model is told.'),
        comment: z.string().max(2_000).optional(),
        input_hash: z.string().min(1).max(200).optional().describe('The input_hash task_status showed: the approval goes through only if the pending call is still that one.'),
      },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    },
    async (args) =>
      answer(async () => {
        const who = requireIdentity();
        if (args.input_hash !== undefined) {
          // The caller approves the call it read: refuse if the pending one has other arguments.
          const live = await liveStatus(args.task_id);
          // The hash is the worker's (the ledger key): with no worker it cannot be checked, so nothing is sent unchecked.
          if (!live)
            throw new UsageProblem(
              `no worker answered for task ${args.task_id}, so input_hash cannot be checked; leave it out to approve approval ${args.approval_id} as list_pending_approvals shows it`,
            );
          const pending = live.pendingApprovals.find((a) => a.id === args.approval_id);
          if (pending && pending.inputHash !== args.input_hash)
            throw new UsageProblem(`approval ${args.approval_id} is not the call you read: its input_hash is ${pending.inputHash}; read it again with task_status`);
        }
        const outcome = await client.decide(args.task_id, {
          kind: 'approve',
          input: {
            approvalId: args.approval_id,
            by: who.by,
            ...(who.roles.length ? { roles: who.roles } : {}),
            ...(args.edited_arguments !== undefined ? { editedInput: args.edited_arguments } : {}),
            ...(args.comment ? { comment: args.comment } : {}),
          },
        });
        return decisionView(outcome);
      }),
  );

  server.registerTool(
    'deny',
    {
      title: 'Deny a pending tool call',
      description: 'Refuses the pending call; the model is told the reason and goes on without it.',
      inputSchema: { task_id: taskId, approval_id: approvalId, reason: z.string().min(1).max(2_000) },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    async (args) =>
      answer(async () => {
        const who = requireIdentity();
        if (!args.reason.trim()) throw new UsageProblem('the reason must not be blank: the model is told why');
        const outcome = await client.decide(args.task_id, {
          kind: 'deny',
          input: { approvalId: args.approval_id, by: who.by, ...(who.roles.length ? { roles: who.roles } : {}), reason: args.reason },
        });
        return decisionView(outcome);
      }),
  );

  return server;
}

/** A request this server refuses before asking Temporal. */
export class UsageProblem extends DurableAgentError {
  readonly code = 'usage';
}

/** A tool's JSON answer, or its refusal as an MCP tool error the calling model can read. */
async function answer(run: () => Promise<unknown>): Promise<CallToolResult> {
  try {
    const value = (await run()) as Record<string, unknown>;
    return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }], structuredContent: value };
  } catch (err) {
    if (err instanceof TaskRejectedError || err instanceof TaskNotFoundError || err instanceof UsageProblem) {
      return { isError: true, content: [{ type: 'text', text: err.message }] };
    }
    return { isError: true, content: [{ type: 'text', text: `durable-agent could not do that: ${(err as Error).message.split('\n')[0]}` }] };
  }
}

const NO_WORKER_NOTE = 'no worker answered for this task: read from its memo; a decision is recorded and applies when a worker runs the task';

/**
 * Taken: the task's answer, as before, with `outcome: 'applied'`. Recorded: `outcome: 'recorded'`,
 * `recorded: true` and the note that says when it applies (the CLI's words, docs/json-output.md).
 */
function decisionView(outcome: DecisionOutcome): Record<string, unknown> {
  if (outcome.applied) return { outcome: 'applied', ...(outcome.answer as Record<string, unknown>) };
  return { outcome: 'recorded', applied: false, recorded: true, task_queue: outcome.taskQueue, note: outcome.note };
}

/** An approval as the memo shows it: the arguments only when it holds them whole. */
function atRestView(a: ApprovalAtRest) {
  return {
    approval_id: a.id,
    tool: a.tool,
    ...(a.input === undefined ? { arguments_unavailable: a.argumentsProblem ?? 'no worker is running this task' } : { arguments: a.input }),
    ...(a.storedAs ? { arguments_sha256: a.storedAs.$blob } : {}),
    effect: a.effect,
    reason: a.reason,
    expires_at: a.expiresAt,
  };
}

/** An approval with the exact arguments that will run (resolved from the blob store when they were stored there). */
function approvalView(a: ApprovalRequest) {
  const problem = argumentsProblemOf(a);
  const stored = storedAsOf(a);
  return {
    approval_id: a.id,
    tool: a.tool,
    ...(problem ? { arguments_unavailable: problem } : { arguments: a.input }),
    ...(stored ? { arguments_sha256: stored.$blob } : {}),
    input_hash: a.inputHash,
    effect: a.effect,
    reason: a.reason,
    requested_at: a.requestedAt,
    expires_at: a.expiresAt,
  };
}

function statusView(id: string, view: Awaited<ReturnType<TaskClient['view']>>) {
  const s: TaskStatus | undefined = view.status;
  return {
    task_id: id,
    agent: view.summary.agent,
    agent_status: s?.agentStatus ?? view.summary.agentStatus,
    ...(s
      ? {
          phase: s.phase,
          turns: s.turn,
          tool_calls: s.toolCalls,
          cost_usd: s.costUsd,
          pending_approvals: s.pendingApprovals.map(approvalView),
          ...(s.blocked ? { blocked: { code: s.blocked.code, reason: s.blocked.reason } } : {}),
          ...(s.result ? { result: s.result } : {}),
        }
      : {}),
    ...(view.result ? { result: view.result } : {}),
    ...(view.failure ? { failure: view.failure } : {}),
    ...(view.note ? { note: view.note } : {}),
  };
}
