/**
 * The inbox's pages, rendered on the server: plain forms that work without JavaScript, labelled
 * fields grouped in fieldsets, status messages in role=status (errors in role=alert), and one small
 * script on the task page for live progress.
 */
import type { Approver } from './approver-directory';
import { html, trusted, type Html } from './html';
import type { TaskPageData, WaitingTask } from './inbox-data';
import { nestedLabel } from '../client/child-tasks';
import { argumentsHash, type ApprovalAtRest } from '../client/pending-at-rest';
import type { ApprovalRequest, Escalation, TaskStatus } from '../protocol/task';
import type { Message } from '../protocol/messages';
import { outcomeVerdict } from '../protocol/outcome';
import { recoveryText } from '../protocol/recovery';
import { approverProblem, type PolicedDecision } from '../protocol/approver-policy';
import { argumentsProblemOf, storedAsOf } from '../client/approval-arguments';
import { argumentsView } from '../client/arguments-view';
import { ANSWER_FIELD, ANSWER_JSON, defaultAnswer, fieldTypeText, questionFields, type QuestionField } from './question-form';

/**
 * Why the task's policy would refuse this person this decision (the same rule its validators
 * apply), shown beside the form; the task itself still decides.
 */
export function policyProblem(status: TaskStatus | undefined, approver: Approver | undefined, decision: PolicedDecision): string | undefined {
  if (!status?.approvers || !approver) return undefined;
  const policy = { ...(status.approvers.rules ? { approvers: status.approvers.rules } : {}), ...(status.approvers.forbidSelfApproval ? { forbidSelfApproval: true } : {}) };
  return approverProblem(policy, decision, approver, status.starter?.id);
}

function policyNote(problem: string | undefined): Html {
  return problem ? html`<p class="status error policy-note"><strong>The task will refuse you:</strong> ${problem}.</p>` : html``;
}

export const STYLE = `
:root { font-family: system-ui, sans-serif; line-height: 1.45; color: #1b1f24; background: #fafafa; }
body { margin: 0; }
header { display: flex; gap: 1rem; align-items: center; justify-content: space-between; padding: .6rem 1.2rem; background: #1d3557; color: #fff; }
header a { color: #fff; }
header form { margin: 0; }
main { max-width: 68rem; margin: 0 auto; padding: 1rem 1.2rem 3rem; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.2rem; margin-top: 1.6rem; }
.skip { position: absolute; left: -999px; } .skip:focus { left: 1rem; top: .5rem; background: #fff; color: #000; padding: .3rem; }
.card { background: #fff; border: 1px solid #ccd; border-radius: 6px; padding: .8rem 1rem; margin: .8rem 0; }
.card h3 { margin: 0 0 .4rem; font-size: 1.05rem; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; margin: .4rem 0; }
dt { font-weight: 600; } dd { margin: 0; }
pre { background: #f1f3f5; padding: .5rem; overflow-x: auto; white-space: pre-wrap; word-break: break-word; margin: .3rem 0; }
fieldset { border: 1px solid #99a; border-radius: 6px; margin: .8rem 0; padding: .6rem .9rem; }
legend { font-weight: 600; padding: 0 .3rem; }
label { display: block; font-weight: 600; margin-top: .5rem; }
.hint { font-weight: normal; color: #444; font-size: .9rem; }
input[type=text], input[type=password], input[type=number], textarea { width: 100%; box-sizing: border-box; font: inherit; padding: .35rem; border: 1px solid #667; border-radius: 4px; }
textarea.json { font-family: ui-monospace, monospace; min-height: 6rem; }
button { font: inherit; padding: .4rem .9rem; margin-top: .6rem; border-radius: 4px; border: 1px solid #1d3557; background: #1d3557; color: #fff; cursor: pointer; }
button.secondary { background: #fff; color: #1d3557; }
button.danger { background: #9d0208; border-color: #9d0208; }
:focus-visible { outline: 3px solid #f4a261; outline-offset: 2px; }
.status { padding: .6rem .9rem; border-radius: 6px; margin: .6rem 0; }
.status.ok { background: #e6f4ea; border: 1px solid #2d6a4f; }
.status.error { background: #fde8e8; border: 1px solid #9d0208; }
.badge { display: inline-block; padding: 0 .45rem; border-radius: 4px; font-size: .85rem; background: #e9ecef; }
.badge.destructive { background: #fde8e8; color: #7a0006; } .badge.write { background: #fff3cd; }
.grid { display: grid; grid-template-columns: 1fr 1fr; gap: 0 1rem; }
@media (max-width: 40rem) { .grid { grid-template-columns: 1fr; } }
.transcript li { margin-bottom: .5rem; }
blockquote.question { margin: .4rem 0; padding: .4rem .8rem; border-left: 4px solid #1d3557; background: #f1f3f5; white-space: pre-wrap; }
.required { color: #9d0208; }
.omitted { background: #fff3cd; color: #5c4400; font-style: italic; border: 1px dashed #b08900; border-radius: 3px; padding: 0 .2rem; }
fieldset.choices label { display: inline-block; font-weight: normal; margin-right: 1rem; }
table.fields { border-collapse: collapse; width: 100%; margin: .4rem 0; }
table.fields th, table.fields td { text-align: left; border-bottom: 1px solid #dde; padding: .2rem .4rem; vertical-align: top; }
`;

export interface Layout {
  title: string;
  approver?: Approver;
  csrf?: string;
  flash?: { kind: 'ok' | 'error'; text: string };
  scripts?: string[];
}

