/**
 * The start of a run: whether its input may start it, the state it begins with (new, or the
 * progress its own continue-as-new handed over), and its configuration from the worker (manifest,
 * trusted keys, the starter's identity).
 */
import { ApplicationFailure, proxyActivities, proxyLocalActivities, uuid4, workflowInfo, type WorkflowInfo } from '@temporalio/workflow';
import type { AgentActivities } from '../../protocol/activity-contracts';
import type { AgentManifest } from '../../protocol/agent-manifest';
import type { TaskInput, TaskSnapshot } from '../../protocol/task';
import { forkedFromLabel } from '../../protocol/fork';
import { toolError } from '../../protocol/tool-error';
import { describeAgentOptions, forkPointOptions, shortActivityOptions } from '../base/activity-options';
import { ApproverGate } from './approver-gate';
import { taskInputProblem } from '../base/input-checks';
import { DEFAULT_LIMITS } from '../../rules/task-limits';
import { Steering } from '../state/steering';
import { SentConversation } from '../state/sent-conversation';
import { TaskState } from '../state/task-state';
import { taskErrorFrom } from '../base/activity-failures';
import { restoreTask } from '../state/task-snapshot';
import { delegatedLineage } from './delegation';
import { claimedStarter, forkMessage, forkRefusal } from './start-claim';

const shortActivities = proxyActivities<AgentActivities>(shortActivityOptions);
const { loadForkPoint } = proxyActivities<AgentActivities>(forkPointOptions);
const { describeAgent } = proxyLocalActivities<AgentActivities>(describeAgentOptions);

/** What every part of a run shares: its input, state and the activities it calls. */
export interface Run {
  input: TaskInput;
  info: WorkflowInfo;
  state: TaskState;
  /** The task chain's content in the blob store: the same for every run, never another task's. */
  scope: string;
  /** The short activities (prepareToolCall, notify, ...), with a heartbeat timeout. */
  activities: AgentActivities;
  /** The model call in flight, for an interrupt to cancel. */
  steering: Steering;
  /** This run is a fork's first: its state came from the origin's history (loadForkPoint). */
  forked: boolean;
  /** What this run's last model call sent, so the next sends only the change. */
  sent: SentConversation;
  /** What this run's last answered model call cost: a cost cap's estimate for a model that cannot say its maximum. */
  lastCallCostUsd?: number;
}

/**
 * A fork's starting state, read by its worker from the origin's history (the input only names the
 * origin and turn); undefined for every other start. Asked before the run begins, since the state
 * it begins with is this one.
 */
export function forkPointOf(input: TaskInput): Promise<TaskSnapshot> | undefined {
  if (input === null || typeof input !== 'object' || input.resume !== undefined || input.forkOf === undefined) return undefined;
  assertValidInput(input);
  const info = workflowInfo();
  const origin = { taskId: input.forkOf.taskId, turn: input.forkOf.turn };
  return loadForkPoint({
    origin,
    agent: input.agent,
    scope: `${info.workflowId}/${info.firstExecutionRunId}`,
    ...(input.forkOf.recordedReads ? { recordedReads: true } : {}),
  }).catch((err: unknown) => {
    const cause = taskErrorFrom(err);
    const error = { ...cause, detail: `Cannot fork ${forkedFromLabel(origin)}: ${cause.detail}` };
    throw ApplicationFailure.create({ message: error.detail, type: error.error_class, nonRetryable: true, details: [error] });
  });
}

export function beginRun(input: TaskInput, forkPoint?: TaskSnapshot): Run {
  assertValidInput(input);
  const info = workflowInfo();
  // Before anything of a snapshot is read: only this task's own continue-as-new may hand one over.
  const originProblem = runOriginProblem(input, info);
  if (originProblem) throw invalidInput(originProblem);
  const clock = { now: () => new Date(), newId: () => uuid4() };
  const limits = { ...DEFAULT_LIMITS, ...(input.stateCeilingBytes ? { snapshotCeilingBytes: input.stateCeilingBytes } : {}) };
  const start = input.resume ?? forkPoint;
  const state = start ? restoreTask(input, clock, start) : new TaskState(input, clock, limits);
  // A child joins its parent's family (its writes go to the family's journal); a continued run keeps it in its snapshot.
  if (!start) state.lineage = delegatedLineage(input, info);
  const scope = `${info.workflowId}/${info.firstExecutionRunId}`;
  state.scope = scope;
  return {
    input,
    info,
    state,
    scope,
    activities: shortActivities,
    steering: new Steering(),
    forked: !input.resume && forkPoint !== undefined,
    sent: new SentConversation(`${info.workflowId}/${info.runId}`),
  };
}

