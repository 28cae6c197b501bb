/**
 * The `auto` rule's path for one call (docs/auto-permissions.md): the arguments are prepared as an
 * approver would see them, the classifier activity decides, its verdict and one-line reason go into
 * the audit trail, and then the call runs (allow), is refused with the reason (deny) or goes to a
 * person (ask). Fails closed: a classifier that fails for good is `ask`. Only agents whose policy
 * names 'auto' come here, so no committed history reaches this code.
 */
import { isCancellation, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { ToolManifest } from '../../protocol/agent-manifest';
import type { AgentActivities } from '../../protocol/activity-contracts';
import type { AutoClassification } from '../../protocol/auto-permission';
import type { ToolUseBlock } from '../../protocol/messages';
import { toolError, type ToolError } from '../../protocol/tool-error';
import { taskErrorFrom } from '../base/activity-failures';
import { classifierCallOptions } from '../base/activity-options';
import { callKey } from '../base/canonical-key';
import { oneLine } from '../base/one-line';
import { spentSpendBudget } from '../state/budget-meter';
import { modelIdNow } from '../state/model-fallback';
import { forkPromptOf, withFork } from './fork-prompt';
import type { Answer, TurnContext } from './turn-context';

const { classifyToolCall } = proxyActivities<AgentActivities>(classifierCallOptions);

/** Who a call the classifier allowed ran on behalf of, as the worker's gate and the journal see it. */
export const AUTO_APPROVER = 'auto-classifier';

/** The ways on from a verdict, given by turn-tools.ts (the same paths a confirmed call takes). */
export interface AutoPaths {
  refuse(error: ToolError): Answer;
  /** A person decides, with this reason on the approval. */
  confirm(reason: string): Promise<{ key: string; answer: Answer }>;
  run(input: unknown, reuseKey: string | undefined, approval: { id: string; by: string }): Promise<Answer>;
}

export async function classifyThenRun(ctx: TurnContext, tool: ToolManifest, use: ToolUseBlock, gateReason: string, paths: AutoPaths): Promise<{ key: string; answer: Answer }> {
  const { state } = ctx;
  const prepared = await ctx.prepareToolCall({ agent: ctx.agent, tool: tool.name, input: use.input, scope: ctx.scope });
  const key = callKey(tool.name, prepared.ok ? prepared.input : use.input, tool.inputSchema);
  if (!prepared.ok) return { key, answer: paths.refuse(prepared.error) };
  // A repeated write, a refused key: the confirm path's rules (a person, or a refusal), no classifier.
  const ledger = state.ledger.decide(tool, key, state.turn, ctx.nowMs());
  if (ledger.action !== 'run') return paths.confirm(gateReason);

  // A spent budget is a hard cap: no classifier model call past it (an agent's own function still runs).
  const spent = spentSpendBudget(state);
  let verdict: AutoClassification;
  try {
    verdict = await classifyToolCall({
      agent: ctx.agent,
      tool: tool.name,
      toolUseId: use.id,
      effect: tool.effect,
      input: prepared.input,
      prompt: state.input.prompt,
      // A fork's prompt only names it: the classifier reads, and grounds on, its origin's prompt and its message.
      ...withFork(forkPromptOf(state.input, state.lineage, state.messages)),
      // A child task (Temporal says it has a parent, or its input says it was delegated): stricter either way.
      ...(workflowInfo().parent !== undefined || state.input.delegation !== undefined ? { delegated: true } : {}),
      scope: ctx.scope,
      ...(spent ? { budgetSpent: spent.reason } : {}),
      ...(ctx.model ? { model: ctx.model } : {}),
      // The model the task's turns use now: a person's override, else the fallback it moved to.
      ...(modelIdNow(state) ? { modelId: modelIdNow(state) } : {}),
    });
  } catch (err) {
    if (isCancellation(err)) throw err;
    const error = taskErrorFrom(err);
    verdict = { verdict: 'ask', by: 'engine', reason: oneLine(`the classifier failed (${error.error_class}/${error.code}): ${error.detail}`, 300) };
  }
  // The classifier's call is the task's spend too: its tokens (every class) and USD count against the budgets.
  if (verdict.usage || verdict.costUsd !== undefined) {
    state.addSpend({
      usage: verdict.usage ?? { inputTokens: 0, outputTokens: 0 },
      ...(verdict.costUsd !== undefined ? { costUsd: verdict.costUsd } : {}),
      ...(verdict.model !== undefined ? { model: verdict.model } : {}),
    });
  }
  state.audit.record('tool_classified', `${verdict.verdict} (${verdict.by}): ${verdict.reason}`, { tool: tool.name, toolUseId: use.id });

  if (verdict.verdict === 'allow') return { key, answer: await paths.run(prepared.input, ledger.idempotencyKey, { id: `auto:${use.id}`, by: AUTO_APPROVER }) };
  if (verdict.verdict === 'deny') {
    return {
      key,
      answer: paths.refuse(
        toolError('policy', 'denied_by_classifier', `The auto classifier denied ${tool.name}: ${verdict.reason}`, 'Do not retry it reworded; do something else, or tell the user it needs a person.'),
      ),
    };
  }
  return paths.confirm(`auto mode asked a person (${verdict.by}): ${verdict.reason}`);
}
