/**
 * Starting and driving tasks from a script: a thin, typed layer over Temporal's client using the
 * protocol names. Anything it does can also be done with the plain `temporal` CLI.
 */
import { TaskSchedules } from './task-schedules';
import {
  Client,
  WorkflowFailedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowIdReusePolicy,
  type WorkflowHandle,
  type WorkflowHandleWithFirstExecutionRunId,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { TaskHistory } from '../history/task-history';
import type { ToolProgress } from '../protocol/activity-contracts';
import type { UpdateDefinition } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { randomUUID } from 'node:crypto';
import {
  AgentNameKey,
  AgentStatusKey,
  ForkedFromKey,
  agentTaskQueue,
  approveUpdate,
  DEFAULT_TASK_QUEUE,
  denyUpdate,
  interruptSignal,
  messageSignal,
  statusQuery,
  transcriptQuery,
  unblockUpdate,
  WORKFLOW_TYPE,
} from '../protocol/definitions';
import { isToolError, toolError, type ToolError } from '../protocol/tool-error';
import type { DecisionKind } from '../protocol/decision-proof';
import {
  AGENT_STATUSES,
  type AgentStatus,
  type ApprovalAnswer,
  type ApproveInput,
  type DenyInput,
  type MessageInput,
  type TaskInput,
  type TaskResult,
  type TaskStatus,
  type TranscriptView,
  type UnblockInput,
} from '../protocol/task';
import { loadConnectionConfig } from './connection-config';
import { connectClient } from './client-connection';
import type { BlobStore } from '../blobs/blob-store';
import { followLiveOutput } from '../live-output/follow-live-output';
import type { LiveOutputLog, LiveStream } from '../live-output/live-output-log';
import { openLiveOutputLog } from '../live-output/open-live-output-log';
import type { LiveOutputEvent } from '../protocol/live-output';
import { createDataConverter, type CodecOptions } from '../codec';
import type { DecisionSigner } from '../approvers/signer';
import { describeAtRest, sendDecision, type DecisionOutcome, type DecisionToSend } from './send-decision';
import { DurableAgentError } from '../errors/durable-agent-error';
import { resolveForkBuild, type ForkBuild, type ForkBuildChoice } from './fork-build';
import { isPollerLive } from './live-pollers';
import { describeQueueRouting, routingNote } from './queue-routing';
import { holderOf, nestedPending, type NestedPending } from './child-tasks';
import { carryBlobs, ForkPointError, readForkPoint, type ForkPointCode } from '../forks/fork-point';
import { forkedFromLabel, type BranchPoint } from '../protocol/fork';
import type { ApproverIdentity, BranchAction } from '../protocol/approver-policy';
import { assertMayBranch } from './branch-policy';
import { derivedId, taskIdProblem, utf8Length } from '../protocol/task-ids';
import type { ModelChoice } from '../protocol/task';

export interface TaskSummary {
  taskId: string;
  runId: string;
  agent?: string;
  agentStatus?: AgentStatus;
  /** Temporal's own execution status: RUNNING, COMPLETED, FAILED, ... */
  executionStatus: string;
  startTime: Date;
  closeTime?: Date;
  /** What a waiting task waits for (e.g. an approval with its tool and arguments), from its memo. */
  waitingFor?: string;
  /** The task queue the task runs on (its agent's, unless it was started on another). */
  taskQueue?: string;
  /** Set by list() for a running task that no worker polls for: "no worker serves agent X on queue Q". */
  note?: string;
  /** A sub-agent's child task: the task that started it, as Temporal records it (never a claim of the task's own). */
  parentTask?: string;
  /** `TASK@N` when this task was forked from TASK's state after turn N. */
  forkedFrom?: string;
  /** The Worker Deployment build the run is on (a pinned override's, else the one it runs on); absent when unversioned. */
  build?: string;
  /** The agent version the task's run took from its worker (the run's memo; absent before the run started, or from older builds). */
  agentVersion?: string;
}

export interface ListFilter {
  status?: AgentStatus;
  agent?: string;
  /** Only the tasks forked from this task (any turn). */
  forksOf?: string;
  /** Default 50. */
  limit?: number;
}

export interface ForkOptions {
  /** A person's message the fork's first model call reads after the origin's conversation. */
  message?: string;
  /** Another model for the fork. Default: the origin's model choice. */
  model?: ModelChoice;
  /** The fork's id. Default `<origin>-fork-<8 hex>`, shortened when longer than 255 bytes (derivedId). */
  taskId?: string;
  /** Default: the origin's queue (or this client's explicit one). */
  taskQueue?: string;
  /** Who forks it, for the audit trail (signed with this client's signer). */
  startedBy?: string;
  /** The roles of `startedBy`, signed with it: the origin agent's `approvers.branch` may name roles. */
  startedByRoles?: string[];
  /** The workers' blob store: checks, before anything is created, that the origin's stored content is all there. */
  blobStore?: BlobStore;
  /** Answer the fork's reads from what the origin's same reads returned after the branch point (not run again). Default false. */
  recordedReads?: boolean;
  /** The build the fork runs on (fork-build.ts): the deployment's current one (default), the origin's, or a named build. */
  runOn?: ForkBuildChoice;
}

export interface ForkStarted {
  taskId: string;
  runId: string;
  /** `ORIGIN@N` */
  forkedFrom: string;
  taskQueue: string;
  /** The build it runs on: pinned to one, or routed to the deployment's current build (none named for an unversioned fleet). */
  build: ForkBuild;
}

/** A fork that cannot start where it was asked to (the turn, the origin's blobs); nothing was created. */
export class ForkRefusedError extends DurableAgentError {
  constructor(
    readonly code: Exclude<ForkPointCode, 'fork_origin_not_found'>,
    message: string,
  ) {
    super(message);
  }
}

/** What can be known of a task now: its live status when a worker answers, else what history says. */
export interface TaskView {
  summary: TaskSummary;
  status?: TaskStatus;
  result?: TaskResult;
  failure?: ToolError;
  /** Why `status` is missing, when it is. */
  note?: string;
  /** What the tool calls running now last reported (an MCP server's progress notifications), from their heartbeats. */
  toolProgress?: ToolProgress[];
  /** What the task's running sub-agent children (and theirs) wait for from a person; decide() on this task reaches them. */
  nested?: NestedPending[];
  /** The tasks forked from this one, each with the turn it started from. */
  forks?: BranchPoint[];
}

/** How long a query may wait for a worker before the view falls back to history. */
const QUERY_DEADLINE_MS = 5_000;
/** How long a rewind waits for the original's tool calls in flight to settle before it closes it. */
export const DEFAULT_SETTLE_TIMEOUT_MS = 60_000;

/** The task refused a request (its update validator or handler said no); `message` says why. */
export class TaskRejectedError extends DurableAgentError {
  readonly code = 'task_rejected';
  constructor(
    readonly taskId: string,
    reason: string,
  ) {
    super(reason);
  }
}

function rejectedOr(err: unknown, taskId: string): unknown {
  if (err instanceof WorkflowUpdateFailedError) return new TaskRejectedError(taskId, err.cause?.message ?? err.message);
  return err;
}

/**
 * A task id Temporal would refuse: longer than its limit (limit.maxIDLength, 1,000 bytes by default,
 * 255 on servers with an SQL visibility store) or empty. Nothing was started. One line.
 */
export class TaskIdRefusedError extends DurableAgentError {
  readonly code = 'task_id_refused';
  constructor(
    readonly taskId: string,
    reason: string,
  ) {
    super(reason);
  }
}

/** The server's refusal of a workflow id longer than its own limit ("WorkflowId length exceeds limit."), as one clear line. */
export function taskIdRefusedOr(err: unknown, taskId: string): unknown {
  const text = `${(err as Error)?.message ?? ''} ${(err as { cause?: Error })?.cause?.message ?? ''}`;
  if (!/workflow ?id (length )?exceeds (length )?limit/i.test(text)) return err;
  return new TaskIdRefusedError(
    taskId,
    `the server refused the task id (${utf8Length(taskId)} bytes): it is longer than the server's limit.maxIDLength (1,000 bytes by default, often 255 with an SQL visibility store); choose a shorter one`,
  );
}

export class TaskNotFoundError extends DurableAgentError {
  readonly code = 'task_not_found';
  constructor(readonly taskId: string) {
    super(`No task with id "${taskId}"`);
  }
}

/** An audit entry that left a task's state for the blob store (`status --all`). */
export interface ArchivedEntry {
  kind: string;
  entry: unknown;
}

/** What status and list say of a running task whose queue no worker polls: it waits, it does not fail. */
export function noWorkerNote(agent: string | undefined, taskQueue: string): string {
  return `no worker serves agent ${JSON.stringify(agent ?? '?')} on queue ${JSON.stringify(taskQueue)}: the task waits until one does`;
}

export class TaskClient {
  constructor(
    readonly client: Client,
    /**
     * One queue for every task this client starts, for workers started with the same explicit
     * queue. Default: each task on its agent's queue (`durable-agent.<agent>`, agentTaskQueue).
     */
    readonly taskQueue?: string,
    /**
     * A trusted front end's signer (see src/approvers): starts, approvals, denials, unblocks and
     * messages then carry a signed proof of `by` and `roles`. Default: none (unsigned, which a task
     * whose worker trusts keys refuses).
     */
    readonly signer?: DecisionSigner,
  ) {}

  /** The live output log stream() reads by default, opened at its first use. */
  private liveOutput: LiveOutputLog | undefined;

  /**
   * Connects through Temporal's environment configuration (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, ...),
   * with the project's payload codecs (createDataConverter) so it reads what workers compressed.
   */
  static async connect(options: { address?: string; namespace?: string; taskQueue?: string; codec?: CodecOptions; signer?: DecisionSigner } = {}): Promise<TaskClient> {
    const { codec, taskQueue, signer, ...connectionOverrides } = options;
    const config = loadConnectionConfig(connectionOverrides);
    const connection = await connectClient({ ...config.connectionOptions, connectTimeout: 5_000 });
    return new TaskClient(new Client({ connection, namespace: config.namespace, dataConverter: createDataConverter(codec) }), taskQueue, signer);
  }

  /**
   * The queue a task for `agent` is started on: this client's explicit queue, else the agent's
   * derived one. Throws a RangeError for a name no agent can have (the name comes from whoever starts).
   */
  queueFor(agent: string): string {
    return this.taskQueue ?? agentTaskQueue(agent);
  }

  /**
   * Whether a live worker polls `taskQueue` for workflow tasks. Temporal lists a poller for a few
   * minutes after its last poll: one silent for longer than a long poll, or a local worker whose
   * process is gone, does not count (isPollerLive). Undefined when the server cannot say
   * (permissions, an old server).
   */
  async isServed(taskQueue: string): Promise<boolean | undefined> {
    try {
      const { pollers } = await this.client.workflowService.describeTaskQueue({
        namespace: this.client.options.namespace,
        taskQueue: { name: taskQueue },
        taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
      });
      return (pollers ?? []).some((p) => isPollerLive(p));
    } catch {
      return undefined;
    }
  }

  /**
   * Why a task of `agent` on `taskQueue` would get no worker, asked of the server: no live worker
   * polls the queue (noWorkerNote), or the workers that do are not of the build the server sends the
   * task to (routingNote: the queue's current build, or the build `taskId` is pinned to). Undefined
   * when a live worker of that build polls it, or when the server cannot say.
   */
  async waitingNote(agent: string | undefined, taskQueue: string, taskId?: string): Promise<string | undefined> {
    const routing = await describeQueueRouting(this.client, taskQueue, taskId).catch(() => undefined);
    if (routing?.pollers.length === 0) return noWorkerNote(agent, taskQueue);
    return routingNote(agent, routing ?? { taskQueue, pollers: [], deployments: [] });
  }

  /**
   * With a signer and `startedBy`, the start carries a signed claim of who started it (forbidSelfApproval
   * relies on it). The task goes to `options.taskQueue`, else queueFor(input.agent).
   */
  async start(
    input: TaskInput,
    options: { taskId?: string; taskQueue?: string; forkedFrom?: string; pinnedTo?: { deploymentName: string; buildId: string } } = {},
  ): Promise<WorkflowHandleWithFirstExecutionRunId> {
    const taskId = options.taskId ?? `task-${randomUUID().slice(0, 8)}`;
    const idProblem = taskIdProblem(taskId);
    if (idProblem) throw new TaskIdRefusedError(taskId, idProblem);
    const args: TaskInput =
      this.signer && input.startedBy && !input.startProof
        ? {
            ...input,
            // Signed for this namespace, with a nonce: the workflow refuses it in any other, and records its single use.
            startProof: this.signer.sign({
              kind: 'start',
              taskId,
              subject: '',
              by: input.startedBy,
              roles: input.startedByRoles ?? [],
              request: input as unknown as Record<string, unknown>,
              namespace: this.client.options.namespace,
            }),
          }
        : input;
    return this.client.workflow
      .start(WORKFLOW_TYPE, {
        taskQueue: options.taskQueue ?? this.queueFor(input.agent),
        workflowId: taskId,
        args: [args],
        // A task id names one task for good: reusing it would confuse its audit trail and its people.
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        // A fork asked to run on a given build (fork --agent-version) stays there, whatever is current.
        ...(options.pinnedTo ? { versioningOverride: { pinnedTo: options.pinnedTo } } : {}),
        // Visible to `list` from the first moment, before the workflow's first task runs.
        typedSearchAttributes: [
          { key: AgentStatusKey, value: 'running' },
          { key: AgentNameKey, value: input.agent },
          ...(options.forkedFrom ? [{ key: ForkedFromKey, value: options.forkedFrom }] : []),
        ],
      })
      .catch((err: unknown) => {
        throw taskIdRefusedOr(err, taskId);
      });
  }

  /**
   * A new task that starts from `origin`'s state after turn `atTurn` (conversation, ledger, budgets
   * left, approvals and decisions), the origin untouched. The worker reads that state from the
   * origin's history; this only checks first that it is there (a turn that exists, content not
   * purged) so that bad input creates nothing. A running origin may be forked at any completed turn.
   */
  async fork(origin: string, atTurn: number, options: ForkOptions = {}): Promise<ForkStarted> {
    await this.assertMayBranch(origin, 'fork', { id: options.startedBy ?? 'unknown', roles: options.startedByRoles ?? [] });
    return this.forkChecked(origin, atTurn, options);
  }

  /**
   * Throws BranchRefusedError when `who` may not fork, rewind, replay or export `taskId` under its
   * agent's policy (`approvers.branch`; a verified signer where the agent requires signed starts),
   * TaskNotFoundError when there is no such task. Nothing is created or read beyond the policy.
   */
  async assertMayBranch(taskId: string, action: BranchAction, who: ApproverIdentity): Promise<void> {
    await this.withNotFound(taskId, () => assertMayBranch(this.client, taskId, action, who, this.signer));
  }

  /** fork() once the branch policy allowed it. */
  private async forkChecked(origin: string, atTurn: number, options: ForkOptions): Promise<ForkStarted> {
    const point = await readForkPoint(this.client, { taskId: origin, turn: atTurn }).catch((err: unknown) => {
      if (err instanceof ForkPointError && err.code === 'fork_origin_not_found') throw new TaskNotFoundError(origin);
      if (err instanceof ForkPointError) throw new ForkRefusedError(err.code as ForkRefusedError['code'], err.message);
      throw err;
    });
    if (options.blobStore) {
      await carryBlobs(options.blobStore, point).catch((err: unknown) => {
        if (err instanceof ForkPointError) throw new ForkRefusedError(err.code as ForkRefusedError['code'], err.message);
        throw err;
      });
    }
    const forkedFrom = forkedFromLabel({ taskId: origin, turn: atTurn });
    // Within DERIVED_ID_MAX_BYTES: a long origin's fork keeps its start and a hash (protocol/task-ids.ts); ForkedFrom keeps the origin's full id.
    const taskId = options.taskId ?? derivedId(origin, `-fork-${randomUUID().slice(0, 8)}`);
    const taskQueue = options.taskQueue ?? this.taskQueue ?? (await this.describe(origin)).taskQueue ?? agentTaskQueue(point.agent);
    const model = options.model ?? point.model;
    const input: TaskInput = {
      agent: point.agent,
      // The conversation comes from the origin; the prompt only names the fork for people.
      prompt: options.message ?? `fork of ${forkedFrom}`,
      ...(model ? { model } : {}),
      // The origin's fallbacks go with its model (a fork told to use another model gets none of them).
      ...(!options.model && point.fallbackModels ? { fallbackModels: point.fallbackModels } : {}),
      forkOf: { taskId: origin, turn: atTurn, ...(options.message ? { message: options.message } : {}), ...(options.recordedReads ? { recordedReads: true } : {}) },
      ...(options.startedBy ? { startedBy: options.startedBy } : {}),
      ...(options.startedBy && options.startedByRoles?.length ? { startedByRoles: options.startedByRoles } : {}),
    };
    const build = await this.forkBuild(origin, taskQueue, options.runOn ?? 'current');
    const handle = await this.start(input, { taskId, taskQueue, forkedFrom, ...(build.pinned ? { pinnedTo: { deploymentName: build.deploymentName!, buildId: build.buildId! } } : {}) });
    return { taskId: handle.workflowId, runId: handle.firstExecutionRunId, forkedFrom, taskQueue, build };
  }

  /** Which build a fork of `origin` runs on (fork-build.ts); refuses one no live worker serves. */
  private async forkBuild(origin: string, taskQueue: string, choice: ForkBuildChoice): Promise<ForkBuild> {
    const described = await this.handle(origin).describe();
    const version = described.raw.workflowExecutionInfo?.versioningInfo?.deploymentVersion;
    const build = version?.buildId && version.deploymentName ? { deploymentName: version.deploymentName, buildId: version.buildId } : undefined;
    // The origin's agent version, when a worker answers at once; a fork on another build never names it.
    const agentVersion =
      choice === 'origin'
        ? await this.client.connection
            .withDeadline(Date.now() + QUERY_DEADLINE_MS, () => this.handle(origin).query(statusQuery))
            .then((s) => s.agentVersion)
            .catch(() => undefined)
        : undefined;
    return resolveForkBuild(this.client, { taskId: origin, ...(build ? { build } : {}), ...(agentVersion ? { agentVersion } : {}) }, taskQueue, choice);
  }

  /**
   * An operator's rewind: the tool calls the original has in flight settle first (up to
   * `settleTimeoutMs`), then the same fork, then the original closed (terminated, with the reason in
   * its history) if it still runs. The fork starts before the close, so a refused fork leaves the
   * original as it was.
   */
  async rewind(taskId: string, toTurn: number, options: ForkOptions & { by?: string; settleTimeoutMs?: number } = {}): Promise<ForkStarted & { originalClosed: boolean; unsettledCalls?: number }> {
    // Tool calls in flight settle in the original first, so the new branch never runs a write behind
    // their back; one still running after the wait stays pending in the family's journal, and the
    // branch asks a person before running it again.
    // Refused before anything is touched: a rewind is a decision the agent's policy names people for.
    await this.assertMayBranch(taskId, 'rewind', { id: options.startedBy ?? 'unknown', roles: options.startedByRoles ?? [] });
    const unsettledCalls = await this.settleToolCalls(taskId, options.settleTimeoutMs ?? DEFAULT_SETTLE_TIMEOUT_MS);
    const fork = await this.forkChecked(taskId, toTurn, { ...options, taskId: options.taskId ?? derivedId(taskId, `-rewind-${toTurn}-${randomUUID().slice(0, 4)}`) });
    const { executionStatus } = await this.describe(taskId);
    if (executionStatus !== 'RUNNING') return { ...fork, originalClosed: false, ...(unsettledCalls ? { unsettledCalls } : {}) };
    try {
      await this.handle(taskId).terminate(`rewound to turn ${toTurn} by ${options.by ?? 'an operator'}: continues as ${fork.taskId}`);
    } catch (err) {
      // It finished on its own between the look and the close (its last call settled just before): nothing to close.
      if (err instanceof WorkflowNotFoundError) return { ...fork, originalClosed: false, ...(unsettledCalls ? { unsettledCalls } : {}) };
      throw err;
    }
    return { ...fork, originalClosed: true, ...(unsettledCalls ? { unsettledCalls } : {}) };
  }

  /** Waits, up to `timeoutMs`, for the tool calls a running task has in flight now to settle; returns how many did not. */
  private async settleToolCalls(taskId: string, timeoutMs: number): Promise<number> {
    const inFlight = async (): Promise<string[]> => {
      const described = await this.handle(taskId).describe();
      if (described.status.name !== 'RUNNING') return [];
      return (described.raw.pendingActivities ?? []).filter((a) => a.activityType?.name === 'runTool').map((a) => a.activityId ?? '');
    };
    const waited = new Set(await inFlight());
    const deadline = Date.now() + timeoutMs;
    while (waited.size > 0) {
      const now = new Set(await inFlight());
      for (const id of waited) if (!now.has(id)) waited.delete(id);
      if (waited.size === 0 || Date.now() >= deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    return waited.size;
  }

  /** The tasks forked from `taskId`, each with the turn it started from (the ForkedFrom search attribute). */
  async forksOf(taskId: string, limit = 50): Promise<BranchPoint[]> {
    return (await this.list({ forksOf: taskId, limit })).map((s) => ({ taskId: s.taskId, turn: Number(s.forkedFrom!.slice(s.forkedFrom!.lastIndexOf('@') + 1)) }));
  }

  /** Recurring tasks on Temporal Schedules: create, list, pause, resume, trigger, backfill, delete. */
  get schedules(): TaskSchedules {
    return new TaskSchedules(this.client);
  }

  handle(taskId: string): WorkflowHandle {
    return this.client.workflow.getHandle(taskId);
  }

  /**
   * The full history of one run (default: the latest), every page. A long task's run is several MB;
   * connect through TaskClient.connect (or connectClient) so a page above 4 MB can be received.
   */
  async history(taskId: string, runId?: string): Promise<temporal.api.history.v1.IHistory> {
    return this.withNotFound(taskId, () => new TaskHistory(this.client).run(taskId, runId));
  }

  async status(taskId: string): Promise<TaskStatus> {
    return this.withNotFound(taskId, () => this.handle(taskId).query(statusQuery));
  }

  async transcript(taskId: string): Promise<TranscriptView> {
    return this.withNotFound(taskId, () => this.handle(taskId).query(transcriptQuery));
  }

  /**
   * The audit entries a long task archived to its blob store (oldest first): events, escalations,
   * decisions and approvals beyond the window that `status` keeps. Needs the store the workers use.
   */
  async archivedEntries(status: TaskStatus, store: BlobStore): Promise<ArchivedEntry[]> {
    if (!status.archive) return [];
    const out: ArchivedEntry[] = [];
    for (const marker of status.archive.markers) {
      const { $blob } = JSON.parse(marker) as { $blob: string };
      out.push(...(JSON.parse(await store.get(status.archive.scope, $blob)) as ArchivedEntry[]));
    }
    return [...out, ...status.archive.pending];
  }

  /**
   * Resumes a blocked task. Rejected (nothing written to history) when it is not blocked, when
   * `input.blockId` (the block the person saw) is not the current block, or the input is wrong.
   */
  async unblock(taskId: string, input: UnblockInput): Promise<{ resumed: true; escalationId: string }> {
    if (!this.signer || input.proof) return this.update(taskId, unblockUpdate, input);
    // The proof names the block it answers: the one the person saw when given, never one read now,
    // so a stale form signs the old block and the task refuses it.
    const blockId = input.blockId ?? (await this.status(taskId)).blocked?.id;
    if (!blockId) return this.update(taskId, unblockUpdate, input); // the task says why it cannot be unblocked
    const named = { ...input, blockId };
    return this.update(taskId, unblockUpdate, { ...named, proof: this.signed('unblock', taskId, blockId, named) });
  }

  /** Approves a pending approval, optionally with edited arguments. Rejected when the id is unknown, stale or decided. */
  async approve(taskId: string, input: ApproveInput): Promise<ApprovalAnswer> {
    return this.update(taskId, approveUpdate, this.signer && !input.proof ? { ...input, proof: this.signed('approve', taskId, input.approvalId, input) } : input);
  }

  /** Denies a pending approval; the model is told the reason. */
  async deny(taskId: string, input: DenyInput): Promise<ApprovalAnswer> {
    return this.update(taskId, denyUpdate, this.signer && !input.proof ? { ...input, proof: this.signed('deny', taskId, input.approvalId, input) } : input);
  }

  /**
   * A decision that counts even when no worker runs: taken at once when a worker answers within a
   * second, else recorded in history as a signal that the task judges when a worker runs it
   * (`applied: false`). Refused at once when the task is closed, or when its memo shows the
   * approval or block is no longer pending; a rule broken later is in status.decisions.
   */
  async decide(taskId: string, decision: DecisionToSend): Promise<DecisionOutcome> {
    const holder = await this.withNotFound(taskId, () => this.holderOf(taskId, decision));
    return this.withNotFound(holder, async () => {
      const outcome = await sendDecision({ client: this.client, signer: this.signer, status: (id) => this.status(id), rejected: (id, reason) => new TaskRejectedError(id, reason) }, holder, decision);
      return holder === taskId ? outcome : { ...outcome, decidedOn: holder };
    });
  }

  /**
   * The task a decision on `taskId` goes to: the task itself, or the sub-agent child task (at any
   * depth) that holds the approval or block it names, so a person answers nested work from the
   * parent's view and the child's own rules judge it.
   */
  private async holderOf(taskId: string, decision: DecisionToSend): Promise<string> {
    const named = decision.kind === 'unblock' ? (decision.input.blockId ? { blockId: decision.input.blockId } : undefined) : { approvalId: decision.input.approvalId };
    // A memo without `pending` (a task that never waited on anyone, or one from before pending-in-memo)
    // holds nothing of its own that the memo could show: its descendants are asked, else it judges for itself.
    const own = await describeAtRest(this.client, taskId);
    if (named) return (await holderOf(this.client, taskId, named, own.pending)) ?? taskId;
    // An unblock that names no block, on a task that is not blocked itself: the one blocked descendant, if exactly one is.
    if (own.pending?.block || own.executionStatus !== 'RUNNING') return taskId;
    const blocked = (await nestedPending(this.client, taskId).catch(() => [])).filter((n) => n.block);
    return blocked.length === 1 ? blocked[0]!.taskId : taskId;
  }

  /** The signer's proof for a decision; `request` carries `by` and `roles` and the content signed. */
  private signed(kind: DecisionKind, taskId: string, subject: string, request: { by: string; roles?: string[] | undefined } & object) {
    return this.signer!.sign({ kind, taskId, subject, by: request.by, roles: request.roles ?? [], request: request as Record<string, unknown> });
  }

  /** Asks the task to stop: a running tool call is cancelled through its heartbeat; the partial result stays in status. */
  async cancel(taskId: string): Promise<void> {
    await this.withNotFound(taskId, () => this.handle(taskId).cancel());
  }

  /** Adds a person's guidance; the model reads it before its next call. */
  async message(taskId: string, input: MessageInput): Promise<void> {
    if (!input.text?.trim()) throw new RangeError('A message needs text');
    const signed = this.signer && !input.proof ? { ...input, proof: this.signed('message', taskId, '', input) } : input;
    await this.withNotFound(taskId, () => this.handle(taskId).signal(messageSignal, signed));
  }

  /**
   * A message that cancels the model call in flight (never a running tool), so the model is called
   * again with it at once; signed like a message. Between model calls it is an ordinary message.
   */
  async interrupt(taskId: string, input: MessageInput): Promise<void> {
    if (!input.text?.trim()) throw new RangeError('An interrupt needs text');
    const signed = this.signer && !input.proof ? { ...input, proof: this.signed('interrupt', taskId, '', input) } : input;
    await this.withNotFound(taskId, () => this.handle(taskId).signal(interruptSignal, signed));
  }

  /**
   * The live status if a worker answers the query; for a closed task with no worker, the result or
   * failure from history instead, so `status` works after the worker is gone.
   */
  async view(taskId: string): Promise<TaskView> {
    const summary = await this.describe(taskId);
    const view: TaskView = { summary };
    // The server always reports the queue; the fallbacks are for a summary built by hand.
    const taskQueue = summary.taskQueue ?? this.taskQueue ?? DEFAULT_TASK_QUEUE;
    // A query needs a worker to answer; without one it would only wait out the deadline. A running
    // task's queue is described once, with its routing: a worker may poll while the server sends this
    // task to another build, and the query would wait out its deadline for nothing, so the view says
    // which build, and the fix, at once.
    const routing = summary.executionStatus === 'RUNNING' ? await describeQueueRouting(this.client, taskQueue, taskId).catch(() => undefined) : undefined;
    const served = routing ? routing.pollers.length > 0 : await this.isServed(taskQueue);
    const misrouted = routing && served ? routingNote(summary.agent, routing) : undefined;
    if (served !== false && !misrouted) {
      const status = await this.client.connection.withDeadline(Date.now() + QUERY_DEADLINE_MS, () => this.handle(taskId).query(statusQuery)).catch(() => undefined);
      if (status) view.status = status;
    }
    if (!view.status) {
      // Without a live worker nothing is waited for: the view comes from the task's search
      // attributes and memo (and, for a closed task, its history), and says so.
      view.note = misrouted
        ? `${misrouted}. Showing the search attributes and memo (no live status).`
        : served === false
          ? summary.executionStatus !== 'RUNNING'
            ? `No live worker polls task queue "${taskQueue}": showing the outcome from history, search attributes and memo (no live status).`
            : `${noWorkerNote(summary.agent, taskQueue)}. Showing the search attributes and memo (no live status).`
          : summary.executionStatus !== 'RUNNING'
            ? `Live status unavailable (no worker answered); showing the outcome from history.`
            : `No worker answered within ${QUERY_DEADLINE_MS / 1000} s on task queue "${taskQueue}", though one of the build the task goes to polls it; is the worker serving agent "${summary.agent ?? '?'}" busy or stopping?`;
    }
    if (summary.executionStatus === 'RUNNING') {
      const progress = await this.toolProgress(taskId);
      if (progress.length) view.toolProgress = progress;
      // Children are tasks of their own; what they wait for shows in the parent's view too.
      const nested = await nestedPending(this.client, taskId).catch(() => []);
      if (nested.length) view.nested = nested;
    }
    const forks = await this.forksOf(taskId).catch(() => []);
    if (forks.length) view.forks = forks;
    if (summary.executionStatus !== 'RUNNING' && !view.status?.result) {
      try {
        view.result = await this.result(taskId);
      } catch (err) {
        view.failure = failureOf(err);
      }
    }
    return view;
  }

  /**
   * The progress the task's running tool calls report through their heartbeats (MCP progress
   * notifications); empty when none reports any. Heartbeats are not workflow state, so the status
   * query cannot see them: they are read from the pending activities.
   */
  async toolProgress(taskId: string): Promise<ToolProgress[]> {
    try {
      const out: ToolProgress[] = [];
      for (const details of await new TaskHistory(this.client).pendingHeartbeats(taskId, 'runTool')) {
        const progress = (details as { toolProgress?: Partial<ToolProgress> } | null)?.toolProgress;
        if (progress && typeof progress.tool === 'string' && typeof progress.progress === 'number') out.push(progress as ToolProgress);
      }
      return out;
    } catch {
      // Progress is a nicety: a describe that fails must not fail the view.
      return [];
    }
  }

  /** Waits for the task to close and returns its result; throws the task's failure if it failed. */
  async result(taskId: string): Promise<TaskResult> {
    return this.withNotFound(taskId, () => this.handle(taskId).result() as Promise<TaskResult>);
  }

  /**
   * The task's live output (docs/live-output.md): text and tool-call deltas of its model calls as
   * they stream, each with an offset. From `from` (the last event's offset + 1 to resume exactly;
   * default the start) until the task closes or `signal` aborts. `log` defaults to the one beside
   * DURABLE_AGENT_BLOB_STORE, where workers write it.
   */
  async *stream(taskId: string, options: { from?: number; signal?: AbortSignal; log?: LiveOutputLog; pollMs?: number } = {}): AsyncGenerator<LiveOutputEvent> {
    // Refused now for a task that does not exist, rather than waiting on output that never comes.
    const stream = await this.liveStream(taskId);
    const log = options.log ?? (this.liveOutput ??= openLiveOutputLog());
    // Open while this task runs: a later task under the same id is another stream.
    const isOpen = async () =>
      this.liveStream(taskId).then(
        (now) => now.running && now.firstRunId === stream.firstRunId,
        (err: unknown) => (err instanceof TaskNotFoundError ? false : Promise.reject(err)),
      );
    yield* followLiveOutput(log, stream, {
      isOpen,
      ...(options.from !== undefined ? { from: options.from } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.pollMs ? { pollMs: options.pollMs } : {}),
    });
  }

  /**
   * The live output stream of the task that holds `taskId` now (docs/live-output.md): keyed by its
   * first run, so the output of an earlier task that held the same id is never its. `running`:
   * whether that task runs.
   */
  async liveStream(taskId: string): Promise<LiveStream & { running: boolean }> {
    const d = await this.withNotFound(taskId, () => this.handle(taskId).describe());
    return { taskId, firstRunId: d.raw.workflowExecutionInfo?.firstRunId || d.runId, running: d.status.name === 'RUNNING' };
  }

  async describe(taskId: string): Promise<TaskSummary> {
    const d = await this.withNotFound(taskId, () => this.handle(taskId).describe());
    return toSummary(d);
  }

  async list(filter: ListFilter = {}): Promise<TaskSummary[]> {
    if (filter.status && !AGENT_STATUSES.includes(filter.status)) {
      throw new RangeError(`Unknown status "${filter.status}". Known: ${AGENT_STATUSES.join(', ')}`);
    }
    // One row per task: a run that continued as new is history, its successor is the task.
    const clauses = [`WorkflowType = '${WORKFLOW_TYPE}'`, `ExecutionStatus != 'ContinuedAsNew'`];
    if (filter.status === 'terminated') clauses.push(`ExecutionStatus = 'Terminated'`);
    else if (filter.status === 'timed_out') clauses.push(`ExecutionStatus = 'TimedOut'`);
    else if (filter.status) {
      clauses.push(`AgentStatus = '${filter.status}'`);
      // A run closed by the server or an operator keeps the last status it published: never show it as live.
      if (LIVE_STATUSES.includes(filter.status)) clauses.push(`ExecutionStatus = 'Running'`);
    }
    if (filter.agent) clauses.push(`AgentName = '${filter.agent.replace(/'/g, "\\'")}'`);
    if (filter.forksOf) clauses.push(`ForkedFrom STARTS_WITH '${`${filter.forksOf}@`.replace(/'/g, "\\'")}'`);
    const limit = filter.limit ?? 50;
    const out: TaskSummary[] = [];
    for await (const execution of this.client.workflow.list({ query: clauses.join(' AND ') })) {
      const summary = toSummary(execution);
      // STARTS_WITH 'a@' also matches the forks of a task named `a@b`: the origin is all before the last `@`.
      if (filter.forksOf && summary.forkedFrom?.slice(0, summary.forkedFrom.lastIndexOf('@')) !== filter.forksOf) continue;
      out.push(summary);
      if (out.length >= limit) break;
    }
    // A running task that no worker polls for waits: say so on its row, asking once per queue.
    const served = new Map<string, Promise<boolean | undefined>>();
    for (const summary of out) {
      if (summary.executionStatus !== 'RUNNING' || !summary.taskQueue) continue;
      if (!served.has(summary.taskQueue)) served.set(summary.taskQueue, this.isServed(summary.taskQueue));
      if ((await served.get(summary.taskQueue)) === false) summary.note = noWorkerNote(summary.agent, summary.taskQueue);
    }
    return out;
  }

  /** Sends an update; a rejection (validator or handler) becomes a TaskRejectedError with its reason. */
  private async update<Ret, Arg>(taskId: string, definition: UpdateDefinition<Ret, [Arg]>, input: Arg): Promise<Ret> {
    return this.withNotFound(taskId, () =>
      this.handle(taskId)
        .executeUpdate<Ret, [Arg]>(definition, { args: [input] })
        .catch((err: unknown) => {
          throw rejectedOr(err, taskId);
        }),
    );
  }

  private async withNotFound<T>(taskId: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      // Updates and signals to a closed task also come back as "not found": say which it is.
      const closed = await this.client.workflow
        .getHandle(taskId)
        .describe()
        .then(
          (d) => d.status.name,
          () => undefined,
        );
      if (closed && closed !== 'RUNNING') throw new TaskRejectedError(taskId, `the task is ${closed.toLowerCase()}; it takes no more requests`);
      throw new TaskNotFoundError(taskId);
    }
  }
}

/** The ToolError a failed task carries, or a plain description of its failure. */
export function failureOf(err: unknown): ToolError {
  let cause: unknown = err instanceof WorkflowFailedError ? err.cause : err;
  while (cause) {
    if (cause instanceof ApplicationFailure && isToolError(cause.details?.[0])) return cause.details[0];
    const next: unknown = (cause as { cause?: unknown }).cause;
    if (!next) break;
    cause = next;
  }
  const message = cause instanceof Error ? cause.message : String(cause);
  const type = err instanceof WorkflowFailedError && err.cause ? err.cause.name : 'failure';
  const code = { TerminatedFailure: 'terminated', CancelledFailure: 'cancelled', TimeoutFailure: 'timed_out' }[type] ?? 'task_failed';
  return toolError(code === 'cancelled' ? 'policy' : 'permanent', code, message);
}

interface ExecutionLike {
  workflowId: string;
  runId: string;
  status: { name: string };
  startTime: Date;
  closeTime?: Date;
  typedSearchAttributes: { get(key: typeof AgentStatusKey): string | undefined };
  memo?: Record<string, unknown>;
  taskQueue?: string;
  parentExecution?: { workflowId?: string | null };
  /** The server's answer: a list's WorkflowExecutionInfo, or a describe's response holding one. */
  raw?: unknown;
  searchAttributes?: unknown;
}

type VersionLike = { buildId?: string | null; deploymentName?: string | null } | null | undefined;
type VersioningInfoLike = {
  deploymentVersion?: VersionLike;
  versioningOverride?: { pinned?: { version?: VersionLike } | null; pinnedVersion?: string | null } | null;
  version?: string | null;
} | null;

/**
 * The build a task's run is on, from the execution's versioning info (list and describe both carry
 * it): a pinned override's build first (the run moves there), else the build it runs on; the
 * TemporalWorkerDeploymentVersion search attribute (`DEPLOYMENT:BUILD`) when the info has none.
 */
export function buildOfExecution(raw: unknown, searchAttributes?: unknown): string | undefined {
  const r = raw as { workflowExecutionInfo?: { versioningInfo?: VersioningInfoLike }; versioningInfo?: VersioningInfoLike } | null | undefined;
  const info = r?.workflowExecutionInfo?.versioningInfo ?? r?.versioningInfo;
  const afterColon = (v: string | null | undefined) => (v && v.includes(':') ? v.slice(v.indexOf(':') + 1) : undefined);
  const fromInfo = info?.versioningOverride?.pinned?.version?.buildId || afterColon(info?.versioningOverride?.pinnedVersion) || info?.deploymentVersion?.buildId || afterColon(info?.version);
  if (fromInfo) return fromInfo;
  const attr = (searchAttributes as Record<string, unknown> | undefined)?.TemporalWorkerDeploymentVersion;
  const value = Array.isArray(attr) ? attr[0] : attr;
  return typeof value === 'string' ? afterColon(value) : undefined;
}

const LIVE_STATUSES: AgentStatus[] = ['running', 'awaiting_approval', 'blocked'];

function toSummary(e: ExecutionLike): TaskSummary {
  const agent = e.typedSearchAttributes.get(AgentNameKey);
  const forkedFrom = e.typedSearchAttributes.get(ForkedFromKey);
  const published = e.typedSearchAttributes.get(AgentStatusKey) as AgentStatus | undefined;
  // The workflow cannot publish its own termination or timeout: Temporal's execution status tells.
  const closedBy = e.status.name === 'TERMINATED' ? 'terminated' : e.status.name === 'TIMED_OUT' ? 'timed_out' : undefined;
  const agentStatus: AgentStatus | undefined = closedBy ?? published;
  const build = buildOfExecution(e.raw, e.searchAttributes);
  return {
    taskId: e.workflowId,
    runId: e.runId,
    ...(agent ? { agent } : {}),
    ...(agentStatus ? { agentStatus } : {}),
    executionStatus: e.status.name,
    startTime: e.startTime,
    ...(typeof e.memo?.waitingFor === 'string' ? { waitingFor: e.memo.waitingFor } : {}),
    ...(e.taskQueue ? { taskQueue: e.taskQueue } : {}),
    ...(e.closeTime ? { closeTime: e.closeTime } : {}),
    ...(e.parentExecution?.workflowId ? { parentTask: e.parentExecution.workflowId } : {}),
    ...(forkedFrom ? { forkedFrom } : {}),
    ...(build ? { build } : {}),
    ...(typeof e.memo?.agentVersion === 'string' ? { agentVersion: e.memo.agentVersion } : {}),
  };
}
