/**
 * The `agentTask` workflow: the turn loop. Model activity, then the turn's tool calls through the
 * guards (turn-tools.ts), then the results back to the model, until it ends its turn. A spent budget,
 * a loop or a model that cannot form a valid call blocks the task until a person sends `unblock`.
 * Decisions live in TaskState, the ledger and the gate; this file wires messages and activities.
 */
import {
  allHandlersFinished,
  ApplicationFailure,
  CancellationScope,
  condition,
  ContinueAsNew,
  continueAsNew,
  isCancellation,
  log,
  patched,
  proxyActivities,
  setHandler,
  upsertMemo,
  workflowInfo,
  upsertSearchAttributes,
  uuid4,
} from '@temporalio/workflow';
import type { AgentActivities } from '../protocol/activity-contracts';
import {
  AgentNameKey,
  AgentStatusKey,
  approveSignal,
  approveUpdate,
  denySignal,
  denyUpdate,
  messageSignal,
  statusQuery,
  transcriptQuery,
  unblockSignal,
  unblockUpdate,
} from '../protocol/definitions';
import { Decisions } from './decisions';
import { pendingMemo } from './pending-memo';
import { toolUsesOf } from '../protocol/messages';
import { CONTINUED_RUN_STATUS, DEFAULT_CONTINUE_AS_NEW_EVERY_TURNS, type AgentStatus, type ApprovalRecord, type ApprovalRequest, type MessageInput, type TaskInput, type TaskOutcome, type TaskResult } from '../protocol/task';
import { escalationLevel } from './escalation-policy';
import { isToolError, toolError, type ToolError } from '../protocol/tool-error';
import { describeAgentOptions, modelCallOptions, shortActivityOptions } from './activity-options';
import { TaskState } from './task-state';
import { FastReads } from './fast-reads';
import { runTurnTools } from './turn-tools';
import { messageProblem, taskInputProblem } from './input-checks';
import { DEFAULT_LIMITS, LEGACY_LIMITS, STABLE_PREFIX_LIMITS } from './task-limits';
import { MARKER_PATTERN } from '../protocol/blob-marker';
import { RECALL_TOOL_MANIFEST } from '../protocol/recall-tool';
import type { ToolSpec } from '../protocol/messages';
import { ApproverGate, MESSAGE_NONCE_MEMORY } from './approver-gate';

const withoutHeartbeats = proxyActivities<AgentActivities>(describeAgentOptions);
const withShortHeartbeats = proxyActivities<AgentActivities>(shortActivityOptions);
const { callModel } = proxyActivities<AgentActivities>(modelCallOptions);

/** Histories recorded before continue-as-new replay without it. */
export const CONTINUE_AS_NEW_PATCH = 'continue-as-new';

/** How many times an answer cut at max_tokens is continued before the task reports it. */
const MAX_CONTINUATIONS = 2;

/** Histories recorded before the ledger, budgets and escalations replay with the old behaviour. */
export const GUARDED_CALLS_PATCH = 'guarded-calls';
/** Histories recorded before approvals, inform notices and model-failure blocks replay without them. */
export const PEOPLE_IN_THE_LOOP_PATCH = 'people-in-the-loop';
/**
 * Tasks started with this marker pin DEFAULT_LIMITS (rules v2: the claim check, bounded state,
 * context compaction, the ledger that knows state changes, inform without waiting); histories
 * without it replay with LEGACY_LIMITS and the behaviour they were recorded with.
 */
export const PINNED_LIMITS_PATCH = 'pinned-limits-v2';
/**
 * Tasks started with this marker trim the conversation several turns at a time (a prompt prefix
 * that stays cacheable), and a run that continues as new publishes AgentStatus=continued.
 */
export const STABLE_PREFIX_PATCH = 'stable-prefix';
/**
 * Tasks started with this marker check who decides: with trusted keys in the manifest, approve,
 * deny and unblock must carry a trusted front end's signature and pass the policy's `approvers`;
 * unsigned messages stay out of the model's context. Identities are recorded as verified or not.
 */
export const VERIFIED_APPROVERS_PATCH = 'verified-approvers';
/**
 * Tasks started with this marker (rules v2) send `confirm` and `block` notices through the notifier
 * too, without waiting for them: the webhook body links to the approval's page in the inbox.
 */