export function page(layout: Layout, body: Html): string {
  const flash = layout.flash;
  return `<!doctype html>${html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${layout.title} · durable-agent inbox</title>
<link rel="stylesheet" href="/static/inbox.css">
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header>
  <span><a href="/">durable-agent inbox</a></span>
  ${
    layout.approver && layout.csrf
      ? html`<form method="post" action="/signout">
    <span>Signed in as <strong>${layout.approver.name}</strong> (${layout.approver.id}${layout.approver.roles.length ? `; ${layout.approver.roles.join(', ')}` : ''})</span>
    <input type="hidden" name="_csrf" value="${layout.csrf}">
    <button type="submit" class="secondary">Sign out</button>
  </form>`
      : ''
  }
</header>
<main id="main" tabindex="-1">
<div id="flash" role="status" aria-live="polite">${flash ? html`<p class="status ${flash.kind}">${flash.text}</p>` : ''}</div>
${body}
</main>
${(layout.scripts ?? []).map((src) => html`<script src="${src}" defer></script>`)}
</body>
</html>`}`;
}

export function signInPage(options: { csrf: string; next: string; error?: string; proxyNote?: string }): string {
  return page(
    { title: 'Sign in' },
    html`<h1>Sign in to answer tasks</h1>
${options.error ? html`<p class="status error" role="alert" id="signin-error">${options.error}</p>` : ''}
${options.proxyNote ? html`<p>${options.proxyNote}</p>` : ''}
<form method="post" action="/signin" class="card" ${options.error ? html`aria-describedby="signin-error"` : ''}>
  <input type="hidden" name="_csrf" value="${options.csrf}">
  <input type="hidden" name="next" value="${options.next}">
  <fieldset>
    <legend>With your approver id and password</legend>
    <label for="id">Approver id</label>
    <input type="text" id="id" name="id" autocomplete="username" autocapitalize="none" spellcheck="false" ${options.error ? '' : trusted('autofocus')}>
    <label for="password">Password</label>
    <input type="password" id="password" name="password" autocomplete="current-password">
  </fieldset>
  <fieldset>
    <legend>Or with an access token</legend>
    <label for="token">Token <span class="hint">(leave empty when you use a password)</span></label>
    <input type="password" id="token" name="token" autocomplete="off">
  </fieldset>
  <button type="submit">Sign in</button>
</form>`,
  );
}

/** A decision the task will take when a worker runs it: recorded, not refused, so not an error. */
export function recordedPage(layout: Omit<Layout, 'title'>, taskId: string, what: string, note: string): string {
  return page(
    { ...layout, title: 'Decision recorded' },
    html`<h1>Decision recorded</h1>
<div role="status"><p class="status ok">${what}: ${note}.</p></div>
<p>The task takes it (or says why not) when a worker runs it; its page and <code>durable-agent status</code> show the outcome then.</p>
<p><a href="/tasks/${encodeURIComponent(taskId)}">Back to task ${taskId}</a> · <a href="/">Back to the inbox</a></p>`,
  );
}

/** A refusal page: expired or reused links, unknown tasks, forbidden requests. */
export function messagePage(title: string, text: string, layout: Omit<Layout, 'title'> = {}): string {
  return page({ ...layout, title }, html`<h1>${title}</h1><p class="status error" role="alert">${text}</p><p><a href="/">Back to the inbox</a></p>`);
}

function expiry(iso: string, now: number): string {
  const ms = Date.parse(iso) - now;
  if (!Number.isFinite(ms)) return iso;
  if (ms <= 0) return `${iso} (passed)`;
  const minutes = Math.round(ms / 60_000);
  return `${iso} (in ${minutes < 90 ? `${minutes} min` : `${Math.round(minutes / 60)} h`})`;
}

const pretty = (value: unknown) => JSON.stringify(value, null, 2) ?? 'undefined';

/** Where the inbox serves an approval's exact arguments as a JSON download. */
export function argumentsPath(taskId: string, approvalId: string): string {
  return `/tasks/${encodeURIComponent(taskId)}/approvals/${encodeURIComponent(approvalId)}/arguments`;
}

/** Pretty JSON up to this many characters is shown (and editable) whole; longer arguments are shortened. */
export const ARGUMENTS_PAGE_CHARS = 6_000;

/** Arguments too long to show whole: a shortened view, every key kept and each gap marked. */
export function isShortened(a: ApprovalRequest): boolean {
  return !argumentsProblemOf(a) && argumentsView(a.input, { maxChars: ARGUMENTS_PAGE_CHARS }).shortened;
}

/**
 * The arguments that will run: whole when they fit, else shortened (long values keep their first and
 * last characters, the gaps are marked and sized) with a download of the exact JSON. Arguments the
 * inbox could not read are never shown as their reference alone.
 */
function argumentsBlock(taskId: string, a: ApprovalRequest, titled = true): Html {
  const problem = argumentsProblemOf(a);
  if (problem) return html`<p class="status error"><strong>The arguments cannot be shown here:</strong> ${problem}. Do not approve arguments you have not read.</p>`;
  const stored = storedAsOf(a);
  const view = argumentsView(a.input, { maxChars: ARGUMENTS_PAGE_CHARS });
  const hash = stored ? html` <span class="hint">(sha256 <code>${stored.$blob.slice('sha256:'.length)}</code>, checked)</span>` : '';
  // A tool's question shows its call's arguments under its own summary, not as a call to approve.
  const title = (text: string) => (titled ? html`<strong>${text}</strong>` : '');
  if (!view.shortened)
    return html`${titled || stored ? html`<p>${title('Exact arguments')}${hash}</p>` : ''}
<pre>${pretty(a.input)}</pre>`;
  return html`<p>${title('Exact arguments, shortened')} <span class="hint">(${view.chars.toLocaleString('en-US')} characters in all: every field is shown; long values keep their first and last characters)</span></p>
