/**
 * A tool's question to a person (an MCP server's elicitation) as a durable approval: asked with the
 * same updates and the same inbox as approvals (approve with the answer / deny = decline), answered
 * minutes or days later; the call then runs again and the answer is handed to the server.
 */
import { ActivityFailure, ApplicationFailure } from '@temporalio/workflow';
import { NEEDS_INPUT_TYPE, type ToolQuestion, type ToolQuestionAnswer } from '../protocol/activity-contracts';
import type { ToolManifest } from '../protocol/agent-manifest';
import { DEFAULT_APPROVAL_TIMEOUT_MS, type ApprovalRecord, type ApprovalRequest, type ApproveInput, type PermissionPolicy } from '../protocol/task';
import type { TaskState } from './task-state';
import { requestApproval } from './approvals';

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
  const approval = requestApproval(state, {
    tool: call.name,
    toolUseId: call.toolUseId,
    input: call.input,
    inputHash: `question:${call.toolUseId}:${question.index}`,
    effect: call.tool.effect,
    reason: `${question.server} asks: ${question.message}`,
    expiresAt: new Date(nowMs + (policy.approvalTimeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS)).toISOString(),
    onExpiry: policy.onExpiry ?? 'deny',
    question: { server: question.server, message: question.message, requestedSchema: question.requestedSchema },
  });
  const decision = await awaitApproval(approval);
  if (decision.decision === 'approved') {
    return { message: question.message, action: 'accept', content: (decision.editedInput ?? {}) as Record<string, unknown> };
  }
  // Denied: the person declined to answer; expired: nobody did (MCP's "cancel").
  return { message: question.message, action: decision.decision === 'denied' ? 'decline' : 'cancel' };
}

/** Read by the approve validator: a question with required fields cannot be approved without an answer. */
export function questionAnswerProblem(pending: readonly ApprovalRequest[], request: ApproveInput): string | undefined {
  const approval = pending.find((a) => a.id === request?.approvalId);
  if (!approval?.question || request.editedInput !== undefined) return undefined;
  const required = approval.question.requestedSchema.required;
  if (!Array.isArray(required) || required.length === 0) return undefined;
  return `approval ${approval.id} is a question from ${approval.question.server} ("${approval.question.message.slice(0, 200)}"): approve it with the answer as editedInput (fields ${required.map(String).join(', ')}), or deny to decline`;
}