export const NOTIFY_PEOPLE_PATCH = 'notify-confirm-block';
/** Tasks started with this marker run their short activities with a heartbeat timeout (see shortActivityOptions). */
export const SHORT_ACTIVITY_HEARTBEATS_PATCH = 'short-activity-heartbeats';
/**
 * Tasks started with this marker take their configuration (tools, policy, approver keys and rules)
 * from their worker on every run; a snapshot carries progress only, and only this task's own
 * continue-as-new may hand one over (never a client, a cron run, a retry or a reset of such a run).
 */
export const CONFIG_FROM_WORKER_PATCH = 'config-from-worker';
/**
 * Tasks started with this marker publish what waits on a person (pending approvals, the current
 * block) in their memo, so a front end finds it with a describe when no worker runs.
 */
export const PENDING_IN_MEMO_PATCH = 'pending-in-memo';
/** Audit entries waiting for the store before they are archived between turns. */
const OVERFLOW_FLUSH_AT = 200;

export async function agentTask(input: TaskInput): Promise<TaskResult> {
  const resumed = input !== null && typeof input === 'object' && input.resume !== undefined;
  const newRules = resumed ? undefined : patched(PINNED_LIMITS_PATCH);
  // Histories from before the full input checks fail (or not) exactly as they were recorded.
  if (newRules === false) legacyInputChecks(input);
  else assertValidInput(input);
  const clock = { now: () => new Date(), newId: () => uuid4() };
  const stablePrefix = newRules === true && patched(STABLE_PREFIX_PATCH);
  const newLimits = { ...DEFAULT_LIMITS, ...(stablePrefix ? STABLE_PREFIX_LIMITS : {}), ...(input.stateCeilingBytes ? { snapshotCeilingBytes: input.stateCeilingBytes } : {}) };
  const configFromWorker = patched(CONFIG_FROM_WORKER_PATCH);
  const pendingInMemo = patched(PENDING_IN_MEMO_PATCH);
  const info = workflowInfo();
  // Before anything of a snapshot is read: only this task's own continue-as-new may hand one over.
  const originProblem = configFromWorker ? runOriginProblem(input, info) : undefined;
  if (originProblem) throw ApplicationFailure.create({ message: `Invalid task input: ${originProblem}`, type: 'invalid_input', nonRetryable: true });
  const state = input.resume ? TaskState.restore(input, clock, input.resume) : new TaskState(input, clock, newRules ? newLimits : LEGACY_LIMITS);
  state.snapshotCarriesManifest = !configFromWorker;
  const guarded = patched(GUARDED_CALLS_PATCH);
  const people = patched(PEOPLE_IN_THE_LOOP_PATCH);
  const shortActivities = patched(SHORT_ACTIVITY_HEARTBEATS_PATCH) ? withShortHeartbeats : withoutHeartbeats;
  const { describeAgent, prepareToolCall, notify, storeAudit, loadText } = shortActivities;
  const canContinueAsNew = patched(CONTINUE_AS_NEW_PATCH);
  const v2 = state.limits.rulesVersion >= 2;
  // Content of this task chain in the blob store: the same for every run, never another task's.
  const scope = v2 ? `${info.workflowId}/${info.firstExecutionRunId}` : undefined;
  state.scope = scope;
  const verifiedApprovers = patched(VERIFIED_APPROVERS_PATCH);
  /** Set once the manifest (with the worker's trusted keys) is known. */
  let approverGate: ApproverGate | undefined;
  /** Messages that arrived before the manifest: judged once it is known. */
  const earlyMessages: MessageInput[] = [];
  const takeMessage = (message: MessageInput) => {
    if (!approverGate) return void earlyMessages.push(message);
    const identity = approverGate.messageIdentity(message, Date.now(), state.messageNonces);
    if (identity.problem) {
      log.warn('A message was kept out of the conversation', { by: message.by, problem: identity.problem });
      return state.refuseGuidance(message, identity);
    }
    if (identity.verified && message.proof?.nonce) state.rememberNonce(message.proof.nonce, MESSAGE_NONCE_MEMORY);
    state.addGuidance(message, identity);
  };
  const decisions = new Decisions({
    state,
    agent: input.agent,
    scope,
    verifiesApprovers: verifiedApprovers,
    gate: () => approverGate,
    prepareToolCall,
    decisionReceivedAt: withShortHeartbeats.decisionReceivedAt,
  });

  setHandler(statusQuery, () => state.status());
  setHandler(transcriptQuery, () => ({ system: state.manifest?.system ?? '', messages: state.messages }));
  // Validators run before anything is written to history: a wrong or stale decision leaves no trace.
  setHandler(unblockUpdate, (request) => failAsUpdate(() => decisions.unblock(request)), { validator: (request) => rejectIf(decisions.problem('unblock', request, Date.now())) });
  setHandler(approveUpdate, (request) => failAsUpdateAsync(() => decisions.approve(request)), { validator: (request) => rejectIf(decisions.problem('approve', request, Date.now())) });
  setHandler(denyUpdate, (request) => failAsUpdate(() => decisions.deny(request)), { validator: (request) => rejectIf(decisions.problem('deny', request, Date.now())) });
  // The same decisions as signals: recorded by the server even when no worker runs.
  setHandler(unblockSignal, (request) => decisions.fromSignal('unblock', request));
  setHandler(approveSignal, (request) => decisions.fromSignal('approve', request));
  setHandler(denySignal, (request) => decisions.fromSignal('deny', request));
  setHandler(messageSignal, (message) => {
    // A signal cannot be refused, and a throw here would fail the workflow task: drop what is malformed.
    const problem = v2 ? messageProblem(message) : typeof message?.by !== 'string' || typeof message?.text !== 'string' || !message.text.trim() ? 'malformed' : undefined;
    if (problem) {
      log.warn('Ignored a malformed message signal', { problem });
      return;
    }
    try {
      if (verifiedApprovers) takeMessage(message);
      else state.addGuidance(message);
    } catch (err) {
      log.warn('Ignored a message signal that could not be added', { error: String(err) });
    }
  });

  let publishedStatus: AgentStatus | undefined;
  const publishStatus = () => {
    if (state.agentStatus === publishedStatus) return;
    upsertSearchAttributes([
      { key: AgentStatusKey, value: state.agentStatus },
      { key: AgentNameKey, value: input.agent },
    ]);
    publishedStatus = state.agentStatus;
  };
  publishStatus();
  /** The closing run of a continued task is not the task: `list` and Temporal's UI should not read it as running. */
  const publishContinued = () => {
    if (state.limits.trimConversationTo !== undefined) upsertSearchAttributes([{ key: AgentStatusKey, value: CONTINUED_RUN_STATUS }]);
  };

  /** Waits, durably, for a person; true when they raised the budget that ran out. */
  const blockFor = async (code: string, reason: string, budgetLeft: () => number): Promise<boolean> => {
    state.block(code, reason);
    publishStatus();
    publishPending();
    askPeople('block', code, reason);
    await condition(() => state.phase !== 'blocked');
    publishStatus();
    publishPending();
    return budgetLeft() > 0;
  };

  const finish = async (outcome: TaskOutcome, finalCallWithoutTools = false): Promise<TaskResult> => {
    const result = state.complete(outcome, finalCallWithoutTools);
    // A long final answer was stored by reference: the result holds the text itself.
    if (scope && result.text.search(MARKER_PATTERN) >= 0) result.text = await loadText({ scope, text: result.text });
    publishStatus();
    await noticesDelivered();
    // An update still running (an approve checking an edit) must answer before the task closes.
    await condition(allHandlersFinished);
    return result;
  };

  const setWaitingFor = (text: string | null) => upsertMemo({ waitingFor: text });
  /** Tasks with pending-in-memo: what waits on a person, in the memo, each time it changes. */
  const publishPending = pendingInMemo ? () => upsertMemo(pendingMemo(state)) : () => undefined;

  const awaitApproval = async (approval: ApprovalRequest): Promise<ApprovalRecord> => {
    publishStatus();
    if (pendingInMemo) publishPending();
    else setWaitingFor(`approval ${approval.id}: ${approval.tool} ${JSON.stringify(approval.input).slice(0, 200)}`);
    askPeople('confirm', 'approval_requested', `${approval.tool} ${JSON.stringify(approval.input).slice(0, 200)}: ${approval.reason}`, approval.id);
    const answered = await condition(() => !state.isPending(approval.id), Math.max(1, Date.parse(approval.expiresAt) - Date.now()));
    if (!answered) {
      if (approval.onExpiry === 'block') {
        state.block('approval_expired', `Nobody answered approval ${approval.id} (${approval.tool}) before ${approval.expiresAt}.`);
        publishStatus();
        publishPending();
        askPeople('block', 'approval_expired', `Nobody answered approval ${approval.id} (${approval.tool}) before ${approval.expiresAt}.`, approval.id);
        // Either a late decision or an unblock ends the wait; an unblock counts as "do not run it".
        await condition(() => !state.isPending(approval.id) || state.phase !== 'blocked');
        if (state.phase === 'blocked') state.unblock({ by: 'system', message: `approval ${approval.id} was decided` });
      }
      if (state.isPending(approval.id)) state.decide(approval.id, 'expired', 'expiry', { denyReason: `no decision before ${approval.expiresAt}` });
    }
    if (pendingInMemo) publishPending();
    else setWaitingFor(null);
    publishStatus();
    return state.approvals.find((a) => a.id === approval.id)!;
  };

  const notices: Promise<void>[] = [];
  const inform = async (code: string, message: string): Promise<void> => {
    if (!people) return;
    state.recordInform(code, message);
    const delivery = notify({ taskId: workflowInfo().workflowId, agent: input.agent, level: 'inform', code, message }).catch((err) => {
      if (isCancellation(err)) throw err;
      // A notice that cannot be delivered must not stop the task; it stays in status.
      log.warn('Could not deliver an inform notice', { code, error: (err as Error).message });
    });
    // Rules v2: a slow or failing webhook never delays the task's next step.
    if (v2) notices.push(delivery.catch(() => undefined));
    else await delivery;
  };
  const noticesDelivered = async () => {
    await Promise.all(notices.splice(0));
  };
  /** A person must act (approve, unblock): notify them, never waiting for the delivery. */
  const askPeople = (level: 'confirm' | 'block', code: string, message: string, approvalId?: string): void => {
    if (!people || !v2 || !patched(NOTIFY_PEOPLE_PATCH)) return;
    const delivery = notify({ taskId: workflowInfo().workflowId, agent: input.agent, level, code, message, ...(approvalId ? { approvalId } : {}) }).catch((err) => {
      if (isCancellation(err)) throw err;
      // Undelivered, the request still stands: the task waits in status and in `list --status`.
      log.warn(`Could not deliver a ${level} notice`, { code, error: (err as Error).message });
    });
    notices.push(delivery.catch(() => undefined));
  };

  /**
   * The model call. A conversation too long for the model is compacted (old tool results) and tried
   * once more; a failure a person can fix (a revoked key, a spend limit) blocks, then tries again.
   */
  const callModelOrBlock = async (request: Parameters<typeof callModel>[0]) => {
    let compacted = false;
    for (;;) {
      state.flushGuidance();
      try {
        const reply = await callModel({ ...request, messages: state.messages, ...modelSettings() });
        if (reply.stopReason !== 'model_context_window_exceeded') return reply;
        throw ApplicationFailure.create({
          message: 'The conversation no longer fits the model context window.',
          type: 'resource',
          nonRetryable: true,
          details: [toolError('resource', 'context_too_long', 'The conversation no longer fits the model context window.')],
        });
      } catch (err) {
        if (isCancellation(err) || !people) throw err;
        const error = taskErrorFrom(err);
        if (error.code === 'context_too_long' && !compacted && state.compactOldToolResults() > 0) {
          compacted = true;
          continue;
        }
        if (escalationLevel({ kind: 'model_failed', error }) !== 'block') throw err;
        state.lastError = error;
        await blockFor(`model_${error.code}`, `The model call failed: ${error.error_class}/${error.code}: ${error.detail}`, () => 1);
        // A person chose to go on without content the store lost: the model is told it is gone.
        if (error.code === 'blob_missing') state.forgetMissingBlob(error.detail);
        compacted = false;
      }
    }
  };

  /** Per-call settings: the task's blob scope and a person's overrides (unblock --model / --max-tokens). */
  const modelSettings = () => ({
    ...(scope ? { scope } : {}),
    ...(state.modelOverride.model ? { modelId: state.modelOverride.model } : {}),
    ...(state.modelOverride.maxTokens ? { maxTokens: state.modelOverride.maxTokens } : {}),
    ...(state.droppedTurns ? { droppedTurns: state.droppedTurns } : {}),
  });

  /** Whether audit entries that left state are due for the archive (`force`: any at all). */
  const overflowDue = (force: boolean): boolean => !!scope && state.overflow.length > 0 && (force || state.overflow.length >= OVERFLOW_FLUSH_AT);
  /**
   * Archives audit entries that left state, so status keeps a bounded window and `status --all` the
   * rest. Callers check overflowDue first: most turns have nothing to archive, and every async call
   * costs the workflow a promise (with the SDK's stack capture) even when it returns at once.
   */
  const archiveOverflow = async () => {
    const entries = state.takeOverflow();
    state.archive.push(await storeAudit({ scope: scope!, entries }));
  };

  try {
    if (input.resume && !info.continuedFromExecutionRunId) {
      // Only this workflow's own continue-as-new may hand a run its state: a client that starts a
      // task with a made-up snapshot (say, a policy that allows everything) is refused.
      throw ApplicationFailure.create({ message: 'Invalid task input: `resume` is set by the task itself when it continues as new; a new task cannot start with one.', type: 'invalid_input', nonRetryable: true });
    }
    const manifest =
      input.resume?.manifest && !configFromWorker ? input.resume.manifest : await describeAgent({ agent: input.agent, ...(input.model ? { model: input.model } : {}) });
    if (!input.resume) state.begin(manifest);
    else state.adoptManifest(manifest);
    if (verifiedApprovers) {
      const gate = new ApproverGate(info.workflowId, manifest.approverKeys ?? [], manifest.policy, state.starter);
      if (!input.resume) {
        // Checked at the time the server accepted the start, not when a worker got to it.
        const starter = gate.starterOf(input, info.startTime.getTime());
        if (starter.problem && manifest.policy?.forbidSelfApproval) {
          // Self-approval cannot be ruled out for a starter nobody vouched for: refuse the task.
          const error = toolError('policy', 'unverified_starter', `Agent ${manifest.name} forbids self-approval, so its tasks must be started with a start claim signed by a trusted front end: ${starter.problem}`, 'Start the task through TaskClient.start with a signer (or the durable-agent CLI with a signing key).');
          throw ApplicationFailure.create({ message: error.detail, type: error.error_class, nonRetryable: true, details: [error] });
        }
        state.starter = starter;
        gate.starter = starter;
      }
      state.approverStatus = gate.status();
      approverGate = gate;
      for (const message of earlyMessages.splice(0)) takeMessage(message);
    }
    const firstTurnOfRun = state.turn;
    const everyTurns = input.continueAsNewEveryTurns ?? DEFAULT_CONTINUE_AS_NEW_EVERY_TURNS;
    const tools = new Map(manifest.tools.map((t) => [t.name, t]));
    // Per run: after a continue-as-new each read proves itself fast again on the regular path.
    const fastReads = v2 ? new FastReads() : undefined;
    const baseSpecs: ToolSpec[] = manifest.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema }));
    const recallSpec: ToolSpec = { name: RECALL_TOOL_MANIFEST.name, description: RECALL_TOOL_MANIFEST.description, input_schema: RECALL_TOOL_MANIFEST.inputSchema };
    // Once something was compacted the model may ask for it back (an agent's own tool of that name wins).
    const toolSpecs = (): ToolSpec[] => {
      if (!state.offersRecall || manifest.tools.some((t) => t.name === RECALL_TOOL_MANIFEST.name)) return baseSpecs;
      tools.set(RECALL_TOOL_MANIFEST.name, RECALL_TOOL_MANIFEST);
      return [...baseSpecs, recallSpec];
    };
    const contextWindow = (manifest.model.provider === 'anthropic' && manifest.model.contextWindowTokens) || state.limits.contextWindowTokens;
    const fixedPromptChars = manifest.system.length + JSON.stringify(baseSpecs).length;
    let withoutTools = false;
    let continuations = 0;
    let continueAsNewAfterTurn = firstTurnOfRun + everyTurns;

    for (;;) {
      // Between turns, a long task starts a fresh run carrying its state, so no run's history grows
      // without bound (old tool results are compacted on the way).
      if (canContinueAsNew && !withoutTools && continuations === 0 && !v2 && (state.turn - firstTurnOfRun >= everyTurns || workflowInfo().continueAsNewSuggested)) {
        state.compactOldToolResults(10);
        await condition(allHandlersFinished);
        const { resume: _previous, ...rest } = input;
        await continueAsNew<typeof agentTask>({ ...rest, resume: state.snapshot() });
      }
      if (v2 && !withoutTools && continuations === 0 && (state.turn >= continueAsNewAfterTurn || workflowInfo().continueAsNewSuggested) && state.turn > firstTurnOfRun) {
        await noticesDelivered();
        state.spillEvents();
        if (overflowDue(true)) await archiveOverflow();
        await condition(allHandlersFinished);
        const fitted = state.fittedSnapshot(state.limits.snapshotCeilingBytes);
        if ('snapshot' in fitted) {
          const { resume: _previous, ...rest } = input;
          publishContinued();
          await continueAsNew<typeof agentTask>({ ...rest, resume: fitted.snapshot });
        }
        // Temporal would terminate a run whose continue-as-new input is too large, losing the task:
        // a person decides instead, and the task goes on in this run meanwhile.
        await blockFor(
          'state_too_large',
          `The task's state is ${fitted.bytes} bytes after shrinking (${fitted.shrunk.join(', ') || 'nothing to shrink'}), above the ${state.limits.snapshotCeilingBytes}-byte ceiling for a new run. Unblock to go on in this run; it tries again after ${everyTurns} more turns.`,
          () => 1,
        );
        continueAsNewAfterTurn = state.turn + everyTurns;
      }
      if (v2 && overflowDue(false)) await archiveOverflow();
      if (state.turnsLeft === 0 && !withoutTools) {
        if (!guarded) return await finish('max_turns');
        const raised = await blockFor('turn_budget', `The task used all ${state.budgets.turns} turns.`, () => state.turnsLeft);
        // Unblocked without more turns: one last call, without tools, to answer with what it has.
        if (!raised) withoutTools = true;
      }
      const spent = state.spentSpendBudget();
      if (spent) {
        const raised = await blockFor(spent.code, spent.reason, () => (state.spentSpendBudget() ? 0 : 1));
        if (!raised) return await finish('budget_exhausted');
      }
      state.startTurn();
      publishStatus();
      if (v2) state.compactForContext(contextWindow, fixedPromptChars);
      const reply = await callModelOrBlock({
        model: manifest.model,
        system: manifest.system,
        messages: state.messages,
        // The last call without tools keeps their definitions (the API requires them while the
        // conversation holds tool blocks) and forbids calling them.
        ...(v2 ? { tools: toolSpecs(), ...(withoutTools ? { toolChoice: 'none' as const } : {}) } : { tools: withoutTools ? [] : toolSpecs() }),
      });
      state.recordModelTurn(reply);

      if (reply.stopReason === 'refusal') return await finish('refused');
      const uses = toolUsesOf(reply.content);
      if (reply.stopReason === 'max_tokens' && uses.length === 0) {
        // Cut off mid-answer. v2: a user turn asks the model to go on (no prefill); v1 (old
        // histories): the conversation ended with the partial answer.
        continuations += 1;
        if (continuations <= (v2 ? state.limits.maxContinuations : MAX_CONTINUATIONS) && state.turnsLeft > 0) {
          if (v2) state.continueCutAnswer();
          continue;
        }
        return await finish('max_tokens');
      }
      continuations = 0;
      if (uses.length > 0) state.clearAnswerParts();
      if (uses.length === 0 || withoutTools) {
        // pause_turn: the API paused a long turn; sending the conversation back resumes it.
        if (reply.stopReason === 'pause_turn' && !withoutTools) continue;
        // A person's message arrived while the model answered: it reads it before the task ends.
        if (!withoutTools && state.hasPendingGuidance) continue;
        return await finish(withoutTools ? 'budget_exhausted' : 'answered', withoutTools);
      }

      const turn = await runTurnTools(
        {
          state,
          agent: input.agent,
          tools,
          nowMs: () => Date.now(),
          guarded,
          ...(people ? { policy: manifest.policy ?? {} } : {}),
          ...(scope ? { scope, chain: `${info.workflowId}:${info.firstExecutionRunId}` } : {}),
          awaitApproval,
          inform,
          prepareToolCall,
          ...(fastReads ? { fastReads } : {}),
        },
        uses,
      );
      state.addToolResults(turn.results, guarded ? [state.budgetNote()] : []);
      if (turn.perTurnBudgetSpent) withoutTools = true;
      if (turn.escalation) {
        const isBudget = turn.escalation.code === 'tool_call_budget';
        const raised = await blockFor(turn.escalation.code, turn.escalation.reason, () => (isBudget ? state.toolCallsLeft : 1));
        if (!raised) withoutTools = true;
      }
    }
  } catch (err) {
    if (err instanceof ContinueAsNew) throw err;
    if (isCancellation(err)) {
      state.cancel();
      await CancellationScope.nonCancellable(async () => publishStatus());
      throw err;
    }
    const error = taskErrorFrom(err);
    state.fail(error);
    publishStatus();
    // Failing the workflow (not the workflow task): a retry of the task would wedge it forever.
    throw ApplicationFailure.create({ message: error.detail, type: error.error_class, nonRetryable: true, details: [error] });
  }
}