<pre class="arguments">${view.parts.map((p) => (typeof p === 'string' ? p : html`<span class="omitted">… ${p.omitted} not shown …</span>`))}</pre>
<p><a href="${argumentsPath(taskId, a.id)}" download="${`${a.id}-arguments.json`}">Download the exact arguments (JSON, ${view.chars.toLocaleString('en-US')} characters)</a>${hash}</p>`;
}

function approvalDetails(taskId: string, a: ApprovalRequest, now: number): Html {
  return html`<dl>
  <dt>Tool</dt><dd><code>${a.tool}</code></dd>
  <dt>Effect</dt><dd><span class="badge ${a.effect}">${a.effect}</span></dd>
  <dt>Reason</dt><dd>${a.reason}</dd>
  ${a.onBehalfOf ? html`<dt>On behalf of</dt><dd>${a.onBehalfOf} (verified starter: runs with their own credentials where they have them)</dd>` : ''}
  <dt>Expires</dt><dd>${expiry(a.expiresAt, now)}; then: ${a.onExpiry}</dd>
  <dt>Approval id</dt><dd><code>${a.id}</code></dd>
</dl>
${argumentsBlock(taskId, a)}`;
}

/** A sub-agent's child task, named under the task it works for: `TASK › researcher: delete_file` (its own rules decide). */
function nestedNote(t: WaitingTask, what: string) {
  return t.nested ? html`<p class="nested">Sub-agent work: <code>${nestedLabel(t.nested.top, t.nested, what)}</code></p>` : '';
}

export function inboxPage(layout: Omit<Layout, 'title'>, tasks: WaitingTask[], now = Date.now()): string {
  const approvals = tasks.flatMap((t) => (t.status?.pendingApprovals ?? []).map((a) => ({ t, a })));
  const atRest = tasks.flatMap((t) => (t.atRest?.approvals ?? []).map((a) => ({ t, a })));
  const blocked = tasks.filter((t) => t.status?.blocked || t.atRest?.block || (!t.status && !t.atRest && t.summary.agentStatus === 'blocked'));
  const unknown = tasks.filter((t) => !t.status && !t.atRest);
  const questions = approvals.filter(({ a }) => a.question).length;
  const pendingCount = approvals.length + atRest.length;
  return page(
    { ...layout, title: 'Inbox' },
    html`<h1>Inbox</h1>
<p>${pendingCount} pending approval${pendingCount === 1 ? '' : 's'}${questions ? ` (${questions} of them question${questions === 1 ? '' : 's'} from tools)` : ''}, ${blocked.length} blocked task${blocked.length === 1 ? '' : 's'}. <a href="/">Refresh</a></p>
<h2 id="approvals">Pending approvals</h2>
${pendingCount === 0 ? html`<p>Nothing waits for an approval.</p>` : ''}
${approvals.map(({ t, a }) =>
  a.question
    ? html`<article class="card approval question" aria-labelledby="ap-${a.id}">
  <h3 id="ap-${a.id}"><a href="/tasks/${encodeURIComponent(t.summary.taskId)}#approval-${a.id}">Question from ${a.question.server} on task ${t.summary.taskId}</a></h3>
  <p>Agent <strong>${t.summary.agent ?? t.status?.agent ?? '?'}</strong>, turn ${a.turn}, asked ${a.requestedAt} during <code>${a.tool}</code></p>
  ${questionDetails(t.summary.taskId, a, a.question, now)}
  ${policyNote(policyProblem(t.status, layout.approver, { kind: 'approve', tool: a.tool, effect: a.effect }))}
  <p><a href="/tasks/${encodeURIComponent(t.summary.taskId)}#approval-${a.id}">Answer or decline<span class="skip"> the question from ${a.question.server} on ${t.summary.taskId}</span></a></p>
</article>`
    : html`<article class="card approval" aria-labelledby="ap-${a.id}">
  <h3 id="ap-${a.id}"><a href="/tasks/${encodeURIComponent(t.summary.taskId)}#approval-${a.id}">${a.tool} on task ${t.summary.taskId}</a></h3>
  ${nestedNote(t, a.tool)}
  <p>Agent <strong>${t.summary.agent ?? t.status?.agent ?? '?'}</strong>, turn ${a.turn}, asked ${a.requestedAt}</p>
  ${approvalDetails(t.summary.taskId, a, now)}
  ${policyNote(policyProblem(t.status, layout.approver, { kind: 'approve', tool: a.tool, effect: a.effect }))}
  <p><a href="/tasks/${encodeURIComponent(t.summary.taskId)}#approval-${a.id}">Review and answer<span class="skip"> ${a.tool} on ${t.summary.taskId}</span></a></p>
</article>`,
)}
${atRest.map(
  ({ t, a }) => html`<article class="card approval at-rest" aria-labelledby="ap-${a.id}">
  <h3 id="ap-${a.id}"><a href="/tasks/${encodeURIComponent(t.summary.taskId)}#approval-${a.id}">${a.tool} on task ${t.summary.taskId}</a></h3>
  ${nestedNote(t, a.tool)}
  <p class="status error no-worker">${t.note ?? ''}</p>
  <p>Agent <strong>${t.summary.agent ?? '?'}</strong></p>
  ${atRestDetails(a, now)}
  <p><a href="/tasks/${encodeURIComponent(t.summary.taskId)}#approval-${a.id}">Review and answer<span class="skip"> ${a.tool} on ${t.summary.taskId}</span></a></p>
</article>`,
)}
<h2 id="blocked">Blocked tasks</h2>
${blocked.length === 0 ? html`<p>No task is blocked.</p>` : ''}
${blocked.map(
  (t) => html`<article class="card blocked" aria-labelledby="bl-${t.summary.taskId}">
  <h3 id="bl-${t.summary.taskId}"><a href="/tasks/${encodeURIComponent(t.summary.taskId)}#blocked">Task ${t.summary.taskId}</a></h3>
  ${nestedNote(t, 'blocked')}
  ${t.status?.blocked ? blockedDetails(t.status.blocked) : t.atRest?.block ? html`<p class="status error no-worker">${t.note ?? ''}</p>${blockedDetails(t.atRest.block)}` : html`<p>${t.note ?? ''}</p>`}
</article>`,
)}
${unknown.length ? html`<h2>Waiting, details unavailable</h2><ul>${unknown.map((t) => html`<li><a href="/tasks/${encodeURIComponent(t.summary.taskId)}">${t.summary.taskId}</a>: ${t.note ?? ''}</li>`)}</ul>` : ''}`,
  );
}

/** A block: from the live status (an escalation) or from the memo (id, code and reason only). */
type BlockShown = Pick<Escalation, 'id' | 'code' | 'reason'> & Partial<Pick<Escalation, 'at' | 'turn'>>;

function blockedDetails(e: BlockShown): Html {
  return html`<dl><dt>Why</dt><dd>${e.reason}</dd><dt>Code</dt><dd><code>${e.code}</code></dd>${e.at ? html`<dt>Since</dt><dd>${e.at} (turn ${e.turn ?? '?'})</dd>` : ''}<dt>Block id</dt><dd><code>${e.id}</code></dd></dl>`;
}

/** An approval as the memo shows it: no worker ran to say more. Arguments only when the memo holds them whole. */
function atRestDetails(a: ApprovalAtRest, now: number): Html {
  return html`<dl>
  <dt>Tool</dt><dd><code>${a.tool}</code></dd>
  <dt>Effect</dt><dd><span class="badge ${a.effect}">${a.effect}</span></dd>
  <dt>Reason</dt><dd>${a.reason}</dd>
  <dt>Expires</dt><dd>${expiry(a.expiresAt, now)}</dd>
  <dt>Approval id</dt><dd><code>${a.id}</code></dd>
