/**
 * Runs the tool calls of one model turn through every guard, in order: the per-turn and per-task
 * budgets, the permission gate, the self-correction bound, the ledger, the activity (with fallbacks
 * for permanent failures), then the loop detector. Returns the tool_result blocks and, when a
 * person must step in, why.
 */
import type { ToolManifest } from '../../protocol/agent-manifest';
import type { ToolResultBlock, ToolUseBlock } from '../../protocol/messages';
import { toolError, type ToolError } from '../../protocol/tool-error';
import { notApprovedError } from '../../rules/approvals';
import { gateToolCall } from '../../rules/tool-gate';
import { errorBlock } from '../../rules/tool-result-content';
import { askApproval } from '../people/approvals';
import { classifyThenRun } from './auto-permission';
import { toolsForCall } from './call-effect';
import { callKey } from '../base/canonical-key';
import { escalationLevel } from '../people/escalation-policy';
import type { TaskState } from '../state/task-state';
import { runOnce, type CallApproval } from './tool-call';
import type { Answer, TurnContext } from './turn-context';

export type { TurnContext } from './turn-context';

export interface TurnOutcome {
  results: ToolResultBlock[];
  /** Set when the turn needs a person before the task goes on. */
  escalation?: { code: string; reason: string };
  /** The model asked for more tool calls than one turn allows: it answers next without tools. */
  perTurnBudgetSpent: boolean;
}

/**
 * The turn's calls, one after the other. Written with `then` rather than async/await, here and in
 * the functions below: each async layer costs the workflow two promises per call (its own and the
 * caller's await), each with the SDK's stack capture, where a `then` costs one and hands the answer
 * on at the same tick.
 */
