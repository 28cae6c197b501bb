/**
 * Human-readable rendering for the CLI; `--json` prints the data instead. Much of what is shown was
 * written by a model, a tool or any client of the task (tool inputs and results, reasons, comments,
 * memo fields), so every such string passes through safeText/safeLine before it reaches a terminal.
 */
import { recoveryText } from '../protocol/recovery';
import type { TaskSummary, TaskView } from '../client/task-client';
import type { ApprovalRequest, Escalation, TaskEvent, TaskResult, TaskStatus } from '../protocol/task';
import type { ToolError } from '../protocol/tool-error';
import { argumentsProblemOf, storedAsOf } from '../client/approval-arguments';
import { argumentsView, viewText } from '../client/arguments-view';
import { DEFAULT_TASK_QUEUE } from '../protocol/definitions';
import { outcomeVerdict } from '../protocol/outcome';
import { nestedLabel, type NestedPending } from '../client/child-tasks';
import type { QueueWorker } from '../worker/create-worker';
import { decisionOutcome } from '../client/request-outcome';

const MARK: Record<TaskEvent['kind'], string> = {
  task_started: '▶',
  task_forked: '⑂',
  model_replied: '◆',
  tool_called: '→',
  tool_classified: '⚖',
  tool_succeeded: '✓',
  tool_failed: '✗',
  approval_requested: '?',
  approval_decided: '!',
  informed: 'i',
  task_blocked: '⏸',
  task_unblocked: '▶',
  decision_refused: '⊘',
  guidance_added: '✎',
  task_completed: '■',
  task_failed: '✗',
  task_cancelled: '■',
  version_changed: '⇡',
  model_fallback: '↪',
  answer_graded: '★',
};

/**
 * Terminal control sequences, whole: CSI (ESC [ or C1 0x9B, then parameters and a final byte),
 * OSC/DCS/SOS/PM/APC strings (ESC ] P X ^ _ or C1 0x9D 0x90 0x98 0x9E 0x9F, up to BEL or ST, or to
 * the end when unterminated), and two-byte ESC sequences. Removed whole, so no parameter text is
 * left behind to confuse a reader.
 */
const ESCAPE_SEQUENCE = new RegExp(
  [
    '(?:\\u001b\\[|\\u009b)[\\u0030-\\u003f]*[\\u0020-\\u002f]*[\\u0040-\\u007e]?',
    '(?:\\u001b[\\]PX^_]|[\\u0090\\u0098\\u009d\\u009e\\u009f])[\\s\\S]*?(?:\\u0007|\\u001b\\\\|\\u009c|$)',
    '\\u001b[\\u0020-\\u002f]*[\\u0030-\\u007e]?',
  ].join('|'),
  'g',
);
/**
 * Control characters a terminal acts on, except newline and tab: C0 (BEL, BS, CR that overwrites a
 * line...), DEL and C1, plus the Unicode bidi overrides and isolates that reorder what is displayed.
 */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** Text safe to print to a terminal: escape sequences and control characters removed, newlines and tabs kept. */
export function safeText(text: unknown): string {
  const s = typeof text === 'string' ? text : String(text ?? '');
  return s.replace(/\r\n/g, '\n').replace(ESCAPE_SEQUENCE, '').replace(CONTROL, '');
}

/** safeText on one line: a field that should be one line cannot start a fake line of its own. */
export function safeLine(text: unknown): string {
  return safeText(text)
    .replace(/[\t ]*\n[\t ]*/g, ' ⏎ ')
    .replace(/\t/g, ' ');
}

/**
 * Exact JSON (it parses to the same value) that is also safe on a terminal: JSON.stringify escapes
 * C0 controls but leaves DEL, C1 (0x9B is a one-byte CSI) and bidi overrides raw; these are written
 * as JSON \u escapes too.
 */
export function safeJson(value: unknown, indent?: number): string {
  return terminalSafeJsonText(JSON.stringify(value, null, indent) ?? 'null');
}

