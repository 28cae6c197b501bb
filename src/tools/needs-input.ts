/**
 * Thrown by a tool that cannot go on without a person's answer (an MCP server's elicitation). The
 * guard lets it through unclassified: it is no failure of the tool, and the activity turns it into
 * a question the workflow asks durably (see NEEDS_INPUT_TYPE).
 */
import type { ToolQuestion } from '../protocol/activity-contracts';
import { DurableAgentError } from '../errors/durable-agent-error';

export class NeedsInputError extends DurableAgentError {
  readonly code = 'needs_input';
  constructor(readonly question: ToolQuestion) {
    super(`The tool asks a person: ${question.message}`);
  }
}
