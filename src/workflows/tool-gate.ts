/**
 * Decides whether a tool call may run, before any activity is scheduled. Fails closed: an unknown
 * tool is refused, and so is a destructive one until a person can approve it.
 */
import type { ToolManifest } from '../protocol/agent-manifest';
import { toolError, type ToolError } from '../protocol/tool-error';

export type GateDecision = { action: 'run'; tool: ToolManifest } | { action: 'refuse'; error: ToolError };

export function gateToolCall(name: string, tools: ReadonlyMap<string, ToolManifest>): GateDecision {
  const tool = tools.get(name);
  if (!tool) {
    return {
      action: 'refuse',
      error: toolError(
        'model',
        'unknown_tool',
        `There is no tool named "${name}".`,
        `Use one of: ${[...tools.keys()].join(', ') || '(no tools)'}.`,
      ),
    };
  }
  if (tool.effect === 'destructive') {
    return {
      action: 'refuse',
      error: toolError(
        'policy',
        'approval_required',
        `"${name}" is destructive and needs a person's approval, which this task cannot ask for.`,
        'Do not retry it. Tell the user what you would delete and why, and let them do it.',
      ),
    };
  }
  return { action: 'run', tool };
}