</dl>
${
  a.input === undefined
    ? html`<p class="status error"><strong>The arguments cannot be shown here:</strong> ${a.argumentsProblem ?? 'unknown'}. Do not approve arguments you have not read; you may approve with arguments you write yourself.</p>`
    : html`<p><strong>Exact arguments</strong>${a.storedAs ? html` <span class="hint">(sha256 <code>${a.storedAs.$blob.slice('sha256:'.length)}</code>, checked)</span>` : ''}</p>
<pre>${pretty(a.input)}</pre>`
}`;
}

/** The values a refused form is shown again with, and the refusal. */
export interface FormState {
  form: 'approve' | 'deny' | 'answer' | 'unblock' | 'message';
  approvalId?: string;
  values: Record<string, string>;
  error: string;
}

/** What every form that decides on an approval posts besides its own fields: the CSRF token and which approval. */
function decisionFields(csrf: string, approvalId: string): Html {
  return html`<input type="hidden" name="_csrf" value="${csrf}">
    <input type="hidden" name="approvalId" value="${approvalId}">`;
}

function errorFor(state: FormState | undefined, form: FormState['form'], approvalId?: string): Html {
  if (!state || state.form !== form || (approvalId && state.approvalId !== approvalId)) return html``;
  return html`<p class="status error" role="alert" id="${form}-error${approvalId ? `-${approvalId}` : ''}" tabindex="-1" data-focus>${state.error}</p>`;
}

function valueOf(state: FormState | undefined, form: FormState['form'], field: string, fallback: string, approvalId?: string): string {
  if (state && state.form === form && (!approvalId || state.approvalId === approvalId)) return state.values[field] ?? fallback;
  return fallback;
}

function approvalForms(taskId: string, a: ApprovalRequest, csrf: string, state: FormState | undefined, now: number, problem: string | undefined): Html {
  const base = `/tasks/${encodeURIComponent(taskId)}`;
  return html`<section class="card approval" id="approval-${a.id}" aria-labelledby="h-approval-${a.id}">
  <h3 id="h-approval-${a.id}">Approval: ${a.tool}</h3>
  ${approvalDetails(taskId, a, now)}
  ${policyNote(problem)}
  <div class="grid">
  <form method="post" action="${base}/approve">
    ${decisionFields(csrf, a.id)}
    <input type="hidden" name="inputHash" value="${a.inputHash}">
    ${argumentsProblemOf(a) ? '' : html`<input type="hidden" name="argumentsHash" value="${argumentsHash(a.input)}">`}
    <fieldset>
      <legend>Approve</legend>
      ${errorFor(state, 'approve', a.id)}
      ${
        isShortened(a)
          ? html`<label for="args-${a.id}">Different arguments (JSON) <span class="hint" id="args-hint-${a.id}">Leave empty to approve the arguments above exactly as they are; to run different ones, paste a whole JSON object (the task checks it against the tool's schema).</span></label>
      <textarea class="json" id="args-${a.id}" name="arguments" aria-describedby="args-hint-${a.id}" spellcheck="false">${valueOf(state, 'approve', 'arguments', '', a.id)}</textarea>`
          : html`<label for="args-${a.id}">Arguments (JSON) <span class="hint" id="args-hint-${a.id}">Edit them to run different ones; the task checks them against the tool's schema.</span></label>
      <textarea class="json" id="args-${a.id}" name="arguments" aria-describedby="args-hint-${a.id}" spellcheck="false">${valueOf(state, 'approve', 'arguments', pretty(a.input), a.id)}</textarea>`
      }
      <label for="comment-${a.id}">Comment <span class="hint">(optional)</span></label>
      <input type="text" id="comment-${a.id}" name="comment" value="${valueOf(state, 'approve', 'comment', '', a.id)}">
      <button type="submit">Approve</button>
    </fieldset>
  </form>
  ${denyForm(base, csrf, a.id, state)}
  </div>
