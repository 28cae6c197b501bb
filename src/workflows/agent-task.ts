/**
 * The `agentTask` workflow: the turn loop. Model activity, then one tool activity per tool_use,
 * then the tool results back to the model, until it ends its turn or the turn budget is spent.
 * Decisions live in TaskState and the gate; this file wires messages and activities.
 */
import {
  ApplicationFailure,
  CancellationScope,
  isCancellation,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { AgentActivities } from '../protocol/activity-contracts';
import { AgentNameKey, AgentStatusKey, statusQuery, transcriptQuery } from '../protocol/definitions';
import { toolUsesOf, type ToolResultBlock, type ToolUseBlock } from '../protocol/messages';
import type { AgentStatus, TaskInput, TaskResult } from '../protocol/task';
import { isToolError, toolError, type ToolError } from '../protocol/tool-error';
import type { ToolManifest } from '../protocol/agent-manifest';
import { describeAgentOptions, modelCallOptions, toolCallOptions } from './activity-options';
import { toolErrorFromFailure } from './activity-failures';
import { TaskState } from './task-state';
import { gateToolCall } from './tool-gate';
import { errorBlock, flaggedBlock, successBlock, summarizeOutput } from './tool-result-content';

const { describeAgent } = proxyActivities<AgentActivities>(describeAgentOptions);
const { callModel } = proxyActivities<AgentActivities>(modelCallOptions);

export async function agentTask(input: TaskInput): Promise<TaskResult> {
  assertValidInput(input);
  const state = new TaskState(input, () => new Date());
  setHandler(statusQuery, () => state.status());
  setHandler(transcriptQuery, () => ({ system: state.manifest?.system ?? '', messages: state.messages }));

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

  try {
    const manifest = await describeAgent({ agent: input.agent, ...(input.model ? { model: input.model } : {}) });
    state.begin(manifest);
    const tools = new Map(manifest.tools.map((t) => [t.name, t]));
    const toolSpecs = manifest.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema }));

    while (state.turnsLeft > 0) {
      state.startTurn();
      const reply = await callModel({ model: manifest.model, system: manifest.system, messages: state.messages, tools: toolSpecs });
      state.recordModelTurn(reply);

      if (reply.stopReason === 'refusal') return finish(state, 'refused', publishStatus);
      const uses = toolUsesOf(reply.content);
      if (uses.length === 0) {
        // pause_turn: the API paused a long turn; sending the conversation back resumes it.
        if (reply.stopReason === 'pause_turn') continue;
        return finish(state, 'answered', publishStatus);
      }
      const results: ToolResultBlock[] = [];
      for (const use of uses) results.push(await runToolUse(state, input.agent, use, tools));
      state.addToolResults(results);
    }
    return finish(state, 'max_turns', publishStatus);
  } catch (err) {
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

function finish(state: TaskState, outcome: TaskResult['outcome'], publishStatus: () => void): TaskResult {
  const result = state.complete(outcome);
  publishStatus();
  return result;
}

async function runToolUse(
  state: TaskState,
  agent: string,
  use: ToolUseBlock,
  tools: ReadonlyMap<string, ToolManifest>,
): Promise<ToolResultBlock> {
  const decision = gateToolCall(use.name, tools);
  if (decision.action === 'refuse') {
    state.recordToolFailed(use.name, use.id, decision.error);
    return errorBlock(use.id, decision.error);
  }
  state.recordToolCalled(use.name, use.id, use.input);
  const { runTool } = proxyActivities<AgentActivities>(toolCallOptions(decision.tool));
  try {
    const outcome = await runTool({ agent, tool: use.name, input: use.input, toolUseId: use.id });
    if (outcome.kind === 'flagged') {
      state.recordToolSucceeded(use.name, use.id, `${outcome.error.error_class}: ${outcome.error.detail}`);
      return flaggedBlock(use.id, outcome.output, outcome.error);
    }
    state.recordToolSucceeded(use.name, use.id, summarizeOutput(outcome.output));
    return successBlock(use.id, outcome.output);
  } catch (err) {
    if (isCancellation(err)) throw err;
    const error = toolErrorFromFailure(err, decision.tool);
    state.recordToolFailed(use.name, use.id, error);
    return errorBlock(use.id, error);
  }
}

function taskErrorFrom(err: unknown): ToolError {
  if (err instanceof ApplicationFailure && isToolError(err.details?.[0])) return err.details[0];
  const cause = (err as { cause?: unknown })?.cause;
  if (cause instanceof ApplicationFailure && isToolError(cause.details?.[0])) return cause.details[0];
  const message = err instanceof Error ? `${err.message}${cause instanceof Error ? `: ${cause.message}` : ''}` : String(err);
  return toolError('permanent', 'task_failed', message);
}

function assertValidInput(input: TaskInput): void {
  const problems: string[] = [];
  if (!input || typeof input !== 'object') problems.push('input must be an object');
  else {
    if (typeof input.agent !== 'string' || !input.agent) problems.push('`agent` must be a non-empty string');
    if (typeof input.prompt !== 'string' || !input.prompt.trim()) problems.push('`prompt` must be a non-empty string');
    if (input.maxTurns !== undefined && !(Number.isInteger(input.maxTurns) && input.maxTurns >= 1)) {
      problems.push('`maxTurns` must be an integer >= 1');
    }
  }
  if (problems.length) {
    throw ApplicationFailure.create({ message: `Invalid task input: ${problems.join('; ')}`, type: 'invalid_input', nonRetryable: true });
  }
}
