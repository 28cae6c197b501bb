/**
 * One tool call, until it has an answer: the activity (or a local one for a fast read), a fast read
 * sent back to the regular path, a tool's question to a person, a write the effect journal says
 * already ran (a person decides), a delegation to a sub-agent. Written with `then` rather than
 * async/await: each async layer costs the workflow two promises per call, each with the SDK's stack
 * capture, where a `then` costs one and hands the answer on at the same tick.
 */
import { ActivityFailure, ApplicationFailure, isCancellation, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { ToolManifest } from '../../protocol/agent-manifest';
import type { ToolContract } from '../../protocol/tool-contract';
import type { AgentActivities, ToolOutcome, ToolQuestionAnswer } from '../../protocol/activity-contracts';
import { REPEATED_EFFECT_TYPE, repeatReason, type EffectRecord } from '../../protocol/fork';
import { outcomeUnknown } from '../../protocol/outcome-unknown';
import type { ApprovalRecord } from '../../protocol/task';
import { notApprovedError } from '../../rules/approvals';
import { summarizeOutput } from '../../rules/tool-result-content';
import { toolErrorFromFailure } from '../base/activity-failures';
import { fastReadOptions, localToolCallOptions, toolCallOptions } from '../base/activity-options';
import { askApproval } from '../people/approvals';
import { callKey } from '../base/canonical-key';
import { failedForGood } from '../base/fast-reads';
import { askPerson, MAX_QUESTIONS_PER_CALL, questionIn } from '../people/tool-questions';
import type { Answer, TurnContext } from './turn-context';

/** One logical tool call: what every attempt of it (a fast read sent back, a question answered) shares. */
interface ToolCall {
  ctx: TurnContext;
  tool: ToolManifest;
  input: unknown;
  toolUseId: string;
  name: string;
  idempotencyKey: string;
  approval: { id: string; by: string } | undefined;
  /** A write: it goes through the effect journal. */
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
/** The approval a call runs under; `repeat` when the person was asked because the same call already ran. */
export interface CallApproval {
  id: string;
  by: string;
  repeat?: boolean;
  /** The tool as the worker had it when the person was asked: the worker refuses the call if its tool differs now. */
  contract?: ToolContract;
}

export function runOnce(ctx: TurnContext, tool: ToolManifest, input: unknown, toolUseId: string, name: string, reuseKey?: string, approval?: CallApproval): Promise<Answer> {
  const { state } = ctx;
  state.recordToolCalled(name, toolUseId, input);
  if (tool.delegatesTo !== undefined && ctx.delegation) return delegated(ctx, tool, input, toolUseId);
  // Issued by the workflow: unique per logical call in this task chain (the call counter never
  // repeats, whatever ids the model sends), the same on every retry; a repeat of a call whose
  // outcome is unknown reuses its key so the service can only do it once.
  const idempotencyKey = reuseKey ?? `${ctx.chain}:${state.toolCalls.total}`;
  // A write goes through the journal: the worker records it, and refuses one that already ran before a reset or in an ancestor.
  const journaled = tool.effect !== 'read';
  const given = approval ? { id: approval.id, by: approval.by, ...(approval.contract ? { contract: approval.contract } : {}) } : undefined;
  return attempt({
    ctx,
    tool,
    input,
    toolUseId,
    name,
    idempotencyKey,
    approval: given,
    ...(given && approval?.repeat ? { repeatApproval: given } : {}),
    journaled,
    runsLocally: ctx.fastReads.runsLocally(tool),
    answers: [],
  });
}

function attempt(call: ToolCall): Promise<Answer> {
  const { ctx, tool, answers } = call;
  const { state } = ctx;
  const approval = call.repeatApproval ?? call.approval;
  const runsLocally = call.runsLocally;
  const { runTool } = runsLocally
    ? proxyLocalActivities<AgentActivities>(fastReadOptions(tool))
    : tool.local
      ? proxyLocalActivities<AgentActivities>(localToolCallOptions(tool))
      : proxyActivities<AgentActivities>(toolCallOptions(tool));
  const startedMs = ctx.nowMs();
  let running: Promise<ToolOutcome>;
  try {
    running = runTool({
      agent: ctx.agent,
      tool: call.name,
      input: call.input,
      toolUseId: call.toolUseId,
      scope: ctx.scope,
      idempotencyKey: call.idempotencyKey,
      ...(approval ? { approval } : {}),
      ...(answers.length ? { answers: [...answers] } : {}),
      ...(call.journaled ? { turn: state.turn, ...(state.lineage.length ? { lineage: state.lineage } : {}) } : {}),
      ...(call.repeatApproval ? { repeatApprovedBy: call.repeatApproval.id } : {}),
      ...(state.readRecording && tool.effect === 'read' ? { readRecording: state.readRecording } : {}),
      // Only a verified starter's own credentials: an unverified claim never selects a person's.
      ...(state.starter?.verified ? { onBehalfOf: state.starter.id } : {}),
    });
  } catch (err) {
    return Promise.resolve(afterFailure(call, err));
  }
  return running.then(
    (result) => {
      try {
        if (!runsLocally) ctx.fastReads.observed(tool, ctx.nowMs() - startedMs);
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
      ctx.fastReads.demote(tool);
      call.runsLocally = false;
      return attempt(call);
    }
    const earlier = call.journaled && !call.repeatApproval && !isCancellation(err) ? repeatedEffectIn(err) : undefined;
    if (earlier) return confirmRepeat(ctx, tool, call, earlier).then((decision) => afterRepeatDecision(call, earlier, decision));
    const question = isCancellation(err) ? undefined : questionIn(err);
    if (!question || call.answers.length >= MAX_QUESTIONS_PER_CALL) return failed(call, err);
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
  const settled = earlier.state === undefined || earlier.state === 'done';
  const ran = `${call.name} ${settled ? 'already ran' : 'may already have run'} (in ${earlier.taskId} at turn ${earlier.turn})`;
  const error = notApprovedError(
    decision,
    { expired: `${ran} and nobody approved running it again; it did not run now.`, denied: `${ran} and ${decision.by} denied running it again: ${decision.denyReason}; it did not run now.` },
    settled
      ? `Its earlier result: ${earlier.outcome.summary}. Do not call it again; go on from that result.`
      : 'Its outcome was never reported. Do not call it again; check with a read whether it took effect.',
  );
  call.ctx.state.recordToolFailed(call.name, call.toolUseId, error, false);
  return { content: '', isError: true, error, ran: false };
}

function succeeded(call: ToolCall, result: ToolOutcome): Answer {
  const { state } = call.ctx;
  state.addToolRecovery(result.recovery);
  if (result.kind === 'flagged') {
    state.recordToolSucceeded(call.name, call.toolUseId, `${result.error.error_class}: ${result.error.detail}`, result.credentialsOf);
    return { content: JSON.stringify({ data: result.output, note: result.error }), isError: result.error.error_class === 'semantic', error: result.error, ran: true };
  }
  state.recordToolSucceeded(call.name, call.toolUseId, result.summary ?? summarizeOutput(result.output), result.credentialsOf);
  return { content: JSON.stringify(result.output), isError: false, ran: true };
}

/** The call failed for good: its ToolError is the answer (a cancellation is not a tool error: it goes on up). */
function failed(call: ToolCall, err: unknown): Answer {
  if (isCancellation(err)) throw err;
  const { tool, idempotencyKey } = call;
  let error = toolErrorFromFailure(err, tool);
  // Every attempt before the one that failed for good was recovery that did not help.
  if (error.attempts !== undefined && error.attempts > 1) call.ctx.state.addToolRecovery({ repeated: error.attempts - 1, waitedMs: 0 });
  const unknown = tool.effect !== 'read' && outcomeUnknown(error);
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
  return { content: '', isError: true, error, ran: true, idempotencyKey, ...(unknown ? { outcomeUnknown: true } : {}) };
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
  const inputHash = callKey(call.name, call.input, tool.inputSchema);
  // Never approved by a clock: a repeat runs only when a person says so (expiry denies it).
  const approval = askApproval(
    ctx.state,
    { tool: call.name, toolUseId: call.toolUseId, input: call.input, inputHash, effect: tool.effect, reason: repeatReason(earlier) },
    ctx.policy,
    ctx.nowMs(),
    'repeat',
  );
  return ctx.awaitApproval(approval);
}