/**
 * Why this run may not start, or undefined. Cron runs and workflow retries get the first run's
 * input again (a `resume` included) and set continuedFromExecutionRunId just as continue-as-new
 * does, so they are refused outright: a schedule starts a new task each time instead, and the
 * engine retries per activity. A reset run keeps the started event of the run it resets, so it
 * passes only where that run was itself this task's own continuation.
 */
function runOriginProblem(input: TaskInput, info: ReturnType<typeof workflowInfo>): string | undefined {
  if (info.cronSchedule) return 'agentTask does not run on a cron schedule (each run would repeat the whole task); use a Temporal Schedule that starts a new task each time.';
  if (info.retryPolicy) return 'agentTask does not take a workflow retry policy (a retry would repeat the whole task and its writes); activities are retried per error class instead.';
  const resumed = input !== null && typeof input === 'object' && input.resume !== undefined;
  if (!resumed) return undefined;
  if (!info.continuedFromExecutionRunId || info.attempt > 1 || info.lastFailure !== undefined || info.lastResult !== undefined) {
    return '`resume` is set by the task itself when it continues as new; a new task cannot start with one.';
  }
  return undefined;
}

/** Validators reject by throwing; the reason reaches the caller and nothing reaches history. */
function rejectIf(problem: string | undefined): void {
  if (problem) throw new Error(problem);
}

