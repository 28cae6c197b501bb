/**
 * describeAgent: the agent's manifest, once per run so a replay sees the same one: its tools (with
 * its MCP servers' tools, listed now), the worker's trusted approver keys, and a custom model's
 * declared context window.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { AgentActivities } from '../protocol/activity-contracts';
import type { TrustedKey } from '../protocol/decision-proof';
import type { ModelChoice } from '../protocol/task';
import { toolError } from '../protocol/tool-error';
import type { ModelSource } from './model-source';
import type { ToolSource } from './tool-source';
import type { WorkerResources } from './worker-resources';

function permanent(code: string, detail: string): ApplicationFailure {
  const error = toolError('permanent', code, detail);
  return ApplicationFailure.create({ message: error.detail, type: 'permanent', nonRetryable: true, details: [error] });
}

export function createDescribeAgent(
  worker: Pick<WorkerResources, 'agentNamed'>,
  models: ModelSource,
  tools: ToolSource,
  settings: { approverKeys: TrustedKey[]; wholeConversations?: boolean },
): AgentActivities['describeAgent'] {
  return async ({ agent, model }) => {
    const definition = worker.agentNamed(agent);
    const chosen: ModelChoice | undefined = model ?? definition.model ?? (models.env.anthropicApiKey ? { provider: 'anthropic' } : undefined);
    if (!chosen) throw permanent('no_model', `Agent "${agent}" has no model: set ANTHROPIC_API_KEY on the worker, or start the task with a scripted model.`);
    const manifest = definition.manifest(chosen);
    if (definition.mcpServers?.length) {
      // Listed now and recorded with the manifest: a replay sees the tools the task saw.
      const listed = await tools.mcpToolsOf(definition);
      const clash = listed.find((t) => manifest.tools.some((own) => own.name === t.name));
      if (clash) throw permanent('tool_name_clash', `Agent "${agent}" has its own tool named "${clash.name}", which an MCP server also offers.`);
      manifest.tools = [...manifest.tools, ...listed.map((t) => t.manifest)];
    }
    // A custom model's declared window travels in the manifest (recorded in history), so a replay makes room where the run did.
    const own = models.ownModel(chosen);
    const window = own ? models.capabilitiesOf(own).contextWindowTokens : undefined;
    // The worker's trusted keys travel in the manifest (recorded in history), never in the task's input.
    return {
      ...manifest,
      ...(settings.approverKeys.length ? { approverKeys: settings.approverKeys } : {}),
      ...(settings.wholeConversations ? { wholeConversations: true } : {}),
      ...(window !== undefined ? { modelContextWindowTokens: window } : {}),
    };
  };
}
