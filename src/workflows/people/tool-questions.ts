/**
 * A tool's question to a person (an MCP server's elicitation) as a durable approval: asked with the
 * same updates and the same inbox as approvals (approve with the answer / deny = decline), answered
 * minutes or days later; the call then runs again and the answer is handed to the server.
 */
import { ActivityFailure, ApplicationFailure } from '@temporalio/workflow';
import { NEEDS_INPUT_TYPE, type ToolQuestion, type ToolQuestionAnswer } from '../../protocol/activity-contracts';
import type { ToolManifest } from '../../protocol/agent-manifest';
import type { ApprovalRecord, ApprovalRequest, PermissionPolicy } from '../../protocol/task';
import { questionAnswer } from '../../rules/approvals';
import { askApproval } from './approvals';
import type { TaskState } from '../state/task-state';

/** Questions one call may ask before it is treated as failing: a server that never stops asking cannot wedge a task. */
export const MAX_QUESTIONS_PER_CALL = 5;

/** The question a failed tool activity carries, when it stopped to ask one. */
export function questionIn(err: unknown): ToolQuestion | undefined {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (!(cause instanceof ApplicationFailure) || cause.type !== NEEDS_INPUT_TYPE) return undefined;
  const q = cause.details?.[1] as Partial<ToolQuestion> | undefined;
  if (!q || typeof q.message !== 'string' || typeof q.server !== 'string' || typeof q.index !== 'number') return undefined;
  if (typeof q.requestedSchema !== 'object' || q.requestedSchema === null || Array.isArray(q.requestedSchema)) return undefined;
  return q as ToolQuestion;
}

/** Records the question as a pending approval, waits for a person, and turns the decision into the server's answer. */
export async function askPerson(
  state: TaskState,
  awaitApproval: (approval: ApprovalRequest) => Promise<ApprovalRecord>,
  policy: PermissionPolicy,
  nowMs: number,
  call: { tool: ToolManifest; name: string; toolUseId: string; input: unknown },
  question: ToolQuestion,
): Promise<ToolQuestionAnswer> {
  const approval = askApproval(
    state,
    {
      tool: call.name,
      toolUseId: call.toolUseId,
      input: call.input,
      inputHash: `question:${call.toolUseId}:${question.index}`,
      effect: call.tool.effect,
      reason: `${question.server} asks: ${question.message}`,
      question: { server: question.server, message: question.message, requestedSchema: question.requestedSchema },
    },
    policy,
    nowMs,
    'question',
  );
  // Approved: the answer; denied: the person declined to answer; expired: nobody did (MCP's "cancel").
  return questionAnswer(await awaitApproval(approval), question.message);
}