</section>`;
}

/** The deny form of one approval: the model is told the reason. */
function denyForm(base: string, csrf: string, approvalId: string, state: FormState | undefined): Html {
  const a = { id: approvalId };
  return html`<form method="post" action="${base}/deny">
    ${decisionFields(csrf, a.id)}
    <fieldset>
      <legend>Deny</legend>
      ${errorFor(state, 'deny', a.id)}
      <label for="reason-${a.id}">Reason <span class="hint">(required; the model is told)</span></label>
      <textarea id="reason-${a.id}" name="reason" required>${valueOf(state, 'deny', 'reason', '', a.id)}</textarea>
      <button type="submit" class="danger">Deny</button>
    </fieldset>
  </form>`;
}

/**
 * Approve and deny for an approval known only from the memo. The approve form carries a hash of
 * the arguments shown (none when none could be), so the inbox approves as-is only what was read.
 */
function atRestApprovalForms(taskId: string, a: ApprovalAtRest, csrf: string, state: FormState | undefined, now: number): Html {
  const base = `/tasks/${encodeURIComponent(taskId)}`;
  const known = a.input !== undefined;
  return html`<section class="card approval at-rest" id="approval-${a.id}" aria-labelledby="h-approval-${a.id}">
  <h3 id="h-approval-${a.id}">Approval: ${a.tool}</h3>
  ${atRestDetails(a, now)}
  <div class="grid">
  <form method="post" action="${base}/approve">
    ${decisionFields(csrf, a.id)}
    ${known ? html`<input type="hidden" name="argumentsHash" value="${argumentsHash(a.input)}">` : ''}
    <fieldset>
      <legend>Approve</legend>
      ${errorFor(state, 'approve', a.id)}
      <label for="args-${a.id}">${known ? 'Arguments (JSON)' : 'Your arguments (JSON)'} <span class="hint" id="args-hint-${a.id}">${known ? "Edit them to run different ones; the task checks them against the tool's schema." : "The arguments above could not be shown, so only arguments you write here can be approved; the task checks them against the tool's schema."}</span></label>
      <textarea class="json" id="args-${a.id}" name="arguments" aria-describedby="args-hint-${a.id}" spellcheck="false">${valueOf(state, 'approve', 'arguments', known ? pretty(a.input) : '', a.id)}</textarea>
      <label for="comment-${a.id}">Comment <span class="hint">(optional)</span></label>
      <input type="text" id="comment-${a.id}" name="comment" value="${valueOf(state, 'approve', 'comment', '', a.id)}">
      <button type="submit">Approve</button>
    </fieldset>
  </form>
  ${denyForm(base, csrf, a.id, state)}
  </div>
</section>`;
}

type Question = NonNullable<ApprovalRequest['question']>;

/** The question as asked: the server's words, the fields it wants, the call it came from. */
function questionDetails(taskId: string, a: ApprovalRequest, q: Question, now: number): Html {
  const fields = questionFields(q.requestedSchema);
  return html`<p><strong>${q.server} asks:</strong></p>
<blockquote class="question">${q.message}</blockquote>
${
  fields
    ? fields.length
      ? html`<table class="fields"><caption class="skip">Fields the answer has</caption>
  <thead><tr><th scope="col">Field</th><th scope="col">Type</th><th scope="col">Required</th><th scope="col">About</th></tr></thead>
  <tbody>${fields.map(
    (f) =>
      html`<tr><th scope="row"><code>${f.name}</code>${f.title && f.title !== f.name ? html` <span class="hint">${f.title}</span>` : ''}</th><td>${fieldTypeText(f)}${f.options ? html`: ${f.options.map((o) => o.label).join(', ')}` : ''}</td><td>${f.required ? 'required' : 'optional'}</td><td>${f.description ?? ''}</td></tr>`,
  )}</tbody></table>`
      : html`<p>The server asks for no fields: answering just says yes.</p>`
    : html`<p><strong>The answer's schema</strong> (answer with a JSON object that matches it)</p><pre>${pretty(q.requestedSchema)}</pre>`
}
<dl>
  <dt>During</dt><dd><code>${a.tool}</code> (turn ${a.turn})</dd>
  <dt>Expires</dt><dd>${expiry(a.expiresAt, now)}; then: ${a.onExpiry === 'deny' ? 'the server is told nobody answered' : a.onExpiry}</dd>
  <dt>Question id</dt><dd><code>${a.id}</code></dd>
</dl>
<details><summary>The call's arguments</summary>${argumentsBlock(taskId, a, false)}</details>`;
}

