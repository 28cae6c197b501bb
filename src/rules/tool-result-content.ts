/** Renders what a tool call produced into the tool_result block the model reads. */
import type { ToolResultBlock } from '../protocol/messages';
import type { ToolError } from '../protocol/tool-error';

export function errorBlock(toolUseId: string, error: ToolError): ToolResultBlock {
  return { type: 'tool_result', tool_use_id: toolUseId, content: JSON.stringify({ error }), is_error: true };
}

export function summarizeOutput(output: unknown): string {
  const text = JSON.stringify(output) ?? '';
  return text.length > 120 ? `${text.slice(0, 119)}… (${text.length} chars)` : text;
}
