/**
 * The guard around one tool call (seed 000's pattern): validate the input, run, parse raw output as
 * JSON, validate it against the output schema, run the semantic check. The result is a validated
 * payload or a ToolError: never a stack trace, never an empty string.
 */
import { classify } from '../errors/classify';
import { toolError, type ToolError } from '../protocol/tool-error';
import type { ToolContext, ToolDefinition } from './define-tool';
import { validatorOf } from './schema';
import { NeedsInputError } from './needs-input';

export type GuardedResult =
  | { kind: 'ok'; output: unknown }
  /** Valid output that a semantic check flagged (partial_data or semantic): the model gets both. */
  | { kind: 'flagged'; output: unknown; error: ToolError }
  | { kind: 'failed'; error: ToolError; retryAfterMs?: number };

export async function guardedCall(tool: ToolDefinition<any, any>, rawInput: unknown, ctx: ToolContext): Promise<GuardedResult> {
  const input = validatorOf(tool.input).parseInput(rawInput);
  if (!input.success) {
    return {
      kind: 'failed',
      error: toolError('model', 'invalid_arguments', input.message, `Call ${tool.name} again with corrected arguments; the schema is in the tool definition.`),
    };
  }

  let raw: unknown;
  try {
    raw = await tool.run(input.data, ctx);
  } catch (err) {
    // A question for a person is no failure of the tool: the activity asks it.
    if (err instanceof NeedsInputError) throw err;
    const classified = classify(err);
    return { kind: 'failed', ...classified };
  }

  let parsed: unknown = raw;
  if (typeof raw === 'string') {
    try {
      parsed = JSON.parse(raw);
    } catch (err) {
      return {
        kind: 'failed',
        error: toolError(
          'schema_mismatch',
          raw.trim() === '' ? 'empty_output' : 'invalid_json',
          raw.trim() === '' ? 'The tool returned nothing.' : `Tool output is not valid JSON (${(err as Error).message}); it may be truncated (${raw.length} chars received).`,
          "The tool itself is broken; don't retry with the same arguments. Try narrower arguments, another tool, or tell the user.",
        ),
      };
    }
  }

  const output = validatorOf(tool.output).parseOutput(parsed);
  if (!output.success) {
    return {
      kind: 'failed',
      error: toolError('schema_mismatch', 'schema_violation', `Tool output breaks its contract: ${output.message}`, "The tool's contract is broken; don't retry with the same arguments."),
    };
  }

  const issue = tool.check?.(output.data, input.data);
  if (issue) {
    return { kind: 'flagged', output: output.data, error: toolError(issue.errorClass, issue.code, issue.detail, issue.hint) };
  }
  return { kind: 'ok', output: output.data };
}