/** One labelled input per field; a required field says so in its label and in `required`. */
function answerField(a: ApprovalRequest, f: QuestionField, index: number, state: FormState | undefined): Html {
  const id = `q-${a.id}-${index}`;
  const name = ANSWER_FIELD + f.name;
  // Shown again after a refusal: what was sent (no box ticked is an answer too), else the default.
  const fallback = state?.form === 'answer' && state.approvalId === a.id ? '' : Array.isArray(f.defaultValue) ? f.defaultValue.join('\n') : (f.defaultValue ?? '');
  const shown = valueOf(state, 'answer', name, fallback, a.id);
  const hintId = `${id}-hint`;
  const hint = html`<span class="hint" id="${hintId}">${[fieldTypeText(f), f.description].filter(Boolean).join('. ')}</span>`;
  const labelText = html`${f.title ?? f.name}${f.title && f.title !== f.name ? html` <code class="hint">${f.name}</code>` : ''}${f.required ? html` <span class="required">(required)</span>` : html` <span class="hint">(optional)</span>`}`;
  const required = f.required ? trusted(' required aria-required="true"') : '';
  if (f.kind === 'choices') {
    const chosen = new Set(shown ? shown.split('\n') : []);
    return html`<fieldset class="choices" aria-describedby="${hintId}"><legend>${labelText}</legend>${hint}<br>
    ${f.options!.map((o, j) => html`<label for="${id}-${j}"><input type="checkbox" id="${id}-${j}" name="${name}" value="${o.value}"${chosen.has(o.value) ? trusted(' checked') : ''}> ${o.label}</label>`)}
    </fieldset>`;
  }
  if (f.kind === 'choice' || f.kind === 'boolean') {
    const options =
      f.kind === 'boolean'
        ? [
            { value: 'true', label: 'Yes' },
            { value: 'false', label: 'No' },
          ]
        : f.options!;
    return html`<label for="${id}">${labelText}</label> ${hint}
    <select id="${id}" name="${name}" aria-describedby="${hintId}"${required}>
      <option value=""${shown === '' ? trusted(' selected') : ''}>${f.required ? '(choose one)' : '(no answer)'}</option>
      ${options.map((o) => html`<option value="${o.value}"${o.value === shown ? trusted(' selected') : ''}>${o.label}</option>`)}
    </select>`;
  }
  const number = f.kind === 'number' || f.kind === 'integer';
  const type = number ? 'number' : (({ email: 'email', uri: 'url', date: 'date', 'date-time': 'datetime-local' } as Record<string, string>)[f.format ?? ''] ?? 'text');
  const limits = [
    number && f.minimum !== undefined ? html` min="${f.minimum}"` : '',
    number && f.maximum !== undefined ? html` max="${f.maximum}"` : '',
    number ? html` step="${f.kind === 'integer' ? '1' : 'any'}"` : '',
    f.maxLength !== undefined ? html` maxlength="${f.maxLength}"` : '',
  ];
  return html`<label for="${id}">${labelText}</label> ${hint}
    <input type="${type}" id="${id}" name="${name}" value="${shown}" aria-describedby="${hintId}"${limits}${required}>`;
}

function questionForms(taskId: string, a: ApprovalRequest, csrf: string, state: FormState | undefined, now: number, problem: string | undefined): Html {
  const q = a.question!;
  const base = `/tasks/${encodeURIComponent(taskId)}`;
  const fields = questionFields(q.requestedSchema);
  return html`<section class="card approval question" id="approval-${a.id}" aria-labelledby="h-approval-${a.id}">
  <h3 id="h-approval-${a.id}">Question from ${q.server}</h3>
  ${questionDetails(taskId, a, q, now)}
  ${policyNote(problem)}
  <div class="grid">
  <form method="post" action="${base}/answer">
    ${decisionFields(csrf, a.id)}
    <fieldset>
      <legend>Answer</legend>
      ${errorFor(state, 'answer', a.id)}
      ${
        fields
          ? fields.map((f, i) => answerField(a, f, i, state))
          : html`<label for="answer-json-${a.id}">Answer (JSON) <span class="hint" id="answer-json-hint-${a.id}">A JSON object matching the schema above; the task checks it.</span></label>
      <textarea class="json" id="answer-json-${a.id}" name="${ANSWER_JSON}" aria-describedby="answer-json-hint-${a.id}" spellcheck="false">${valueOf(state, 'answer', ANSWER_JSON, pretty(defaultAnswer(q.requestedSchema)), a.id)}</textarea>`
      }
      <label for="answer-comment-${a.id}">Comment <span class="hint">(optional; recorded, not sent to the server)</span></label>
      <input type="text" id="answer-comment-${a.id}" name="comment" value="${valueOf(state, 'answer', 'comment', '', a.id)}">
      <button type="submit">Send answer</button>
    </fieldset>
  </form>
  <form method="post" action="${base}/deny">
    ${decisionFields(csrf, a.id)}
    <input type="hidden" name="question" value="1">
    <fieldset>
      <legend>Decline</legend>
      ${errorFor(state, 'deny', a.id)}
      <p class="hint">The server is told you declined; the call goes on without an answer.</p>
      <label for="reason-${a.id}">Reason <span class="hint">(optional; recorded)</span></label>
      <textarea id="reason-${a.id}" name="reason">${valueOf(state, 'deny', 'reason', '', a.id)}</textarea>
      <button type="submit" class="danger">Decline</button>
    </fieldset>
  </form>
  </div>
</section>`;
}