/**
 * An accepted update whose handler hits something unexpected fails that update (the caller sees
 * why), never the workflow task: a plain exception there would retry the task forever and wedge it.
 */
function failAsUpdate<T>(handler: () => T): T {
  try {
    return handler();
  } catch (err) {
    throw asUpdateFailure(err);
  }
}

async function failAsUpdateAsync<T>(handler: () => Promise<T>): Promise<T> {
  try {
    return await handler();
  } catch (err) {
    throw asUpdateFailure(err);
  }
}

function asUpdateFailure(err: unknown): unknown {
  if (err instanceof ApplicationFailure || isCancellation(err)) return err;
  return ApplicationFailure.create({ message: `the update could not be applied: ${err instanceof Error ? err.message : String(err)}`, type: 'update_failed', nonRetryable: true });
}

function taskErrorFrom(err: unknown): ToolError {
  if (err instanceof ApplicationFailure && isToolError(err.details?.[0])) return err.details[0];
  const cause = (err as { cause?: unknown })?.cause;
  if (cause instanceof ApplicationFailure && isToolError(cause.details?.[0])) return cause.details[0];
  const message = err instanceof Error ? `${err.message}${cause instanceof Error ? `: ${cause.message}` : ''}` : String(err);
  return toolError('permanent', 'task_failed', message);
}