/** The agent as the worker running this workflow task has it now (an unblock checks it: people/blocks.ts). */
export function describeAgentNow(run: Run): Promise<AgentManifest> {
  return describeAgent({ agent: run.input.agent, ...(run.input.model ? { model: run.input.model } : {}) });
}

/** The run's configuration, from its worker (a snapshot never supplies it), and the approver gate built from it. */
export async function configureRun(run: Run): Promise<{ manifest: AgentManifest; gate: ApproverGate }> {
  const { input, info, state } = run;
  const manifest = await describeAgent({ agent: input.agent, ...(input.model ? { model: input.model } : {}) });
  if (!input.resume && !run.forked) state.begin(manifest);
  else state.adoptManifest(manifest);
  if (run.forked) beginFork(run);
  const gate = new ApproverGate(info.workflowId, manifest.approverKeys ?? [], manifest.policy, state.starter);
  if (!input.resume) {
    // Checked at the time the server accepted the start, not when a worker got to it.
    let starter = gate.starterOf(input, info.startTime.getTime(), info.namespace);
    // A start proof counts once: its first use is recorded in the worker's shared store (start-claim.ts).
    starter = await claimedStarter(starter, input, info);
    if (starter.problem && manifest.policy?.forbidSelfApproval) {
      // Self-approval cannot be ruled out for a starter nobody vouched for: refuse the task.
      const error = toolError(
        'policy',
        'unverified_starter',
        `Agent ${manifest.name} forbids self-approval, so its tasks must be started with a start claim signed by a trusted front end: ${starter.problem}`,
        'Start the task through TaskClient.start with a signer (or the durable-agent CLI with a signing key).',
      );
      throw ApplicationFailure.create({ message: error.detail, type: error.error_class, nonRetryable: true, details: [error] });
    }
    // A fork is a decision on its origin: the origin agent's policy says who may make it.
    const refusal = forkRefusal(manifest, input, starter, gate.verifying);
    if (refusal) throw refusal;
    // The fork's message joins once its starter is judged.
    if (run.forked) forkMessage(state, input, starter, gate.verifying, manifest);
    state.starter = starter;
    gate.starter = starter;
  }
  state.approverStatus = gate.status();
  return { manifest, gate };
}

/** A fork's first run: the branch point in its audit trail (its message waits for its starter to be judged: forkMessage). */
function beginFork(run: Run): void {
  const { state } = run;
  const origin = state.lineage[0]!;
  state.audit.record('task_forked', `forked from ${forkedFromLabel(origin)}: ${state.messages.length} messages, ${state.toolCalls.total} tool calls and $${state.costUsd.toFixed(4)} carried over`);
}

/**
 * Why this run may not start, or undefined. Cron runs and workflow retries get the first run's
 * input again (a `resume` included) and set continuedFromExecutionRunId just as continue-as-new
 * does, so they are refused outright: a schedule starts a new task each time instead, and the
 * engine retries per activity. A reset run keeps the started event of the run it resets, so it
 * passes only where that run was itself this task's own continuation.
 */
export function runOriginProblem(input: TaskInput, info: WorkflowInfo): string | undefined {
  if (info.cronSchedule) return 'agentTask does not run on a cron schedule (each run would repeat the whole task); use a Temporal Schedule that starts a new task each time.';
  if (info.retryPolicy) return 'agentTask does not take a workflow retry policy (a retry would repeat the whole task and its writes); activities are retried per error class instead.';
  const resumed = input !== null && typeof input === 'object' && input.resume !== undefined;
  if (!resumed) return undefined;
  if (!info.continuedFromExecutionRunId || info.attempt > 1 || info.lastFailure !== undefined || info.lastResult !== undefined) {
    return '`resume` is set by the task itself when it continues as new; a new task cannot start with one.';
  }
  return undefined;
}

function assertValidInput(input: TaskInput): void {
  const problem = taskInputProblem(input);
  if (problem) throw invalidInput(problem);
}

function invalidInput(problem: string): ApplicationFailure {
  return ApplicationFailure.create({ message: `Invalid task input: ${problem}`, type: 'invalid_input', nonRetryable: true });
}