/** The unblock form names the block the person sees (blockId): a form left open while the task blocked again is refused. */
function unblockForm(taskId: string, e: BlockShown, csrf: string, state: FormState | undefined, budgets: TaskStatus['budgets'] | undefined, problem: string | undefined): Html {
  const b = budgets;
  const v = (field: string) => valueOf(state, 'unblock', field, '');
  const limit = (name: string, label: string, reading: { used: number; limit: number } | undefined, step = '1') =>
    html`<div><label for="budget-${name}">${label} <span class="hint">${reading ? `(used ${reading.used} of ${reading.limit}; new total)` : '(new total)'}</span></label>
    <input type="number" id="budget-${name}" name="${name}" min="1" step="${step}" value="${v(name)}"></div>`;
  return html`<section class="card" id="blocked" aria-labelledby="h-blocked">
  <h3 id="h-blocked">Blocked: ${e.code}</h3>
  ${blockedDetails(e)}
  ${policyNote(problem)}
  <form method="post" action="/tasks/${encodeURIComponent(taskId)}/unblock">
    <input type="hidden" name="_csrf" value="${csrf}">
    <input type="hidden" name="blockId" value="${e.id}">
    <fieldset>
      <legend>Unblock</legend>
      ${errorFor(state, 'unblock')}
      <label for="unblock-message">Message for the model <span class="hint">(optional)</span></label>
      <textarea id="unblock-message" name="message">${v('message')}</textarea>
      <fieldset>
        <legend>Raise budgets <span class="hint">(optional)</span></legend>
        <div class="grid">
          ${limit('turns', 'Turns', b?.turns)}
          ${limit('toolCalls', 'Tool calls', b?.toolCalls)}
          ${limit('tokens', 'Tokens', b?.tokens)}
          ${limit('costUsd', 'Cost (USD)', b?.costUsd, '0.01')}
          ${b?.recoveryCalls ? limit('recoveryCalls', 'Recovery calls', b.recoveryCalls) : ''}
          ${b?.recoveryCostUsd ? limit('recoveryCostUsd', 'Recovery cost (USD)', b.recoveryCostUsd, '0.01') : ''}
        </div>
      </fieldset>
      <button type="submit">Unblock</button>
    </fieldset>
  </form>
</section>`;
}

function messageForm(taskId: string, csrf: string, state: FormState | undefined, problem: string | undefined): Html {
  return html`<form method="post" action="/tasks/${encodeURIComponent(taskId)}/message" class="card" id="message">
  <input type="hidden" name="_csrf" value="${csrf}">
  <fieldset>
    <legend>Send a message</legend>
    ${problem ? html`<p class="status error policy-note"><strong>The model will not read your message:</strong> ${problem}.</p>` : ''}
    ${errorFor(state, 'message')}
    <label for="message-text">Guidance for the model <span class="hint">(read before its next call)</span></label>
    <textarea id="message-text" name="text" required>${valueOf(state, 'message', 'text', '')}</textarea>
    <button type="submit">Send message</button>
  </fieldset>
</form>`;
}

function blockText(block: { type: string; [k: string]: unknown }): string {
  switch (block.type) {
    case 'text':
      return String(block.text);
    case 'tool_use':
      return `→ ${String(block.name)} ${JSON.stringify(block.input)}`;
    case 'tool_result':
      return `← ${block.is_error ? 'error ' : ''}${typeof block.content === 'string' ? block.content : JSON.stringify(block.content)}`;
    case 'thinking':
      return '(thinking)';
    default:
      return `(${block.type})`;
  }
}

function transcriptList(messages: Message[]): Html {
  if (messages.length === 0) return html`<p>No transcript available.</p>`;
  return html`<ol class="transcript">${messages.map((m) => {
    const blocks = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : (m.content as { type: string }[]);
    const text = blocks.map((b) => blockText(b as { type: string })).join('\n');
    return html`<li><strong>${m.role}</strong><pre>${text.length > 4000 ? `${text.slice(0, 4000)}… (${text.length - 4000} more characters)` : text}</pre></li>`;
  })}</ol>`;
}

/** A graded outcome (docs/outcomes.md): the verdict, attempts, the grader's cost and each grade's reasons. */
function outcomeItem(o: NonNullable<TaskPageData['status']>['outcome'] & object): Html {
  const verdict = outcomeVerdict(o);
  return html`<dt>Outcome</dt><dd>${verdict}: ${o.attempts} of ${o.maxAttempts} attempts graded, grader $${o.costUsd.toFixed(4)}<ol class="grades">${o.grades.map((g) => html`<li>attempt ${g.attempt}: ${g.pass ? 'pass' : 'fail'}${g.score !== undefined ? ` ${g.score}` : ''} — ${g.reasons}</li>`)}</ol></dd>`;
}