function terminalSafeJsonText(text: string): string {
  return text.replace(/[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

export function renderEvent(e: TaskEvent): string {
  const who = e.tool ? `${safeLine(e.tool)} ` : e.kind === 'model_replied' ? 'model ' : '';
  const on = e.credentialsOf === undefined ? '' : e.credentialsOf === 'agent' ? " [the agent's credentials]" : ` [credentials of ${safeLine(e.credentialsOf)}]`;
  return `[turn ${e.turn}] ${MARK[e.kind] ?? '·'} ${who}${safeLine(e.detail)}${on}`;
}

/** The model answering now, the fallbacks left and every move (docs/model-fallback.md). */
function renderFallback(f: NonNullable<TaskStatus['fallback']>): string[] {
  const lines = [`fallbacks  ${safeLine(f.fallbacks.join(', '))}   calls go to ${safeLine(f.current)}`];
  for (const s of f.switches) lines.push(`  turn ${s.turn}: ${safeLine(s.from)} -> ${safeLine(s.to)} (${safeLine(s.reason)}: ${safeLine(s.code)})`);
  for (const s of f.skipped) lines.push(`  turn ${s.turn}: passed over ${safeLine(s.model)}: ${safeLine(s.reason)}`);
  return lines;
}

/** A graded outcome (docs/outcomes.md): attempts, the grader's spend, then each grade on a line. */
function renderOutcome(o: NonNullable<TaskStatus['outcome']>): string[] {
  const verdict = outcomeVerdict(o);
  const tokens = o.usage.inputTokens + o.usage.outputTokens + (o.usage.cacheWriteTokens ?? 0) + (o.usage.cacheReadTokens ?? 0);
  return [
    `outcome    ${verdict}: ${o.attempts} of ${o.maxAttempts} attempts graded (grader ${tokens} tokens, $${o.costUsd.toFixed(4)})`,
    ...o.grades.map((g) => `  attempt ${g.attempt} (turn ${g.turn}) ${g.pass ? 'pass' : 'fail'}${g.score !== undefined ? ` ${g.score}` : ''} by ${safeLine(g.model)}: ${safeLine(g.reasons)}`),
  ];
}

export function renderStatus(taskId: string, s: TaskStatus, options: { full?: boolean } = {}): string {
  const lines = [
    `task       ${safeLine(taskId)}`,
    `agent      ${safeLine(s.agent)}   model ${safeLine(s.model)}`,
    `status     ${safeLine(s.agentStatus)} (${safeLine(s.phase)})`,
    `turns      ${s.budgets.turns.used} of ${s.budgets.turns.limit} (${s.budgets.turns.left} left)`,
    `tool calls ${s.toolCalls.total} of ${s.budgets.toolCalls.limit} (${s.toolCalls.succeeded} ok, ${s.toolCalls.failed} failed)`,
    `tokens     ${s.usage.inputTokens} in, ${s.usage.outputTokens} out${s.budgets.tokens ? ` (budget ${s.budgets.tokens.limit})` : ''}` +
      `   cost $${s.costUsd.toFixed(4)}${s.budgets.costUsd ? ` of $${s.budgets.costUsd.limit}` : ''}` +
      `${s.unpricedModels.length ? `   (no price for ${safeLine(s.unpricedModels.join(', '))})` : ''}`,
  ];
  if (s.recovery || s.budgets.recoveryCalls || s.budgets.recoveryCostUsd) {
    const limits = [s.budgets.recoveryCalls ? `${s.budgets.recoveryCalls.limit} calls` : '', s.budgets.recoveryCostUsd ? `$${s.budgets.recoveryCostUsd.limit}` : ''].filter(Boolean);
    const bill = s.recovery ?? { callsRepeated: 0, tokensAgain: 0, costUsdAgain: 0, waitedMs: 0 };
    lines.push(`recovery   ${recoveryText(bill)}${limits.length ? ` (budget ${limits.join(', ')})` : ''}`);
  }
  if (s.fallback) lines.push(...renderFallback(s.fallback));
  if (s.agentVersion || s.build) {
    lines.push(
      `version    agent ${safeLine(s.agentVersion ?? '?')}` +
        (s.build
          ? `   build ${safeLine(s.build.buildId)} of ${safeLine(s.build.deploymentName)} (pinned: it stays on this build until a continue-as-new moves it, or \`deploy promote --move-waiting\` while it waits on a person)`
          : ''),
    );
  }
  if (s.lastError) lines.push(`last error ${renderError(s.lastError)}`);
  if (s.outcome) lines.push(...renderOutcome(s.outcome));
  for (const c of s.children ?? []) {
    const spent = c.spent ? ` (spent ${c.spent.turns} turns, ${c.spent.toolCalls} tool calls, $${c.spent.costUsd.toFixed(4)})` : ` (holds ${c.slice.turns} turns, ${c.slice.toolCalls} tool calls)`;
    lines.push(`sub-agent  ${safeLine(c.agent)} ${safeLine(c.taskId)} ${safeLine(c.state)}${spent}`);
  }
  for (const a of s.pendingApprovals) lines.push('', renderApproval(taskId, a, options));
  if (s.blocked) lines.push('', renderBlocked(taskId, s.blocked));
  if (s.escalations.length || s.decisions.length) {
    lines.push('', 'audit trail:');
    for (const e of s.escalations) {
      lines.push(`  ${safeLine(e.at)}  ${safeLine(e.level)} ${safeLine(e.code)}: ${safeLine(e.reason)}`);
      if (e.resolved) lines.push(`  ${safeLine(e.resolved.at)}  resolved by ${safeLine(e.resolved.by)}: ${safeLine(e.resolved.how)}`);
    }
    // Each message with what became of it, in the words `message` answers with (a refused one is listed below).
    for (const d of s.decisions.filter((d) => d.action === 'message' && !d.outcome)) lines.push(`  ${safeLine(d.at)}  message from ${safeLine(d.by)}: ${safeLine(d.detail)} [${decisionOutcome(d)}]`);
    // Decisions sent as signals that changed nothing: a person who was told "recorded" finds out why here.
    for (const d of s.decisions.filter((d) => d.outcome)) lines.push(`  ${safeLine(d.at)}  ${safeLine(d.action)} by ${safeLine(d.by)} ${safeLine(d.detail)}`);
    if (s.untakenDecisions && s.untakenDecisions > s.decisions.filter((d) => d.outcome).length) {
      lines.push(`  (${s.untakenDecisions} decisions sent as signals in this run changed nothing; the first 100 are listed)`);
    }
    for (const a of s.approvals) {
      lines.push(
        `  ${safeLine(a.decidedAt)}  ${safeLine(a.tool)} ${safeLine(a.decision)} by ${safeLine(a.by)}` +
          `${a.comment ? ` ("${safeLine(a.comment)}")` : ''}${a.denyReason ? `: ${safeLine(a.denyReason)}` : ''}` +
          `${a.editedInput !== undefined ? ` with arguments ${options.full ? safeJson(a.editedInput) : terminalSafeJsonText(viewText(argumentsView(a.editedInput, { indent: 0, maxChars: ARGUMENTS_LINE_CHARS })))}` : ''}`,
      );
    }
  }
  if (s.events.length) {
    lines.push('', `recent events (${s.eventCount} in all):`);
    for (const e of s.events.slice(-10)) lines.push(`  ${renderEvent(e)}`);
  }
  if (s.result) lines.push('', renderResult(s.result));
  return lines.join('\n');
}

export function renderView(view: TaskView, options: { full?: boolean } = {}): string {
  // A long tool's own progress (MCP progress notifications), e.g. "fs__search_files 3/5 scanning".
  const progress = (view.toolProgress ?? []).map((p) => `progress   ${safeLine(p.tool)} ${p.progress}${p.total !== undefined ? `/${p.total}` : ''}${p.message ? ` ${safeLine(p.message)}` : ''}`);
  const nested = (view.nested ?? []).flatMap((n) => ['', ...renderNested(view.summary.taskId, n)]);
  const lineage = renderLineage(view);
  if (view.status) return [renderStatus(view.summary.taskId, view.status, options), ...lineage, ...progress, ...nested].join('\n') + (view.note ? `\n\nnote: ${safeText(view.note)}` : '');
  const lines = [
    `task       ${safeLine(view.summary.taskId)}`,
    `agent      ${safeLine(view.summary.agent ?? '?')}`,
    `status     ${safeLine(view.summary.agentStatus ?? '?')} (Temporal: ${safeLine(view.summary.executionStatus)})`,
    ...lineage,
  ];
  lines.push(...nested);
  if (view.result) lines.push('', renderResult(view.result));
  if (view.failure) lines.push(`failure    ${renderError(view.failure)}`);
  if (view.note) lines.push('', `note: ${safeText(view.note)}`);
  return lines.join('\n');
}

/** Lineage both ways: `forked from TASK@N` (the search attribute, so it shows without a worker too) and the task's forks. */
function renderLineage(view: TaskView): string[] {
  const lines: string[] = [];
  if (view.summary.forkedFrom) lines.push(`forked from ${safeLine(view.summary.forkedFrom)}`);
  if (view.forks?.length) lines.push(`forks      ${view.forks.map((f) => `${safeLine(f.taskId)} (at turn ${f.turn})`).join(', ')}`);
  return lines;
}

/** Arguments up to this many characters (one line of JSON) are printed whole; longer ones shortened unless `--full`. */
export const ARGUMENTS_LINE_CHARS = 2_000;

/**
 * The arguments that will run, resolved from the blob store when they were stored there: whole when
 * short or with `full`, else shortened (every key shown, long values cut in their middle, the gaps
 * named) with the way to see them whole. Arguments that could not be read say so loudly.
 */
export function renderArguments(taskId: string, a: ApprovalRequest, full = false): string[] {
  const problem = argumentsProblemOf(a);
  if (problem) {
    return [`  arguments: NOT SHOWN: ${safeLine(problem)}`, `             the task holds only their reference ${safeJson(a.input)}; do not approve arguments you have not read`];
  }
  const stored = storedAsOf(a);
  const hash = stored ? ` (stored as ${safeLine(stored.$blob)}, checked)` : '';
  const view = argumentsView(a.input, { indent: 0, maxChars: ARGUMENTS_LINE_CHARS });
  if (full || !view.shortened) return [`  arguments: ${safeJson(a.input)}`, ...(hash ? [`            ${hash}`] : [])];
  return [
    `  arguments: ${terminalSafeJsonText(viewText(view))}`,
    `             (shortened: ${view.chars.toLocaleString('en-US')} characters in all${hash}; see them whole: durable-agent status ${safeLine(taskId)} --full)`,
  ];
}

/** A pending approval: the exact arguments, why, until when, and the commands that answer it. */
export function renderApproval(taskId: string, a: ApprovalRequest, options: { full?: boolean } = {}): string {
  const task = safeLine(taskId);
  const id = safeLine(a.id);
  if (a.question) {
    // A tool's question (MCP elicitation): answered with the approve/deny commands.
    return [
      `QUESTION (${id}) from ${safeLine(a.question.server)} during ${safeLine(a.tool)}: ${safeLine(a.question.message)}`,
      `  answer with: ${safeJson(a.question.requestedSchema)}`,
      `  expires:   ${safeLine(a.expiresAt)} (then: no answer)`,
      '  answer it:',
      `    durable-agent approve ${task} ${id} --as YOUR_NAME --edit '{"field": "value"}'`,
      `    durable-agent deny ${task} ${id} --as YOUR_NAME --reason "declined"`,
    ].join('\n');
  }
  return [
    `APPROVAL NEEDED (${id}): ${safeLine(a.tool)} [${safeLine(a.effect)}]`,
    ...renderArguments(taskId, a, options.full),
    `  why:       ${safeLine(a.reason)}`,
    ...(a.onBehalfOf ? [`  for:       ${safeLine(a.onBehalfOf)} (verified starter: runs with their own credentials where they have them)`] : []),
    ...(a.bound ? [`  binds:     agent ${safeLine(a.bound.agentVersion)}, tool contract ${safeLine(a.bound.toolContract)} (a tool changed before the call runs is asked about again)`] : []),
    `  expires:   ${safeLine(a.expiresAt)} (then: ${safeLine(a.onExpiry)})`,
    '  answer it:',
    `    durable-agent approve ${task} ${id} --as YOUR_NAME [--comment TEXT] [--edit '{"...": "..."}']`,
    `    durable-agent deny ${task} ${id} --as YOUR_NAME --reason "why not"`,
  ].join('\n');
}

/**
 * What a sub-agent's child task (at any depth) waits for, shown under its parent as
 * `TASK › researcher: delete_file …`; answered with the parent's id (the decision goes to the child).
 */
export function renderNested(taskId: string, n: NestedPending): string[] {
  const task = safeLine(taskId);
  const lines: string[] = [];
  for (const a of n.approvals) {
    lines.push(
      `APPROVAL NEEDED ${safeLine(nestedLabel(taskId, n, `${a.tool} [${a.effect}]`))} (${safeLine(a.id)}, in task ${safeLine(n.taskId)})`,
      `  why:       ${safeLine(a.reason)}`,
      `  expires:   ${safeLine(a.expiresAt)}`,
      `  answer it: durable-agent approve ${task} ${safeLine(a.id)} --as YOUR_NAME   (or deny ... --reason "why not"; see the arguments: durable-agent status ${safeLine(n.taskId)})`,
    );
  }
  if (n.block) {
    lines.push(
      `BLOCKED ${safeLine(nestedLabel(taskId, n, `${n.block.code}: ${n.block.reason}`))} (in task ${safeLine(n.taskId)})`,
      `  resume it: durable-agent unblock ${safeLine(n.taskId)} --as YOUR_NAME --message "what the agent should do now"`,
    );
  }
  return lines;
}

/** A blocked task: why, and the exact commands that answer it. */
export function renderBlocked(taskId: string, e: Escalation): string {
  const task = safeLine(taskId);
  return [
    `BLOCKED since ${safeLine(e.at)} (turn ${e.turn}): ${safeLine(e.reason)}`,
    ...(e.bound ? [`  binds:     agent ${safeLine(e.bound.agentVersion)} (an unblock on a worker whose agent changed is refused, and the block is raised again with the difference)`] : []),
    '  resume it:',
    `    durable-agent unblock ${task} --as YOUR_NAME --message "what the agent should do now"`,
    `    durable-agent unblock ${task} --as YOUR_NAME --turns N --tool-calls N --tokens N --cost-usd X   (raise a budget)`,
  ].join('\n');
}

export function renderResult(r: TaskResult): string {
  return [
    `${safeLine(r.outcome)} after ${r.turns} turns and ${r.toolCalls} tool calls (model ${safeLine(r.model)}, ${r.usage.inputTokens + r.usage.outputTokens} tokens, $${r.costUsd.toFixed(4)})`,
    '',
    // The model's answer keeps its lines; only what a terminal would act on goes.
    safeText(r.text) || '(the model gave no final text)',
  ].join('\n');
}

export function renderError(e: ToolError): string {
  return `${safeLine(e.error_class)}/${safeLine(e.code)}: ${safeLine(e.detail)}${e.hint ? ` (${safeLine(e.hint)})` : ''}`;
}

export function renderSummaries(tasks: TaskSummary[]): string {
  if (tasks.length === 0) return 'No tasks match.';
  // Cleaned before the widths are measured, so hidden characters cannot skew the columns.
  const rows = tasks.map((t) => [
    safeLine(t.taskId),
    safeLine(t.agent ?? '-'),
    safeLine(t.agentStatus ?? '-'),
    safeLine(t.executionStatus),
    safeLine(t.build ?? '-'),
    safeLine(t.agentVersion ?? '-'),
    t.startTime.toISOString().replace('T', ' ').slice(0, 19),
  ]);
  // A task can wait for a person and, with its worker gone, for a worker too: both are said.
  const waitsFor = (t: TaskSummary) => [t.forkedFrom ? `forked from ${t.forkedFrom}` : undefined, t.waitingFor, t.note].filter(Boolean).join('; ');
  const waiting = tasks.some((t) => waitsFor(t));
  if (waiting) for (const [i, row] of rows.entries()) row.push(safeLine(waitsFor(tasks[i]!)));
  const header = ['TASK', 'AGENT', 'STATUS', 'TEMPORAL', 'BUILD', 'AGENT VERSION', 'STARTED', ...(waiting ? [tasks.some((t) => t.forkedFrom) ? 'NOTES' : 'WAITING FOR'] : [])];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  return [header, ...rows]
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** What a worker polls: `task queue durable-agent.a (agent "a"), durable-agent (agent "a": tasks started before routing by agent)`. */
export function describeQueues(queues: Pick<QueueWorker, 'taskQueue' | 'agents'>[]): string {
  const legacy = (q: Pick<QueueWorker, 'taskQueue'>) => (q.taskQueue === DEFAULT_TASK_QUEUE && queues.length > 1 ? ': tasks started before routing by agent' : '');
  const agents = (names: string[]) => `agent${names.length > 1 ? 's' : ''} ${names.map((a) => `"${safeLine(a)}"`).join(', ')}`;
  return `task queue ${queues.map((q) => `${safeLine(q.taskQueue)} (${agents(q.agents)}${legacy(q)})`).join(', ')}`;
}