export function runTurnTools(ctx: TurnContext, uses: ToolUseBlock[]): Promise<TurnOutcome> {
  const outcome: TurnOutcome = { results: [], perTurnBudgetSpent: false };
  const delegating = ctx.delegation ? uses.filter((use) => ctx.tools.get(use.name)?.delegatesTo !== undefined) : [];
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

/** One call through the guards, with the tools its input makes it (a read command is a read). */
function answerFor(ctx: TurnContext, use: ToolUseBlock, index: number, outcome: TurnOutcome): Promise<Answer> {
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
  const key = callKey(use.name, use.input, ctx.tools.get(use.name)?.inputSchema);
  const ledgerSays = gate.action === 'run' ? state.ledger.decide(gate.tool, key, state.turn, ctx.nowMs()) : undefined;
  // What every answer goes through: the correction bound (where the model's call was judged), escalation, the ledger.
  const settle = (callKeyUsed: string, answer: Answer, corrects = true): Answer | Promise<Answer> => {
    if (corrects) trackCorrections(state, use.name, answer);
    return afterCall(ctx, use, callKeyUsed, answer, outcome);
  };
  if (gate.action === 'refuse') return Promise.resolve(settle(key, refuse(gate.error), false));
  if (gate.action === 'classify') {
    const tool = gate.tool;
    return classifyThenRun(ctx, tool, use, gate.reason, {
      refuse,
      confirm: (reason) => confirmThenRun(ctx, tool, use, reason, refuse),
      run: (input, reuseKey, approval) => execute(ctx, tool, use, true, input, reuseKey, approval),
    }).then((decided) => settle(decided.key, decided.answer));
  }
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
      outcomeUnknown: answer.outcomeUnknown ?? false,
    });
    if (level === 'block') {
      const unknown = answer.outcomeUnknown === true;
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
  const looping = state.ledger.record(key, manifest ?? use.name, state.turn, ctx.nowMs(), outcomeForLedger, answer.ran, answer.idempotencyKey);
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

/**
 * The confirm path: validate the arguments first (a person should not approve a call that cannot
 * run), ask, wait durably, then run exactly what was approved, or tell the model no.
 */
async function confirmThenRun(ctx: TurnContext, tool: ToolManifest, use: ToolUseBlock, reason: string, refuse: (error: ToolError) => Answer): Promise<{ key: string; answer: Answer }> {
  const { state } = ctx;
  // Set when the worker refused an approval because the tool changed since the person was asked.
  let changed: string | undefined;
  for (let asked = 1; ; asked++) {
    const prepared = await ctx.prepareToolCall({ agent: ctx.agent, tool: tool.name, input: use.input, scope: ctx.scope });
    const key = callKey(tool.name, prepared.ok ? prepared.input : use.input, tool.inputSchema);
    if (!prepared.ok) return { key, answer: refuse(prepared.error) };

    const ledger = state.ledger.decide(tool, key, state.turn, ctx.nowMs());
    if (ledger.action === 'refuse' && ledger.error.code !== 'duplicate_write') return { key, answer: refuse(ledger.error) };
    const why = ledger.action === 'refuse' ? `${ledger.error.detail} Approve only if it must run again.` : ledger.action === 'confirm' ? ledger.reason : reason;
    const { contract } = prepared;
    const bound = contract && state.agentVersion ? { bound: { agentVersion: state.agentVersion, toolContract: contract.hash } } : {};
    const ask = { tool: tool.name, toolUseId: use.id, input: prepared.input, inputHash: key, effect: tool.effect, reason: changed ? `${changed} ${why}` : why, ...bound };
    const approval = askApproval(state, ask, ctx.policy, ctx.nowMs(), 'call');
    const decision = await ctx.awaitApproval(approval);
    if (decision.decision !== 'approved') {
      const said = { expired: `Nobody approved ${tool.name} before ${approval.expiresAt}; it did not run.`, denied: `${decision.by} denied ${tool.name}: ${decision.denyReason}` };
      return { key, answer: refuse(notApprovedError(decision, said)) };
    }
    const edited = decision.editedInput !== undefined;
    const reuseKey = ledger.action === 'run' ? ledger.idempotencyKey : undefined;
    // Asked because the ledger saw it run already: the person approved a repeat, which the family's claim records as such.
    const repeat = ledger.action !== 'run';
    const given: CallApproval = { id: decision.id, by: decision.by, ...(repeat ? { repeat } : {}), ...(contract ? { contract } : {}) };
    const ran = await execute(ctx, tool, use, true, edited ? decision.editedInput : prepared.input, reuseKey, given);
    // The tool changed between the question and the answer: the person decides again, on the tool as it is now.
    if (ran.error?.code === 'decision_stale' && asked < STALE_APPROVAL_ASKS) {
      changed = `${ran.error.detail}`;
      continue;
    }
    return { key, answer: ran.isError ? ran : approvedAnswer(ran, decision, edited) };
  }
}

/** How often one call is asked about again while its tool keeps changing under the approvals. */
const STALE_APPROVAL_ASKS = 3;

function approvedAnswer(ran: Answer, decision: { by: string; comment?: string; editedInput?: unknown }, edited: boolean): Answer {
  const note = {
    approved_by: decision.by,
    ...(decision.comment ? { comment: decision.comment } : {}),
    ...(edited ? { edited: 'A person changed the arguments; these ran instead of yours.', input_that_ran: decision.editedInput } : {}),
  };
  return { ...ran, content: `{"approval":${JSON.stringify(note)},"result":${ran.content}}` };
}

/**
 * Runs the call; a tool with fallbacks gets them tried when it fails for good. Not async itself: a
 * tool without fallbacks hands on the call's own promise, since every async layer costs the workflow
 * a promise (and the SDK a stack capture for it) on every turn.
 */
function execute(ctx: TurnContext, tool: ToolManifest, use: ToolUseBlock, withFallbacks = true, input: unknown = use.input, reuseKey?: string, approval?: CallApproval): Promise<Answer> {
  if (!withFallbacks || tool.fallbacks.length === 0) return runOnce(ctx, tool, input, use.id, use.name, reuseKey, approval);
  return executeWithFallbacks(ctx, tool, use, input, reuseKey, approval);
}

async function executeWithFallbacks(ctx: TurnContext, tool: ToolManifest, use: ToolUseBlock, input: unknown, reuseKey?: string, approval?: CallApproval): Promise<Answer> {
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

function toBlock(toolUseId: string, answer: Answer, budgetLeft: number): ToolResultBlock {
  // Refusals and failures carry only the error; a semantic flag keeps its data beside the note.
  if (answer.isError && (!answer.content || answer.error?.error_class === 'policy')) {
    return errorBlock(toolUseId, { ...answer.error!, budget_left: budgetLeft });
  }
  return { type: 'tool_result', tool_use_id: toolUseId, content: answer.content, ...(answer.isError ? { is_error: true } : {}) };
}
