/** Human-readable rendering for the CLI; `--json` prints the data instead. */
import type { TaskSummary, TaskView } from '../client/task-client';
import type { ApprovalRequest, Escalation, TaskEvent, TaskResult, TaskStatus } from '../protocol/task';
import type { ToolError } from '../protocol/tool-error';

const MARK: Record<TaskEvent['kind'], string> = {
  task_started: '▶',
  model_replied: '◆',
  tool_called: '→',
  tool_succeeded: '✓',
  tool_failed: '✗',
  approval_requested: '?',
  approval_decided: '!',
  informed: 'i',
  task_blocked: '⏸',
  task_unblocked: '▶',
  guidance_added: '✎',
  task_completed: '■',
  task_failed: '✗',
  task_cancelled: '■',
};

export function renderEvent(e: TaskEvent): string {
  const who = e.tool ? `${e.tool} ` : e.kind === 'model_replied' ? 'model ' : '';
  return `[turn ${e.turn}] ${MARK[e.kind]} ${who}${e.detail}`;
}

export function renderStatus(taskId: string, s: TaskStatus): string {
  const lines = [
    `task       ${taskId}`,
    `agent      ${s.agent}   model ${s.model}`,
    `status     ${s.agentStatus} (${s.phase})`,
    `turns      ${s.budgets.turns.used} of ${s.budgets.turns.limit} (${s.budgets.turns.left} left)`,
    `tool calls ${s.toolCalls.total} of ${s.budgets.toolCalls.limit} (${s.toolCalls.succeeded} ok, ${s.toolCalls.failed} failed)`,
    `tokens     ${s.usage.inputTokens} in, ${s.usage.outputTokens} out${s.budgets.tokens ? ` (budget ${s.budgets.tokens.limit})` : ''}` +
      `   cost $${s.costUsd.toFixed(4)}${s.budgets.costUsd ? ` of $${s.budgets.costUsd.limit}` : ''}` +
      `${s.unpricedModels.length ? `   (no price for ${s.unpricedModels.join(', ')})` : ''}`,
  ];
  if (s.lastError) lines.push(`last error ${renderError(s.lastError)}`);
  for (const a of s.pendingApprovals) lines.push('', renderApproval(taskId, a));
  if (s.blocked) lines.push('', renderBlocked(taskId, s.blocked));
  if (s.escalations.length || s.decisions.length) {
    lines.push('', 'audit trail:');
    for (const e of s.escalations) {
      lines.push(`  ${e.at}  ${e.level} ${e.code}: ${e.reason}`);
      if (e.resolved) lines.push(`  ${e.resolved.at}  resolved by ${e.resolved.by}: ${e.resolved.how}`);
    }
    for (const d of s.decisions.filter((d) => d.action === 'message')) lines.push(`  ${d.at}  message from ${d.by}: ${d.detail}`);
    for (const a of s.approvals) {
      lines.push(`  ${a.decidedAt}  ${a.tool} ${a.decision} by ${a.by}${a.comment ? ` ("${a.comment}")` : ''}${a.denyReason ? `: ${a.denyReason}` : ''}${a.editedInput !== undefined ? ` with arguments ${JSON.stringify(a.editedInput)}` : ''}`);
    }
  }
  if (s.events.length) {
    lines.push('', `recent events (${s.eventCount} in all):`);
    for (const e of s.events.slice(-10)) lines.push(`  ${renderEvent(e)}`);
  }
  if (s.result) lines.push('', renderResult(s.result));
  return lines.join('\n');
}

export function renderView(view: TaskView): string {
  if (view.status) return renderStatus(view.summary.taskId, view.status) + (view.note ? `\n\nnote: ${view.note}` : '');
  const lines = [
    `task       ${view.summary.taskId}`,
    `agent      ${view.summary.agent ?? '?'}`,
    `status     ${view.summary.agentStatus ?? '?'} (Temporal: ${view.summary.executionStatus})`,
  ];
  if (view.result) lines.push('', renderResult(view.result));
  if (view.failure) lines.push(`failure    ${renderError(view.failure)}`);
  if (view.note) lines.push('', `note: ${view.note}`);
  return lines.join('\n');
}

/** A pending approval: the exact arguments, why, until when, and the commands that answer it. */
export function renderApproval(taskId: string, a: ApprovalRequest): string {
  return [
    `APPROVAL NEEDED (${a.id}): ${a.tool} [${a.effect}]`,
    `  arguments: ${JSON.stringify(a.input)}`,
    `  why:       ${a.reason}`,
    `  expires:   ${a.expiresAt} (then: ${a.onExpiry})`,
    '  answer it:',
    `    durable-agent approve ${taskId} ${a.id} --as YOUR_NAME [--comment TEXT] [--edit '{"...": "..."}']`,
    `    durable-agent deny ${taskId} ${a.id} --as YOUR_NAME --reason "why not"`,
  ].join('\n');
}

/** A blocked task: why, and the exact commands that answer it. */
export function renderBlocked(taskId: string, e: Escalation): string {
  return [
    `BLOCKED since ${e.at} (turn ${e.turn}): ${e.reason}`,
    '  resume it:',
    `    durable-agent unblock ${taskId} --as YOUR_NAME --message "what the agent should do now"`,
    `    durable-agent unblock ${taskId} --as YOUR_NAME --turns N --tool-calls N --tokens N --cost-usd X   (raise a budget)`,
  ].join('\n');
}

export function renderResult(r: TaskResult): string {
  return [
    `${r.outcome} after ${r.turns} turns and ${r.toolCalls} tool calls (model ${r.model}, ${r.usage.inputTokens + r.usage.outputTokens} tokens, $${r.costUsd.toFixed(4)})`,
    '',
    r.text || '(the model gave no final text)',
  ].join('\n');
}

export function renderError(e: ToolError): string {
  return `${e.error_class}/${e.code}: ${e.detail}${e.hint ? ` (${e.hint})` : ''}`;
}

export function renderSummaries(tasks: TaskSummary[]): string {
  if (tasks.length === 0) return 'No tasks match.';
  const rows = tasks.map((t) => [
    t.taskId,
    t.agent ?? '-',
    t.agentStatus ?? '-',
    t.executionStatus,
    t.startTime.toISOString().replace('T', ' ').slice(0, 19),
  ]);
  const waiting = tasks.some((t) => t.waitingFor);
  if (waiting) rows.forEach((row, i) => row.push(tasks[i]!.waitingFor ?? ''));
  const header = ['TASK', 'AGENT', 'STATUS', 'TEMPORAL', 'STARTED', ...(waiting ? ['WAITING FOR'] : [])];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  return [header, ...rows].map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n');
}
