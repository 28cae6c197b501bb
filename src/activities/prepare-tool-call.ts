/**
 * prepareToolCall: a tool call's arguments checked and coerced by the tool's own schema before the
 * call waits on a person or runs (a long result stored), or a person's answer to a tool's question
 * checked against the schema the question gave.
 */
import { resolveValue, storeValueIfLarge } from '../blobs/claim-check';
import type { AgentActivities } from '../protocol/activity-contracts';
import { toolError } from '../protocol/tool-error';
import { toolContractOf } from '../rules/tool-contract';
import { jsonSchemaValidator } from '../tools/json-schema';
import { validatorOf } from '../tools/schema';
import type { ToolSource } from './tool-source';
import type { WorkerResources } from './worker-resources';

export function createPrepareToolCall(worker: WorkerResources, tools: ToolSource): AgentActivities['prepareToolCall'] {
  const { store, withBlobs, agentNamed, inlineChars } = worker;
  return async ({ agent, tool: toolName, input: rawInput, scope, answerSchema }) => {
    const input = scope ? await withBlobs(() => resolveValue(store(), scope, rawInput)) : rawInput;
    if (answerSchema) {
      // A person's answer to a tool's question: checked against what the question asked for.
      let validator;
      try {
        validator = jsonSchemaValidator(answerSchema);
      } catch (err) {
        return { ok: false, error: toolError('permanent', 'invalid_question', `The question's schema cannot be checked: ${(err as Error).message}`) };
      }
      const answer = validator.parseInput(input);
      return answer.success ? { ok: true, input: answer.data } : { ok: false, error: toolError('model', 'invalid_answer', answer.message, 'Answer with the fields the question asks for.') };
    }
    const tool = await tools.toolOf(agentNamed(agent), toolName);
    if (!tool) return { ok: false, error: toolError('model', 'unknown_tool', `Tool "${toolName}" is not available to agent "${agent}".`) };
    const parsed = validatorOf(tool.input).parseInput(input);
    if (parsed.success) {
      const validated = scope ? await storeValueIfLarge(store(), scope, parsed.data, inlineChars * 4) : parsed.data;
      // The tool as this worker has it: what a person asked about the call approves (rules/tool-contract.ts).
      return { ok: true, input: validated, contract: toolContractOf(tool.manifest, agentNamed(agent).policy ?? {}) };
    }
    return {
      ok: false,
      error: toolError('model', 'invalid_arguments', parsed.message, `Call ${toolName} again with corrected arguments.`),
    };
  };
}