function assertValidInput(input: TaskInput): void {
  const problem = taskInputProblem(input);
  if (problem) throw ApplicationFailure.create({ message: `Invalid task input: ${problem}`, type: 'invalid_input', nonRetryable: true });
}

/** The checks of the first release, kept so its histories fail (or not) exactly as recorded. */
function legacyInputChecks(input: TaskInput): void {
  const problems: string[] = [];
  if (!input || typeof input !== 'object') problems.push('input must be an object');
  else {
    if (typeof input.agent !== 'string' || !input.agent) problems.push('`agent` must be a non-empty string');
    if (typeof input.prompt !== 'string' || !input.prompt.trim()) problems.push('`prompt` must be a non-empty string');
    if (input.maxTurns !== undefined && !(Number.isInteger(input.maxTurns) && input.maxTurns >= 1)) {
      problems.push('`maxTurns` must be an integer >= 1');
    }
    for (const [name, value] of Object.entries(input.budgets ?? {})) {
      const ok = name === 'costUsd' ? typeof value === 'number' && value > 0 : Number.isInteger(value) && (value as number) >= 1;
      if (!ok) problems.push(`\`budgets.${name}\` must be ${name === 'costUsd' ? 'a positive number' : 'an integer >= 1'}`);
    }
  }
  if (problems.length) {
    throw ApplicationFailure.create({ message: `Invalid task input: ${problems.join('; ')}`, type: 'invalid_input', nonRetryable: true });
  }
}
