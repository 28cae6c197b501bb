/**
 * The three activities a task uses: describe the agent (once, so replays see the same manifest),
 * call the model, run one tool. Each classifies its own failures before they reach Temporal.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { AgentDefinition } from '../agents/define-agent';
import { createModel, type ModelEnvironment } from '../models/create-model';
import { classifyModelError } from '../models/classify-model-error';
import type { Model } from '../models/model';
import { costOf, loadPrices, type PriceTable } from '../models/pricing';
import type { AgentActivities, ToolOutcome } from '../protocol/activity-contracts';
import type { ModelChoice } from '../protocol/task';
import { toolError } from '../protocol/tool-error';
import { guardedCall } from '../tools/guarded-call';
import { parseWithCoercion } from '../tools/coerce-input';
import { describeIssues } from '../tools/validation-message';
import { classify } from '../errors/classify';
import { HttpStatusError } from '../errors/tool-failure';
import { toApplicationFailure } from './failure';

/** A tool result longer than this (as JSON) is cut before it enters history, far below Temporal's 2 MB payload limit. */
export const DEFAULT_MAX_TOOL_RESULT_CHARS = 50_000;

export interface ActivityDependencies {
  /** USD per million tokens per model; merged over DEFAULT_PRICES and DURABLE_AGENT_PRICES. */
  prices?: PriceTable;
  /** Default DEFAULT_MAX_TOOL_RESULT_CHARS. */
  maxToolResultChars?: number;
  /** Where `inform` escalations are POSTed as JSON, besides the worker's log. Default: DURABLE_AGENT_WEBHOOK_URL. */
  webhookUrl?: string;
  agents: AgentDefinition[];
  modelEnv?: ModelEnvironment;
  /** Your own Model implementations, chosen by a task with `{ provider: 'custom', name }`. */
  models?: Record<string, Model>;
}

/** Keeps a huge result out of history: the model gets the start and how to ask for the rest. */
function cutIfLarge(outcome: ToolOutcome, maxChars: number): ToolOutcome {
  const text = JSON.stringify(outcome.output) ?? '';
  if (text.length <= maxChars) return outcome;
  const output = {
    cut_result: text.slice(0, maxChars),
    note: `Result cut: the first ${maxChars} of ${text.length} characters are shown (${text.length - maxChars} cut). Ask for the rest with narrower arguments (an offset, a page, a filter).`,
  };
  return outcome.kind === 'flagged' ? { ...outcome, output } : { kind: 'ok', output };
}

/**
 * Heartbeats on a timer while `work` runs: a dead worker is noticed within the heartbeat timeout,
 * and a cancellation arrives on ctx.cancellationSignal, which tools pass on (fetch's `signal`).
 * A model call is not given the signal: a task cancelled mid-call waits for its answer.
 */
async function heartbeating<T>(ctx: Context, work: Promise<T>): Promise<T> {
  const timeoutMs = ctx.info.heartbeatTimeoutMs;
  const beat = timeoutMs ? setInterval(() => ctx.heartbeat(), Math.max(200, timeoutMs / 3)) : undefined;
  try {
    return await work;
  } finally {
    clearInterval(beat);
  }
}