export function taskPage(layout: Omit<Layout, 'title'> & { csrf: string }, data: TaskPageData, state?: FormState, now = Date.now()): string {
  const s = data.status;
  const open = data.summary.executionStatus === 'RUNNING';
  const agentStatus = s?.agentStatus ?? data.summary.agentStatus ?? data.summary.executionStatus.toLowerCase();
  const result = s?.result ?? data.result;
  return page(
    { ...layout, title: `Task ${data.taskId}`, scripts: open ? ['/static/task.js'] : [] },
    html`<h1>Task ${data.taskId}</h1>
<section class="card" aria-labelledby="h-progress" id="progress" data-task="${data.taskId}">
  <h2 id="h-progress">Progress</h2>
  <dl>
    <dt>Agent</dt><dd>${data.summary.agent ?? s?.agent ?? '?'}</dd>
    <dt>Status</dt><dd><span id="live-status" data-status="${agentStatus}">${agentStatus}</span>${s ? html` · phase <span id="live-phase">${s.phase}</span> · turn <span id="live-turn">${s.turn}</span>` : ''}</dd>
    ${s ? html`<dt>Budgets</dt><dd>turns ${s.budgets.turns.used}/${s.budgets.turns.limit}, tool calls ${s.budgets.toolCalls.used}/${s.budgets.toolCalls.limit}${s.budgets.tokens ? `, tokens ${s.budgets.tokens.used}/${s.budgets.tokens.limit}` : ''}${s.budgets.costUsd ? `, cost $${s.budgets.costUsd.used.toFixed(4)}/$${s.budgets.costUsd.limit}` : ''}</dd>` : ''}
    ${s?.recovery ? html`<dt>Recovery</dt><dd>${recoveryText(s.recovery)}</dd>` : ''}
    ${s?.outcome ? outcomeItem(s.outcome) : ''}
  </dl>
  ${data.note ? html`<p${data.atRest ? trusted(' class="status error no-worker"') : ''}>${data.note}</p>` : ''}
  <div id="live-result" role="status" aria-live="polite">${result ? html`<p class="status ok"><strong>Result (${result.outcome}):</strong> ${result.text}</p>` : ''}${data.failure ? html`<p class="status error">Failed: ${data.failure.detail}</p>` : ''}</div>
  <div id="live-notice" role="status" aria-live="polite"></div>
  ${open ? html`<noscript><p>Live updates need JavaScript; <a href="">reload</a> to see progress.</p></noscript>` : ''}
</section>
${open ? html`<section class="card" aria-labelledby="h-output"><h2 id="h-output">Live output</h2><pre id="live-output" aria-live="off"></pre></section>` : ''}
${s && s.pendingApprovals.length ? html`<h2>Pending approvals</h2>${s.pendingApprovals.map((a) => (a.question ? questionForms : approvalForms)(data.taskId, a, layout.csrf, state, now, policyProblem(s, layout.approver, { kind: 'approve', tool: a.tool, effect: a.effect })))}` : ''}
${!s && data.atRest?.approvals.length ? html`<h2>Pending approvals</h2>${data.atRest.approvals.map((a) => atRestApprovalForms(data.taskId, a, layout.csrf, state, now))}` : ''}
${s?.blocked ? unblockForm(data.taskId, s.blocked, layout.csrf, state, s.budgets, policyProblem(s, layout.approver, { kind: 'unblock' })) : ''}
${!s && data.atRest?.block ? unblockForm(data.taskId, data.atRest.block, layout.csrf, state, undefined, undefined) : ''}
${open ? messageForm(data.taskId, layout.csrf, state, policyProblem(s, layout.approver, { kind: 'message' })) : ''}
<h2 id="h-events">Recent events</h2>
<ol id="live-events">${(s?.events ?? []).slice(-10).map((e) => html`<li>${e.at} turn ${e.turn} ${e.kind}${e.tool ? ` ${e.tool}` : ''}: ${e.detail}</li>`)}</ol>
${s && s.approvals.length ? html`<h2>Decided approvals</h2><ul>${s.approvals.map((a) => html`<li><code>${a.id}</code> ${a.tool}: ${a.decision} by ${a.by} at ${a.decidedAt}${a.denyReason ? ` (${a.denyReason})` : ''}</li>`)}</ul>` : ''}
<h2 id="h-transcript">Recent transcript</h2>
${transcriptList(data.recent)}`,
  );
}

/** The task page's only script: live progress over server-sent events, announced politely. */
export const TASK_SCRIPT = `'use strict';
(function () {
  var progress = document.getElementById('progress');
  if (!progress) return;
  var focus = document.querySelector('[data-focus]');
  if (focus) focus.focus();
  var task = progress.getAttribute('data-task');
  var shown = { pending: null, blocked: null };
  var set = function (id, text) { var el = document.getElementById(id); if (el && el.textContent !== text) el.textContent = text; };
  var source = new EventSource('/tasks/' + encodeURIComponent(task) + '/events');
  source.addEventListener('status', function (event) {
    var v = JSON.parse(event.data);
    var status = document.getElementById('live-status');
    if (status) { status.textContent = v.agentStatus || v.executionStatus.toLowerCase(); status.setAttribute('data-status', status.textContent); }
    if (v.phase) set('live-phase', v.phase);
    if (v.turn !== undefined) set('live-turn', String(v.turn));
    var list = document.getElementById('live-events');
    if (list) {
      list.textContent = '';
      v.events.forEach(function (line) { var li = document.createElement('li'); li.textContent = line; list.appendChild(li); });
    }
    var pending = v.pendingApprovals.join(','), blocked = v.blocked || '';
    if (shown.pending === null) { shown.pending = pending; shown.blocked = blocked; }
    else if (pending !== shown.pending || blocked !== shown.blocked) {
      shown.pending = pending; shown.blocked = blocked;
      var notice = document.getElementById('live-notice');
      notice.textContent = '';
      var p = document.createElement('p'); p.className = 'status ok';
      p.appendChild(document.createTextNode('What this task waits for has changed. '));
      var a = document.createElement('a'); a.href = ''; a.textContent = 'Reload to answer'; p.appendChild(a);
      notice.appendChild(p);
    }
    if (v.result || v.failure) {
      var out = document.getElementById('live-result');
      out.textContent = '';
      var r = document.createElement('p');
      r.className = v.result ? 'status ok' : 'status error';
      r.textContent = v.result ? 'Result (' + v.result.outcome + '): ' + v.result.text : 'Failed: ' + v.failure;
      out.appendChild(r);
    }
    if (v.closed) source.close();
  });
  // The model's answer as it streams (text and tool calls); a retried call says so and starts over.
  var output = document.getElementById('live-output');
  if (output) {
    var live = new EventSource('/tasks/' + encodeURIComponent(task) + '/output');
    var append = function (text) { output.appendChild(document.createTextNode(text)); output.scrollTop = output.scrollHeight; };
    live.addEventListener('output', function (event) {
      var e = JSON.parse(event.data);
      if (e.kind === 'call_started') append((output.textContent ? '\\n\\n' : '') + (e.retry ? '[call retried, attempt ' + e.attempt + ']\\n' : ''));
      else if (e.kind === 'text') append(e.text);
      else if (e.kind === 'tool_use') append('\\n-> ' + e.name + ' ');
      else if (e.kind === 'tool_input') append(e.json);
    });
    live.addEventListener('end', function () { live.close(); });
  }
})();
`;
