/**
 * Runs the tool calls of one model turn through every guard, in order: the per-turn and per-task
 * budgets, the permission gate, the self-correction bound, the ledger, the activity (with fallbacks
 * for permanent failures), then the loop detector. Returns the tool_result blocks and, when a
 * person must step in, why.
 */
import { ActivityFailure, ApplicationFailure, isCancellation, patched, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import { describeAgentOptions } from './activity-options';
import type { ToolManifest } from '../protocol/agent-manifest';
import { DEFAULT_APPROVAL_TIMEOUT_MS, type ApprovalRecord, type ApprovalRequest, type PermissionPolicy } from '../protocol/task';
import { escalationLevel } from './escalation-policy';
import type { AgentActivities } from '../protocol/activity-contracts';
import type { ToolResultBlock, ToolUseBlock } from '../protocol/messages';
import { toolError, type ToolError } from '../protocol/tool-error';
import { toolErrorFromFailure } from './activity-failures';
import { fastReadOptions, localToolCallOptions, toolCallOptions } from './activity-options';
import { failedForGood, type FastReads } from './fast-reads';
import { callKey } from './canonical-key';
import type { TaskState } from './task-state';
import { gateToolCall } from '../rules/tool-gate';
import { outcomeUnknown } from '../protocol/outcome-unknown';
import { errorBlock, summarizeOutput } from '../rules/tool-result-content';
import { askPerson, MAX_QUESTIONS_PER_CALL, MCP_TOOLS_PATCH, questionIn } from './tool-questions';
import type { ToolOutcome, ToolQuestionAnswer } from '../protocol/activity-contracts';
import { requestApproval } from './approvals';
import { toolsForCall } from './call-effect';
import { ruleBook, type RuleBook } from './legacy';
import type { Delegation } from './delegation';
import { REPEATED_EFFECT_TYPE, repeatReason, type EffectRecord } from '../protocol/fork';

export interface TurnContext {
  state: TaskState;
  agent: string;
  tools: ReadonlyMap<string, ToolManifest>;
  nowMs: () => number;
  /** False when replaying a history recorded before the guards existed (see patched('guarded-calls')). */
  guarded: boolean;
  /** The permission policy; undefined when replaying a history from before approvals. */
  policy?: PermissionPolicy;
  /** Waits durably for a person's decision on `approval` (or its expiry). */
  awaitApproval(approval: ApprovalRequest): Promise<ApprovalRecord>;
  /** Notifies people (inform level): notifier activity plus an event in status. */
  inform(code: string, message: string): Promise<void>;
  /** The task's blob scope (bounded state); absent when replaying older histories. */
  scope?: string;
  /** `<workflowId>:<firstExecutionRunId>`: the prefix of the idempotency keys the workflow issues (keyed tool calls). */
  chain?: string;
  /** The task's prepareToolCall (its options depend on the task's markers). */
  prepareToolCall?: AgentActivities['prepareToolCall'];
  /** Which reads run locally (fast reads); absent when replaying older histories. */
  fastReads?: FastReads;
  /** The agent's sub-agents (delegation.ts); absent for an agent without any. */
  delegation?: Delegation;
  /** Whether this run's writes go through the effect journal (asks the effect-journal marker once, at the first write). */
  effectJournal?: () => boolean;
}

const { prepareToolCall: prepareWithoutHeartbeats } = proxyActivities<AgentActivities>(describeAgentOptions);

export interface TurnOutcome {
  results: ToolResultBlock[];
  /** Set when the turn needs a person before the task goes on. */
  escalation?: { code: string; reason: string };
  /** The model asked for more tool calls than one turn allows: it answers next without tools. */
  perTurnBudgetSpent: boolean;
}

interface Answer {
  content: string;
  isError: boolean;
  error?: ToolError;
  ran: boolean;
  /** The key the call ran under, when the workflow issued one. */
  idempotencyKey?: string;
  /** A write that may or may not have taken effect. */
  outcomeUnknown?: boolean;
}

const bookOf = (ctx: TurnContext) => ruleBook(ctx.state.limits.rulesVersion);

/**
 * The turn's calls, one after the other. Written with `then` rather than async/await, here and in
 * the functions below: each async layer costs the workflow two promises per call (its own and the
 * caller's await), each with the SDK's stack capture, where a `then` costs one and hands the answer
 * on at the same tick.
 */
export function runTurnTools(ctx: TurnContext, uses: ToolUseBlock[]): Promise<TurnOutcome> {
  const outcome: TurnOutcome = { results: [], perTurnBudgetSpent: false };
  const delegating = ctx.delegation && ctx.guarded ? uses.filter((use) => ctx.tools.get(use.name)?.delegatesTo !== undefined) : [];
  if (delegating.length > 0) return runWithDelegations(ctx, uses, delegating, outcome);
  const from = (index: number): TurnOutcome | Promise<TurnOutcome> => {
    const use = uses[index];
    if (!use) return outcome;
    return answerFor(ctx, use, index, outcome).then((answer) => {
      outcome.results.push(toBlock(use.id, answer, ctx.state.toolCallsLeft));
      return from(index + 1);
    });
  };
  return Promise.resolve(from(0));
}

/** One call through the guards (a guarded task), with the tools its input makes it (a read command is a read). */
function answerFor(ctx: TurnContext, use: ToolUseBlock, index: number, outcome: TurnOutcome): Promise<Answer> {
  if (!ctx.guarded) return unguardedAnswer(ctx, use);
  const tools = toolsForCall(ctx.tools, use);
  return guardedAnswer(tools === ctx.tools ? ctx : { ...ctx, tools }, use, index, outcome);
}

/**
 * A turn with delegation calls: those run at once (each child task is its own workflow); the other
 * calls run in order meanwhile, as always. Results keep the order of the calls.
 */
async function runWithDelegations(ctx: TurnContext, uses: ToolUseBlock[], delegating: ToolUseBlock[], outcome: TurnOutcome): Promise<TurnOutcome> {
  ctx.delegation!.beginTurn(delegating.length);
  const children: Promise<void>[] = [];
  for (const [index, use] of uses.entries()) {
    const slot = outcome.results.length;
    outcome.results.push(undefined as unknown as ToolResultBlock);
    const answering = answerFor(ctx, use, index, outcome).then((answer) => {
      outcome.results[slot] = toBlock(use.id, answer, ctx.state.toolCallsLeft);
    });
    if (delegating.includes(use)) children.push(answering);
    else await answering;
  }
  await Promise.all(children);
  return outcome;
}

function guardedAnswer(ctx: TurnContext, use: ToolUseBlock, index: number, outcome: TurnOutcome): Promise<Answer> {
  const { state } = ctx;
  const refuse = (error: ToolError): Answer => {
    state.recordToolFailed(use.name, use.id, error, false);
    return { content: '', isError: true, error, ran: false };
  };

  if (index >= state.budgets.toolCallsPerTurn) {
    outcome.perTurnBudgetSpent = true;
    return Promise.resolve(
      refuse(
        toolError(
          'policy',
          'turn_tool_budget',
          `Only ${state.budgets.toolCallsPerTurn} tool calls are allowed in one turn; this one was not run.`,
          'Answer now with what you have; no more tools are available for this task.',
        ),
      ),
    );
  }
  if (state.toolCallsLeft <= 0) {
    outcome.escalation ??= { code: 'tool_call_budget', reason: `The task used all ${state.budgets.toolCalls} tool calls.` };
    return Promise.resolve(
      refuse(
        toolError('policy', 'task_tool_budget', `The task's ${state.budgets.toolCalls} tool calls are spent; this one was not run.`, 'A person has been asked to raise the budget or stop the task.'),
      ),
    );
  }
  const gate = gateToolCall(use.name, ctx.tools, ctx.policy);
  const key = callKey(use.name, use.input, ctx.tools.get(use.name)?.inputSchema, bookOf(ctx).coercedCallKeys);
  const ledgerSays = gate.action === 'run' ? state.ledger.decide(gate.tool, key, state.turn, ctx.nowMs()) : undefined;
  // What every answer goes through: the correction bound (where the model's call was judged), escalation, the ledger.
  const settle = (callKeyUsed: string, answer: Answer, corrects = true): Answer | Promise<Answer> => {
    if (corrects) trackCorrections(state, use.name, answer);
    return afterCall(ctx, use, callKeyUsed, answer, outcome);
  };
  if (gate.action === 'refuse') return Promise.resolve(settle(key, refuse(gate.error), false));
  if (gate.action === 'confirm' || ledgerSays?.action === 'confirm') {
    const reason = gate.action === 'confirm' ? gate.reason : (ledgerSays as { reason: string }).reason;
    return confirmThenRun(ctx, gate.tool, use, reason, refuse).then((confirmed) => settle(confirmed.key, confirmed.answer));
  }
  if ((state.corrections[use.name] ?? 0) >= state.budgets.correctionsPerTool) {
    outcome.escalation ??= {
      code: 'correction_budget',
      reason: `The model sent ${state.corrections[use.name]} invalid calls to ${use.name} in a row.`,
    };
    return Promise.resolve(
      settle(
        key,
        refuse(
          toolError(
            'policy',
            'correction_budget',
            `${use.name} was refused: ${state.corrections[use.name]} invalid calls in a row.`,
            'A person has been asked to help; explain what you are trying to do.',
          ),
        ),
        false,
      ),
    );
  }
  const decision = ledgerSays!;
  if (decision.action === 'refuse') return Promise.resolve(settle(key, refuse(decision.error)));
  if (decision.action === 'reuse') {
    state.recordToolReused(use.name, use.id, decision.fromTurn);
    const note = `answered from the ledger: the same call ran in turn ${decision.fromTurn}; not run again`;
    return Promise.resolve(settle(key, { content: `{"ledger":${JSON.stringify(note)},"result":${decision.outcome.content}}`, isError: false, ran: false }));
  }
  return execute(ctx, gate.tool, use, true, use.input, decision.action === 'run' ? decision.idempotencyKey : undefined).then((answer) => settle(key, answer));
}

/** After a call's answer: a failure may need a person (escalation) or a notice; the ledger records it, and may find a loop. */
function afterCall(ctx: TurnContext, use: ToolUseBlock, key: string, answer: Answer, outcome: TurnOutcome): Answer | Promise<Answer> {
  if (answer.ran && answer.error) {
    const manifest = ctx.tools.get(use.name);
    const level = escalationLevel({
      kind: 'tool_error',
      error: answer.error,
      effect: manifest?.effect ?? 'destructive',
      idempotent: manifest?.idempotent ?? false,
      ...(bookOf(ctx).stateAwareLedger ? { outcomeUnknown: answer.outcomeUnknown ?? false } : {}),
    });
    if (level === 'block') {
      const unknown = bookOf(ctx).stateAwareLedger ? answer.outcomeUnknown === true : answer.error.code === 'timeout';
      outcome.escalation ??= {
        code: unknown ? 'outcome_unknown' : `${answer.error.error_class}_error`,
        reason: unknown
          ? `${use.name} ${JSON.stringify(use.input).slice(0, 500)} ${answer.error.code === 'timeout' ? 'timed out' : `failed after the request may have been sent (${answer.error.code})`}; it is not idempotent, so it may or may not have taken effect. Check, then unblock with what you found.`
          : `${use.name}: ${answer.error.detail}`,
      };
    }
    if (level === 'inform') {
      return ctx
        .inform(`${answer.error.error_class}_${answer.error.code}`, `${use.name} failed after ${answer.error.attempts} attempts: ${answer.error.detail}`)
        .then(() => recordInLedger(ctx, use, key, answer, outcome));
    }
  }
  return recordInLedger(ctx, use, key, answer, outcome);
}

function recordInLedger(ctx: TurnContext, use: ToolUseBlock, key: string, answer: Answer, outcome: TurnOutcome): Answer {
  const { state } = ctx;
  const outcomeForLedger = {
    content: answer.content,
    isError: answer.isError,
    ...(answer.error ? { errorClass: answer.error.error_class, code: answer.error.code } : {}),
    ...(answer.outcomeUnknown ? { outcomeUnknown: true } : {}),
  };
  const manifest = ctx.tools.get(use.name);
  const looping = state.ledger.record(key, bookOf(ctx).stateAwareLedger && manifest ? manifest : use.name, state.turn, ctx.nowMs(), outcomeForLedger, answer.ran, answer.idempotencyKey);
  if (looping && escalationLevel({ kind: 'guard', code: 'loop_detected' }) === 'block') {
    const turns = state.ledger.streakTurns(key);
    const error = toolError(
      'policy',
      'loop_detected',
      `This exact call got the same answer in turns ${turns.join(', ')}.`,
      'Stop repeating it. A person has been asked to look at the task; explain what you need.',
    );
    outcome.escalation ??= { code: 'loop_detected', reason: `${use.name} was called with the same arguments and got the same answer in turns ${turns.join(', ')}.` };
    state.recordToolFailed(use.name, use.id, error, false);
    return { content: answer.content, isError: true, error, ran: answer.ran };
  }
  return answer;
}

function trackCorrections(state: TaskState, tool: string, answer: Answer): void {
  if (answer.error?.error_class === 'model') state.corrections[tool] = (state.corrections[tool] ?? 0) + 1;
  else if (!answer.isError) state.corrections[tool] = 0;
}

/** The behaviour recorded in histories from before the guards: gate, then run. */
async function unguardedAnswer(ctx: TurnContext, use: ToolUseBlock): Promise<Answer> {
  const gate = gateToolCall(use.name, ctx.tools);
  if (gate.action === 'refuse') {
    ctx.state.recordToolFailed(use.name, use.id, gate.error);
    return { content: '', isError: true, error: gate.error, ran: false };
  }
  return execute(ctx, gate.tool, use, false);
}

/**
 * The confirm path: validate the arguments first (a person should not approve a call that cannot
 * run), ask, wait durably, then run exactly what was approved, or tell the model no.
 */
async function confirmThenRun(ctx: TurnContext, tool: ToolManifest, use: ToolUseBlock, reason: string, refuse: (error: ToolError) => Answer): Promise<{ key: string; answer: Answer }> {
  const { state } = ctx;
  const prepared = await (ctx.prepareToolCall ?? prepareWithoutHeartbeats)({ agent: ctx.agent, tool: tool.name, input: use.input, ...(ctx.scope ? { scope: ctx.scope } : {}) });
  const key = callKey(tool.name, prepared.ok ? prepared.input : use.input, tool.inputSchema, bookOf(ctx).coercedCallKeys);
  if (!prepared.ok) return { key, answer: refuse(prepared.error) };

  const ledger = state.ledger.decide(tool, key, state.turn, ctx.nowMs());
  if (ledger.action === 'refuse' && ledger.error.code !== 'duplicate_write') return { key, answer: refuse(ledger.error) };
  const why = ledger.action === 'refuse' ? `${ledger.error.detail} Approve only if it must run again.` : ledger.action === 'confirm' ? ledger.reason : reason;
  const policy = ctx.policy ?? {};
  const approval = requestApproval(state, {
    tool: tool.name,
    toolUseId: use.id,
    input: prepared.input,
    inputHash: key,
    effect: tool.effect,
    reason: why,
    expiresAt: new Date(ctx.nowMs() + (policy.approvalTimeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS)).toISOString(),
    onExpiry: policy.onExpiry ?? 'deny',
  });
  const decision = await ctx.awaitApproval(approval);
  if (decision.decision !== 'approved') {
    const expired = decision.decision === 'expired';
    return {
      key,
      answer: refuse(
        toolError(
          'policy',
          expired ? 'approval_expired' : 'denied_by_person',
          expired ? `Nobody approved ${tool.name} before ${approval.expiresAt}; it did not run.` : `${decision.by} denied ${tool.name}: ${decision.denyReason}`,
          'Do not retry it. Read-only tools are still allowed; otherwise tell the user what you wanted to do.',
        ),
      ),
    };
  }
  const edited = decision.editedInput !== undefined;
  const reuseKey = ledger.action === 'run' ? ledger.idempotencyKey : undefined;
  const ran = await execute(ctx, tool, use, true, edited ? decision.editedInput : prepared.input, reuseKey, { id: decision.id, by: decision.by });
  if (ran.isError) return { key, answer: ran };
  const note = {
    approved_by: decision.by,
    ...(decision.comment ? { comment: decision.comment } : {}),
    ...(edited ? { edited: 'A person changed the arguments; these ran instead of yours.', input_that_ran: decision.editedInput } : {}),
  };
  return { key, answer: { ...ran, content: `{"approval":${JSON.stringify(note)},"result":${ran.content}}` } };
}

/**
 * Runs the call; a tool with fallbacks gets them tried when it fails for good. Not async itself: a
 * tool without fallbacks hands on the call's own promise, since every async layer costs the workflow
 * a promise (and the SDK a stack capture for it) on every turn.
 */
function execute(ctx: TurnContext, tool: ToolManifest, use: ToolUseBlock, withFallbacks = true, input: unknown = use.input, reuseKey?: string, approval?: { id: string; by: string }): Promise<Answer> {
  if (!withFallbacks || tool.fallbacks.length === 0) return runOnce(ctx, tool, input, use.id, use.name, reuseKey, approval);
  return executeWithFallbacks(ctx, tool, use, input, reuseKey, approval);
}

async function executeWithFallbacks(ctx: TurnContext, tool: ToolManifest, use: ToolUseBlock, input: unknown, reuseKey?: string, approval?: { id: string; by: string }): Promise<Answer> {
  const primary = await runOnce(ctx, tool, input, use.id, use.name, reuseKey, approval);
  if (!primary.error || primary.error.error_class !== 'permanent') return primary;

  const tried: string[] = [];
  for (const name of tool.fallbacks) {
    const fallback = ctx.tools.get(name);
    if (!fallback || ctx.state.toolCallsLeft <= 0) break;
    const attempt = await runOnce(ctx, fallback, input, `${use.id}-fallback-${name}`, name, undefined, approval);
    if (!attempt.isError || !attempt.error) {
      if (escalationLevel({ kind: 'fallback_used' }) === 'inform') {
        await ctx.inform('fallback_used', `${tool.name} failed (${primary.error.error_class}/${primary.error.code}); ${name} answered instead.`);
      }
      return {
        content: JSON.stringify({ used_fallback: name, primary_error: primary.error, result: JSON.parse(attempt.content) }),
        isError: false,
        ran: true,
      };
    }
    tried.push(`${name} (${attempt.error.error_class}/${attempt.error.code})`);
  }
  const error: ToolError = {
    ...primary.error,
    detail: `${primary.error.detail} Alternatives tried: ${tried.join(', ') || 'none available'}.`,
    hint: `${tool.name} and its fallbacks failed for good; do something else or tell the user.`,
  };
  return { ...primary, error };
}

/** One logical tool call: what every attempt of it (a fast read sent back, a question answered) shares. */
interface ToolCall {
  ctx: TurnContext;
  tool: ToolManifest;
  input: unknown;
  toolUseId: string;
  name: string;
  book: RuleBook;
  idempotencyKey: string | undefined;
  approval: { id: string; by: string } | undefined;
  /** The write goes through the effect journal (effect-journal marker). */
  journaled: boolean;
  /** A person approved running again a write the journal says already ran. */
  repeatApproval?: { id: string; by: string };
  runsLocally: boolean;
  /** People's answers to the questions this call asked (MCP elicitation): the call runs again with them. */
  answers: ToolQuestionAnswer[];
}

/**
 * Runs the call until it has an answer. Not async: each attempt's activity promise gets one `then`
 * (an async function awaiting it costs two promises, each with the SDK's stack capture), and the
 * answer reaches the caller on the same tick an `await` would give it.
 */
function runOnce(ctx: TurnContext, tool: ToolManifest, input: unknown, toolUseId: string, name: string, reuseKey?: string, approval?: { id: string; by: string }): Promise<Answer> {
  const { state } = ctx;
  state.recordToolCalled(name, toolUseId, input);
  if (tool.delegatesTo !== undefined && ctx.delegation) return delegated(ctx, tool, input, toolUseId);
  const book = bookOf(ctx);
  // Issued by the workflow: unique per logical call in this task chain (the call counter never
  // repeats, whatever ids the model sends), the same on every retry; a repeat of a call whose
  // outcome is unknown reuses its key so the service can only do it once.
  const idempotencyKey = book.keyedToolCalls && ctx.chain ? (reuseKey ?? `${ctx.chain}:${state.toolCalls.total}`) : undefined;
  // A write goes through the journal: the worker records it, and refuses one that already ran before a reset or in an ancestor.
  const journaled = tool.effect !== 'read' && ctx.scope !== undefined && ctx.policy !== undefined && ctx.effectJournal?.() === true;
  return attempt({ ctx, tool, input, toolUseId, name, book, idempotencyKey, approval, journaled, runsLocally: ctx.fastReads?.runsLocally(tool) ?? false, answers: [] });
}

function attempt(call: ToolCall): Promise<Answer> {
  const { ctx, tool, book, answers } = call;
  const { state } = ctx;
  const approval = call.repeatApproval ?? call.approval;
  const runsLocally = call.runsLocally;
  const { runTool } = runsLocally
    ? proxyLocalActivities<AgentActivities>(fastReadOptions(tool))
    : tool.local
      ? proxyLocalActivities<AgentActivities>(localToolCallOptions(tool))
      : proxyActivities<AgentActivities>(toolCallOptions(tool, book.keyedToolCalls));
  const startedMs = ctx.nowMs();
  let running: Promise<ToolOutcome>;
  try {
    running = runTool({
      agent: ctx.agent,
      tool: call.name,
      input: call.input,
      toolUseId: call.toolUseId,
      ...(ctx.scope ? { scope: ctx.scope } : {}),
      ...(call.idempotencyKey ? { idempotencyKey: call.idempotencyKey } : {}),
      ...(book.keyedToolCalls && approval ? { approval } : {}),
      ...(answers.length ? { answers: [...answers] } : {}),
      ...(call.journaled ? { turn: state.turn, ...(state.lineage.length ? { lineage: state.lineage } : {}) } : {}),
      ...(call.repeatApproval ? { repeatApprovedBy: call.repeatApproval.id } : {}),
      ...(state.readRecording && tool.effect === 'read' ? { readRecording: state.readRecording } : {}),
    });
  } catch (err) {
    return Promise.resolve(afterFailure(call, err));
  }
  return running.then(
    (result) => {
      try {
        if (!runsLocally) ctx.fastReads?.observed(tool, ctx.nowMs() - startedMs);
        return succeeded(call, result);
      } catch (err) {
        return failed(call, err);
      }
    },
    (err: unknown) => afterFailure(call, err),
  );
}

/** A failed attempt: a fast read goes back to the regular path, a question goes to a person, anything else is the answer. */
function afterFailure(call: ToolCall, err: unknown): Answer | Promise<Answer> {
  const { ctx, tool } = call;
  try {
    if (call.runsLocally && !isCancellation(err) && !failedForGood(err)) {
      // A read is safe to repeat: the regular path runs it again, with its heartbeat and retries.
      ctx.fastReads!.demote(tool);
      call.runsLocally = false;
      return attempt(call);
    }
    const earlier = call.journaled && !call.repeatApproval && !isCancellation(err) ? repeatedEffectIn(err) : undefined;
    if (earlier) return confirmRepeat(ctx, tool, call, earlier).then((decision) => afterRepeatDecision(call, earlier, decision));
    const question = isCancellation(err) ? undefined : questionIn(err);
    // patched() only here: tasks that never met a question keep their histories unchanged.
    if (!question || call.answers.length >= MAX_QUESTIONS_PER_CALL || !ctx.policy || !patched(MCP_TOOLS_PATCH)) return failed(call, err);
    return askPerson(ctx.state, ctx.awaitApproval, ctx.policy, ctx.nowMs(), { tool, name: call.name, toolUseId: call.toolUseId, input: call.input }, question).then(
      (answer) => {
        call.answers.push(answer);
        return attempt(call);
      },
      (askFailed: unknown) => failed(call, askFailed),
    );
  } catch (thrown) {
    return failed(call, thrown);
  }
}

/** A person's answer on running a write again: approved, it runs (with the approval named); else the model is told. */
function afterRepeatDecision(call: ToolCall, earlier: EffectRecord, decision: ApprovalRecord): Answer | Promise<Answer> {
  if (decision.decision === 'approved') {
    call.repeatApproval = { id: decision.id, by: decision.by };
    return attempt(call);
  }
  const expired = decision.decision === 'expired';
  const error = toolError(
    'policy',
    expired ? 'approval_expired' : 'denied_by_person',
    `${call.name} already ran (in ${earlier.taskId} at turn ${earlier.turn}) and ${expired ? 'nobody approved running it again' : `${decision.by} denied running it again: ${decision.denyReason}`}; it did not run now.`,
    `Its earlier result: ${earlier.outcome.summary}. Do not call it again; go on from that result.`,
  );
  call.ctx.state.recordToolFailed(call.name, call.toolUseId, error, false);
  return { content: '', isError: true, error, ran: false };
}

function succeeded(call: ToolCall, result: ToolOutcome): Answer {
  const { state } = call.ctx;
  if (result.kind === 'flagged') {
    state.recordToolSucceeded(call.name, call.toolUseId, `${result.error.error_class}: ${result.error.detail}`);
    return { content: JSON.stringify({ data: result.output, note: result.error }), isError: result.error.error_class === 'semantic', error: result.error, ran: true };
  }
  state.recordToolSucceeded(call.name, call.toolUseId, result.summary ?? summarizeOutput(result.output));
  return { content: JSON.stringify(result.output), isError: false, ran: true };
}

/** The call failed for good: its ToolError is the answer (a cancellation is not a tool error: it goes on up). */
function failed(call: ToolCall, err: unknown): Answer {
  if (isCancellation(err)) throw err;
  const { tool, book, idempotencyKey } = call;
  let error = toolErrorFromFailure(err, tool);
  const unknown = book.stateAwareLedger && tool.effect !== 'read' && outcomeUnknown(error);
  if (unknown) {
    error = {
      ...error,
      retryable: false,
      hint: tool.idempotent
        ? 'The outcome is unknown: it may or may not have taken effect. Check with a read first; calling it again with exactly the same arguments reuses the same idempotency key, so it cannot happen twice.'
        : 'The outcome is unknown: it may or may not have taken effect, and it is not safe to repeat. A person has been asked to check.',
    };
  }
  call.ctx.state.recordToolFailed(call.name, call.toolUseId, error);
  return { content: '', isError: true, error, ran: true, ...(idempotencyKey ? { idempotencyKey } : {}), ...(unknown ? { outcomeUnknown: true } : {}) };
}

/** A delegation call: the child task's answer, or the ToolError that says why there is none. */
async function delegated(ctx: TurnContext, tool: ToolManifest, input: unknown, toolUseId: string): Promise<Answer> {
  const outcome = await ctx.delegation!.delegate(ctx.state, tool, input, toolUseId);
  if ('error' in outcome) {
    ctx.state.recordToolFailed(tool.name, toolUseId, outcome.error);
    return { content: '', isError: true, error: outcome.error, ran: true };
  }
  ctx.state.recordToolSucceeded(tool.name, toolUseId, summarizeOutput(outcome.output));
  return { content: JSON.stringify(outcome.output), isError: false, ran: true };
}

/** The earlier run a refused write names, when the worker's journal refused it (runTool: repeated_effect). */
function repeatedEffectIn(err: unknown): EffectRecord | undefined {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (!(cause instanceof ApplicationFailure) || cause.type !== REPEATED_EFFECT_TYPE) return undefined;
  const record = cause.details?.[1] as Partial<EffectRecord> | undefined;
  if (!record || typeof record.taskId !== 'string' || typeof record.turn !== 'number' || typeof record.at !== 'string' || typeof record.outcome?.summary !== 'string') return undefined;
  return record as EffectRecord;
}

/** A write the journal says already ran goes to a person, who sees where, when and with what result. */
function confirmRepeat(ctx: TurnContext, tool: ToolManifest, call: { name: string; toolUseId: string; input: unknown }, earlier: EffectRecord): Promise<ApprovalRecord> {
  const policy = ctx.policy ?? {};
  const approval = requestApproval(ctx.state, {
    tool: call.name,
    toolUseId: call.toolUseId,
    input: call.input,
    inputHash: callKey(call.name, call.input, tool.inputSchema, bookOf(ctx).coercedCallKeys),
    effect: tool.effect,
    reason: repeatReason(earlier),
    expiresAt: new Date(ctx.nowMs() + (policy.approvalTimeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS)).toISOString(),
    // Never approved by a clock: a repeat runs only when a person says so.
    onExpiry: 'deny',
  });
  return ctx.awaitApproval(approval);
}

function toBlock(toolUseId: string, answer: Answer, budgetLeft: number): ToolResultBlock {
  // Refusals and failures carry only the error; a semantic flag keeps its data beside the note.
  if (answer.isError && (!answer.content || answer.error?.error_class === 'policy')) {
    return errorBlock(toolUseId, { ...answer.error!, budget_left: budgetLeft });
  }
  return { type: 'tool_result', tool_use_id: toolUseId, content: answer.content, ...(answer.isError ? { is_error: true } : {}) };
}