export function createActivities(deps: ActivityDependencies): AgentActivities {
  const agents = new Map(deps.agents.map((a) => [a.name, a]));
  const modelEnv: ModelEnvironment = {
    anthropicApiKey: deps.modelEnv?.anthropicApiKey ?? process.env.ANTHROPIC_API_KEY,
    anthropicBaseURL: deps.modelEnv?.anthropicBaseURL ?? process.env.ANTHROPIC_BASE_URL,
    ...(deps.modelEnv?.anthropicTimeoutMs ? { anthropicTimeoutMs: deps.modelEnv.anthropicTimeoutMs } : {}),
  };

  function agentNamed(name: string): AgentDefinition {
    const agent = agents.get(name);
    if (agent) return agent;
    const error = toolError(
      'permanent',
      'unknown_agent',
      `No agent named "${name}" on this worker. Registered: ${[...agents.keys()].join(', ') || 'none'}.`,
    );
    throw ApplicationFailure.create({ message: error.detail, type: 'permanent', nonRetryable: true, details: [error] });
  }

  const webhookUrl = deps.webhookUrl ?? process.env.DURABLE_AGENT_WEBHOOK_URL;
  const prices = loadPrices(deps.prices);
  const maxResultChars = deps.maxToolResultChars ?? DEFAULT_MAX_TOOL_RESULT_CHARS;
  // One SDK client per Claude model choice for the worker's life, not one per call. Scripted models
  // are read afresh each call, so an edited script file takes effect.
  const claudeModels = new Map<string, Model>();
  const modelFor = (choice: ModelChoice): Model => {
    if (choice.provider !== 'anthropic') return createModel(choice, modelEnv, deps.models);
    const key = JSON.stringify(choice);
    let model = claudeModels.get(key);
    if (!model) claudeModels.set(key, (model = createModel(choice, modelEnv)));
    return model;
  };

  return {
    async prepareToolCall({ agent, tool: toolName, input }) {
      const tool = agentNamed(agent).tool(toolName);
      if (!tool) return { ok: false, error: toolError('model', 'unknown_tool', `Tool "${toolName}" is not available to agent "${agent}".`) };
      const parsed = parseWithCoercion(tool.input, input);
      if (parsed.success) return { ok: true, input: parsed.data };
      return {
        ok: false,
        error: toolError('model', 'invalid_arguments', describeIssues(parsed.error), `Call ${toolName} again with corrected arguments.`),
      };
    },

    async notify(notice) {
      const line = `[${notice.level}] task ${notice.taskId} (${notice.agent}) ${notice.code}: ${notice.message}`;
      Context.current().log.warn(line);
      if (!webhookUrl) return;
      const res = await fetch(webhookUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...notice, text: line }),
        signal: AbortSignal.timeout(10_000),
      }).catch((err: Error) => {
        throw toApplicationFailure(classify(err), Context.current().info.attempt);
      });
      if (!res.ok) {
        throw toApplicationFailure(classify(new HttpStatusError(res.status, await res.text(), Object.fromEntries(res.headers))), Context.current().info.attempt);
      }
    },

    async describeAgent({ agent, model }) {
      const definition = agentNamed(agent);
      const chosen: ModelChoice | undefined =
        model ?? definition.model ?? (modelEnv.anthropicApiKey ? { provider: 'anthropic' } : undefined);
      if (!chosen) {
        const error = toolError(
          'permanent',
          'no_model',
          `Agent "${agent}" has no model: set ANTHROPIC_API_KEY on the worker, or start the task with a scripted model.`,
        );
        throw ApplicationFailure.create({ message: error.detail, type: 'permanent', nonRetryable: true, details: [error] });
      }
      return definition.manifest(chosen);
    },

    async callModel({ model, system, messages, tools }) {
      const ctx = Context.current();
      const attempt = ctx.info.attempt;
      try {
        const turn = await heartbeating(ctx, modelFor(model).complete({ system, messages, tools }));
        const costUsd = costOf(turn.model, turn.usage, prices);
        return costUsd === undefined ? turn : { ...turn, costUsd };
      } catch (err) {
        throw toApplicationFailure(classifyModelError(err), attempt);
      }
    },

    async runTool({ agent, tool: toolName, input, toolUseId }): Promise<ToolOutcome> {
      const ctx = Context.current();
      const tool = agentNamed(agent).tool(toolName);
      if (!tool) {
        // The workflow refuses unknown tools before scheduling; reaching here means the worker's
        // agent changed under a running task.
        throw toApplicationFailure(
          { error: toolError('model', 'unknown_tool', `Tool "${toolName}" is not available to agent "${agent}".`) },
          ctx.info.attempt,
        );
      }
      const workflowId = ctx.info.workflowExecution?.workflowId ?? ctx.info.activityId;
      const result = await heartbeating(
        ctx,
        guardedCall(tool, input, {
          idempotencyKey: `${workflowId}:${toolUseId}`,
          workflowId,
          toolUseId,
          attempt: ctx.info.attempt,
          signal: ctx.cancellationSignal,
          heartbeat: (details) => ctx.heartbeat(details),
        }),
      );
      // A cancelled call must end as cancelled, not as whatever error the aborted tool produced.
      if (ctx.cancellationSignal.aborted) throw ctx.cancellationSignal.reason ?? new Error('cancelled');
      if (result.kind === 'failed') throw toApplicationFailure(result, ctx.info.attempt);
      return cutIfLarge(result, maxResultChars);
    },
  };
}
