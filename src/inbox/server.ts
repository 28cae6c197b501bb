/**
 * The inbox web app: node:http, server-rendered pages, forms that post back. People sign in
 * (approvers file, or a trusted proxy's header), every form carries the session's CSRF token and
 * every POST's Origin is checked; decisions go to the task through TaskClient.decide (signed by
 * the client's DecisionSigner when it has one), and the task's own validators say yes or no. With no
 * worker running the task, what is pending comes from its memo and a decision is recorded (a
 * signal) for the task to take when a worker runs it; the person is told so plainly.
 */
import type http from 'node:http';
import { HttpError } from '../net/http-error';
import { canonicalJson } from '../protocol/canonical-json';
import { parseBudgetRaise, RAISABLE_BUDGETS, type BudgetRaise } from '../rules/unblock-budget';
import { listenHttp, type HttpListener } from '../net/http-listener';
import { randomBytes } from 'node:crypto';
import { TaskNotFoundError, TaskRejectedError, type TaskClient } from '../client/task-client';
import type { UnblockInput } from '../protocol/task';
import type { Approver, ApproverDirectory } from './approver-directory';
import { liveStatus, liveView, pendingNow, shownStatus, taskPageData, waitingTasks } from './inbox-data';
import { argumentsHash } from '../client/pending-at-rest';
import type { DecisionOutcome } from '../client/send-decision';
import { followLiveOutput } from '../live-output/follow-live-output';
import type { LiveOutputLog } from '../live-output/live-output-log';
import { openLiveOutputLog } from '../live-output/open-live-output-log';
import type { BlobStore } from '../blobs/blob-store';
import { ApprovalArguments, argumentsProblemOf } from '../client/approval-arguments';
import { type UsedLinks, verifyLink } from '../notifications/links';
import { inboxPage, messagePage, policyProblem, recordedPage, signInPage, STYLE, TASK_SCRIPT, taskPage, type FormState } from './pages';
import { constantTimeEqual } from '../crypto/constant-time';
import { answerFromForm } from './question-form';
import { csrfMatches, SESSION_COOKIE, SessionStore, SignInLimiter, type Session, type SessionOptions } from './sessions';

export interface TrustedHeaderOptions {
  /** The request header that names the signed-in approver, e.g. `x-forwarded-user`. */
  header: string;
  /** Remote addresses of the proxy; the header is ignored (and refused) from anywhere else. Default ['127.0.0.1', '::1']. */
  proxies?: string[];
}

export interface InboxOptions {
  client: TaskClient;
  directory: ApproverDirectory;
  /** The HMAC key that notification links are signed with (see links.ts). */
  linkKey: Buffer;
  usedLinks: UsedLinks;
  /** The URL people open (behind a proxy: its public https URL). POSTs must come from this origin. Default: the listening address. */
  publicUrl?: string;
  /** Let a reverse proxy that authenticates people name them in a header. Default: off. */
  trustedHeader?: TrustedHeaderOptions;
  sessions?: SessionOptions;
  /** How often the task page's live view polls `status`. Default 1000 ms. */
  pollMs?: number;
  /** Failed sign-ins for one approver id within 5 minutes before a pause (ten times as many per address). Default 5. */
  maxFailedSignIns?: number;
  /**
   * The blob store the workers use (openBlobStore()): long arguments travel there, and the inbox
   * reads them so people see what they approve. Without it such approvals say they cannot be shown.
   */
  blobStore?: BlobStore;
  /** Where workers write live output (docs/live-output.md), served at /tasks/ID/output. Default: beside DURABLE_AGENT_BLOB_STORE. */
  liveOutput?: LiveOutputLog;
}

const PRE_SESSION_COOKIE = 'da_pre';
const MAX_BODY_BYTES = 256 * 1024;
const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'none'; style-src 'self'; script-src 'self'; connect-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  // Same-origin: the browser still sends Origin on our own POSTs; a link token never leaves for another site.
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
};

type Form = URLSearchParams;

export class InboxServer {
  private listener?: HttpListener;
  private readonly sessions: SessionStore;
  /** Failed sign-ins per approver id (a few) and per address (more: many people may share a proxy or NAT). */
  private readonly limiters: { byName: SignInLimiter; byAddress: SignInLimiter };
  private readonly streams = new Set<http.ServerResponse>();
  private readonly args: ApprovalArguments;
  private liveOutputLog: LiveOutputLog | undefined;

  constructor(private readonly options: InboxOptions) {
    this.sessions = new SessionStore(options.sessions);
    this.args = new ApprovalArguments(options.client.client, options.blobStore);
    const perName = options.maxFailedSignIns ?? 5;
    this.limiters = { byName: new SignInLimiter(perName), byAddress: new SignInLimiter(perName * 10) };
  }

  /** Listens on host:port (default 127.0.0.1 and any free port) and returns the URL. */
  async start(port = 0, host = '127.0.0.1'): Promise<string> {
    this.listener = await listenHttp(
      (req, res) => {
        this.route(req, res).catch((err: unknown) => this.fail(res, err));
      },
      { port, host },
    );
    return this.url;
  }

  get url(): string {
    if (!this.listener) throw new Error('the inbox is not started');
    return this.listener.url;
  }

  async stop(): Promise<void> {
    for (const res of this.streams) res.end();
    await this.listener?.close();
    this.listener = undefined;
  }

  private get secure(): boolean {
    return this.options.publicUrl?.startsWith('https:') ?? false;
  }

  private async route(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://inbox.invalid');
    const method = req.method ?? 'GET';
    const path = url.pathname;
    if (method === 'GET' && path === '/static/inbox.css') return this.send(res, 200, STYLE, 'text/css; charset=utf-8');
    if (method === 'GET' && path === '/static/task.js') return this.send(res, 200, TASK_SCRIPT, 'text/javascript; charset=utf-8');
    if (method === 'GET' && path === '/healthz') return this.send(res, 200, 'ok\n', 'text/plain; charset=utf-8');
    if (method === 'GET' && path === '/signin') return this.signInForm(req, res, localPath(url.searchParams.get('next')));
    if (method === 'POST' && path === '/signin') return this.signIn(req, res);
    if (method === 'GET' && path.startsWith('/l/')) return this.openLink(req, res, path.slice(3));

    const session = this.sessionOf(req, res);
    if (method === 'GET' || method === 'HEAD') {
      if (!session) return this.redirect(res, `/signin?next=${encodeURIComponent(path + url.search)}`);
      if (path === '/') return this.inbox(res, session);
      const download = /^\/tasks\/([^/]+)\/approvals\/([^/]+)\/arguments$/.exec(path);
      if (download) return this.argumentsFile(res, decodePart(download[1]!), decodePart(download[2]!));
      const task = /^\/tasks\/([^/]+)(\/events|\/output)?$/.exec(path);
      if (task) {
        const taskId = decodePart(task[1]!);
        if (task[2] === '/output') return this.output(req, res, session, taskId, url.searchParams.get('from'));
        return task[2] ? this.events(req, res, session, taskId) : this.task(res, session, taskId);
      }
      throw new HttpError(404, `Nothing at ${path}.`, { title: 'Not found' });
    }
    if (method !== 'POST') throw new HttpError(405, `${method} is not used here.`, { title: 'Method not allowed' });
    // Every POST: same origin, a signed-in session, and that session's CSRF token.
    this.checkOrigin(req);
    const form = await readForm(req);
    if (!session) throw new HttpError(403, 'Your session has ended. Sign in again and repeat the action.', { title: 'Signed out' });
    if (!csrfMatches(session, form.get('_csrf')))
      throw new HttpError(403, 'The form was missing its security token or it did not match your session. Reload the page and try again.', { title: 'Request refused' });
    if (path === '/signout') {
      this.sessions.destroy(session.id);
      res.setHeader('set-cookie', SessionStore.clearCookie(this.secure));
      return this.redirect(res, '/signin');
    }
    const action = /^\/tasks\/([^/]+)\/(approve|deny|answer|unblock|message)$/.exec(path);
    if (!action) throw new HttpError(404, `Nothing at ${path}.`, { title: 'Not found' });
    return this.decide(res, session, decodePart(action[1]!), action[2] as FormState['form'], form);
  }

  // ---- identity -------------------------------------------------------------------------------

  /** The live session; in trusted-header mode, one made (or replaced) for the person the proxy names. */
  private sessionOf(req: http.IncomingMessage, res: http.ServerResponse): Session | undefined {
    const session = this.sessions.get(cookies(req)[SESSION_COOKIE]);
    const trusted = this.options.trustedHeader;
    if (!trusted) return session;
    const named = req.headers[trusted.header.toLowerCase()];
    if (typeof named !== 'string' || !named) return session;
    const proxies = trusted.proxies ?? ['127.0.0.1', '::1', '::ffff:127.0.0.1'];
    if (!proxies.includes(req.socket.remoteAddress ?? '')) {
      throw new HttpError(403, `The ${trusted.header} header is only accepted from the configured proxy.`, { title: 'Request refused' });
    }
    if (session?.approver.id === named) return session;
    const approver = this.options.directory.get(named);
    if (!approver) throw new HttpError(403, `${named} is signed in at the proxy but is not in the approvers file.`, { title: 'Not an approver' });
    if (session) this.sessions.destroy(session.id);
    const fresh = this.sessions.create(approver);
    res.setHeader('set-cookie', this.sessions.cookie(fresh, this.secure));
    return fresh;
  }

  /** POSTs must come from the inbox's own pages: Origin (or Referer) names this origin. */
  private checkOrigin(req: http.IncomingMessage): void {
    const allowed = this.options.publicUrl ? new URL(this.options.publicUrl).origin : `http://${req.headers.host ?? ''}`;
    const origin = req.headers.origin ?? (req.headers.referer ? safeOrigin(req.headers.referer) : undefined);
    if (!origin || !constantTimeEqual(origin, allowed)) {
      throw new HttpError(403, 'This form was not sent from the inbox itself (its Origin did not match).', { title: 'Request refused' });
    }
  }

  private signInForm(req: http.IncomingMessage, res: http.ServerResponse, next: string, error?: string, status = 200): void {
    // Before a session exists, a random cookie and the same value in the form guard the sign-in itself.
    const pre = cookies(req)[PRE_SESSION_COOKIE] ?? randomBytes(24).toString('base64url');
    res.setHeader('set-cookie', `${PRE_SESSION_COOKIE}=${pre}; Path=/signin; HttpOnly; SameSite=Strict${this.secure ? '; Secure' : ''}`);
    const proxyNote = this.options.trustedHeader ? 'This inbox also accepts sign-in from your organisation’s proxy.' : undefined;
    this.send(res, status, signInPage({ csrf: pre, next, ...(error ? { error } : {}), ...(proxyNote ? { proxyNote } : {}) }));
  }

  private async signIn(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    this.checkOrigin(req);
    const form = await readForm(req);
    const pre = cookies(req)[PRE_SESSION_COOKIE];
    const presented = form.get('_csrf');
    if (!pre || !presented || !constantTimeEqual(pre, presented)) {
      throw new HttpError(403, 'The sign-in form was missing its security token. Open the sign-in page again.', { title: 'Request refused' });
    }
    const next = localPath(form.get('next'));
    const id = (form.get('id') ?? '').trim();
    const token = form.get('token') ?? '';
    const address = [req.socket.remoteAddress ?? '?'];
    const name = id ? [id] : [];
    // Counted before the check's await (see SignInLimiter): a concurrent burst gets the limit, no more.
    const wait = this.beginSignIn(address, name);
    if (wait > 0) {
      res.setHeader('retry-after', String(wait));
      return this.signInForm(req, res, next, `Too many failed sign-ins. Try again in ${wait} s.`, 429);
    }
    let approver: Approver | undefined;
    if (token) approver = this.options.directory.signInWithToken(token);
    else if (id) approver = await this.options.directory.signInWithPassword(id, form.get('password') ?? '');
    if (!approver) {
      return this.signInForm(req, res, next, 'Sign-in failed: unknown approver, wrong password or wrong token.', 401);
    }
    this.limiters.byName.succeed(name);
    this.limiters.byAddress.release(address);
    const old = cookies(req)[SESSION_COOKIE];
    if (old) this.sessions.destroy(old); // A fresh id at sign-in: no session fixation.
    const session = this.sessions.create(approver);
    res.setHeader('set-cookie', [this.sessions.cookie(session, this.secure), `${PRE_SESSION_COOKIE}=; Path=/signin; Max-Age=0; HttpOnly; SameSite=Strict`]);
    this.redirect(res, next);
  }

  /** Seconds to wait, or 0 with the attempt counted for the address and the name (both, or neither). */
  private beginSignIn(address: string[], name: string[]): number {
    const wait = Math.max(this.limiters.byAddress.retryAfter(address), this.limiters.byName.retryAfter(name));
    if (wait > 0) return wait;
    this.limiters.byAddress.begin(address);
    this.limiters.byName.begin(name);
    return 0;
  }

  // ---- links ----------------------------------------------------------------------------------

  /** A link from a notification: checked, then (once signed in) used up and turned into the task page. */
  private openLink(req: http.IncomingMessage, res: http.ServerResponse, token: string): void {
    const check = verifyLink(this.options.linkKey, token);
    if (!check.ok) {
      const text = {
        malformed: 'This link is damaged: it was cut or changed. Open the task from the inbox instead.',
        forged: 'This link was not made by this system. Open the task from the inbox instead.',
        expired: `This link expired${check.claims ? ` at ${new Date(check.claims.e).toISOString()}` : ''}. Links work for a limited time; open the task from the inbox instead.`,
      }[check.reason];
      return this.send(res, check.reason === 'expired' ? 410 : 400, messagePage(check.reason === 'expired' ? 'Link expired' : 'Link refused', text));
    }
    const session = this.sessionOf(req, res);
    if (!session) return this.redirect(res, `/signin?next=${encodeURIComponent(`/l/${token}`)}`);
    if (!this.options.usedLinks.claim(check.claims)) {
      return this.send(res, 410, messagePage('Link already used', 'This link was already used once; links work only once. Open the task from the inbox instead.', this.layout(session)));
    }
    const anchor = check.claims.a ? `#approval-${encodeURIComponent(check.claims.a)}` : '';
    this.redirect(res, `/tasks/${encodeURIComponent(check.claims.t)}${anchor}`);
  }

  // ---- pages ----------------------------------------------------------------------------------

  private layout(session: Session) {
    const flash = session.flash;
    delete session.flash;
    return { approver: session.approver, csrf: session.csrf, ...(flash ? { flash } : {}) };
  }

  private async inbox(res: http.ServerResponse, session: Session): Promise<void> {
    const tasks = await waitingTasks(this.options.client, this.args);
    this.send(res, 200, inboxPage(this.layout(session), tasks));
  }

  private async task(res: http.ServerResponse, session: Session, taskId: string, state?: FormState, status = 200): Promise<void> {
    const data = await taskPageData(this.options.client, this.args, taskId).catch((err: unknown) => {
      if (err instanceof TaskNotFoundError) throw new HttpError(404, `There is no task "${taskId}" in this namespace.`, { title: 'No such task' });
      throw err;
    });
    this.send(res, status, taskPage(this.layout(session), data, state));
  }

  /** An approval's exact arguments as a JSON download (pending or decided): what the shortened view stands for. */
  private async argumentsFile(res: http.ServerResponse, taskId: string, approvalId: string): Promise<void> {
    const status = await shownStatus(this.options.client, this.args, taskId);
    if (!status) throw new HttpError(404, `Task "${taskId}" did not answer (no such task, or no worker is running for it).`, { title: 'Not available' });
    const approval = [...status.pendingApprovals, ...status.approvals].find((a) => a.id === approvalId);
    if (!approval) throw new HttpError(404, `Task "${taskId}" has no approval "${approvalId}".`, { title: 'No such approval' });
    const problem = argumentsProblemOf(approval);
    if (problem) throw new HttpError(503, `The arguments cannot be read here: ${problem}.`, { title: 'Arguments unavailable' });
    const body = `${JSON.stringify(approval.input, null, 2)}\n`;
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      'content-type': 'application/json; charset=utf-8',
      'content-disposition': `attachment; filename="${approvalId.replace(/[^\w.-]/g, '_')}-arguments.json"`,
    });
    res.end(body);
  }

  /** Server-sent events: the task's live view each time it changes, until the task closes. */
  private async events(req: http.IncomingMessage, res: http.ServerResponse, session: Session, taskId: string): Promise<void> {
    res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': 'text/event-stream; charset=utf-8', connection: 'keep-alive' });
    this.streams.add(res);
    let open = true;
    req.on('close', () => (open = false));
    const pollMs = this.options.pollMs ?? 1000;
    // A stream lives at most 10 minutes; EventSource reconnects, and the session is checked again.
    const until = Date.now() + 10 * 60 * 1000;
    let last = '';
    let quietSince = Date.now();
    try {
      while (open && Date.now() < until && this.sessions.get(session.id)) {
        const view = await liveView(this.options.client, this.args, taskId).catch(() => undefined);
        const text = view ? JSON.stringify(view) : '';
        if (view && text !== last) {
          res.write(`event: status\ndata: ${text}\n\n`);
          last = text;
          quietSince = Date.now();
          if (view.closed) break;
        } else if (Date.now() - quietSince > 15_000) {
          res.write(': still here\n\n');
          quietSince = Date.now();
        }
        await new Promise((r) => setTimeout(r, pollMs));
      }
    } finally {
      this.streams.delete(res);
      res.end();
    }
  }

  /**
   * The task's live output as server-sent events, one per log event, its offset as the event id: a
   * browser's EventSource that reconnects sends Last-Event-ID and resumes after it (`?from=N` starts
   * at offset N). Ends when the task closes, the session ends, or after 10 minutes (EventSource
   * then reconnects and the session is checked again).
   */
  private async output(req: http.IncomingMessage, res: http.ServerResponse, session: Session, taskId: string, fromParam: string | null): Promise<void> {
    const lastId = req.headers['last-event-id'];
    const from = typeof lastId === 'string' && /^\d{1,15}$/.test(lastId) ? Number(lastId) + 1 : fromParam && /^\d{1,15}$/.test(fromParam) ? Number(fromParam) : 0;
    // The task must exist: a typo is a 404 page, not a stream that waits for nothing. Its stream is the
    // task holding the id now: an earlier task's output under the same id is never shown.
    const stream = await this.options.client.liveStream(taskId).catch((err: unknown) => {
      if (err instanceof TaskNotFoundError) throw new HttpError(404, `There is no task "${taskId}" in this namespace.`, { title: 'No such task' });
      throw err;
    });
    res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': 'text/event-stream; charset=utf-8', connection: 'keep-alive' });
    res.flushHeaders();
    this.streams.add(res);
    const stop = new AbortController();
    req.on('close', () => stop.abort());
    const until = setTimeout(() => stop.abort(), 10 * 60 * 1000);
    const log = (this.liveOutputLog ??= this.options.liveOutput ?? openLiveOutputLog());
    const isOpen = async () =>
      !!this.sessions.get(session.id) &&
      (await this.options.client.liveStream(taskId).then(
        (now) => now.running && now.firstRunId === stream.firstRunId,
        (err: unknown) => (err instanceof TaskNotFoundError ? false : Promise.reject(err)),
      ));
    try {
      for await (const event of followLiveOutput(log, stream, { from, isOpen, signal: stop.signal })) {
        if (!this.sessions.get(session.id)) break;
        res.write(`id: ${event.offset}\nevent: output\ndata: ${JSON.stringify(event)}\n\n`);
      }
      if (!stop.signal.aborted) res.write('event: end\ndata: {}\n\n');
    } finally {
      clearTimeout(until);
      this.streams.delete(res);
      res.end();
    }
  }

  // ---- decisions ------------------------------------------------------------------------------

  private async decide(res: http.ServerResponse, session: Session, taskId: string, form: FormState['form'], fields: Form): Promise<void> {
    // A field sent several times (an answer's ticked choices) is kept one value a line.
    const values: Record<string, string> = {};
    for (const [k, v] of fields.entries()) if (k !== '_csrf') values[k] = k in values ? `${values[k]}\n${v}` : v;
    const approvalId = fields.get('approvalId') ?? undefined;
    const refuse = (error: string, status = 422) => this.task(res, session, taskId, { form, ...(approvalId ? { approvalId } : {}), values, error }, status);
    const who = { by: session.approver.id, ...decisionRoles(session.approver) };
    const { client } = this.options;
    // Taken at once (a worker answered): the task page with a note. Recorded for later: a page that says so.
    const settle = (outcome: DecisionOutcome, taken: string, what: string): string | undefined => {
      if (outcome.applied) return taken;
      this.send(res, 200, recordedPage(this.layout(session), taskId, what, outcome.note));
      return undefined;
    };
    let done: string | undefined;
    try {
      switch (form) {
        case 'approve': {
          if (!approvalId) return refuse('The form named no approval.');
          const edited = parseArguments(fields.get('arguments') ?? '');
          if ('error' in edited) return refuse(edited.error);
          const shown = await this.pendingApproval(taskId, approvalId);
          // The person approves the call they read: the form carries its hash, and a call they could not read is not approved as is.
          const shownHash = fields.get('inputHash');
          if (shown?.inputHash && shownHash && shownHash !== shown.inputHash) return refuse('This approval is not the call you read (its arguments differ). Reload the page and read it again.', 409);
          const readHash = fields.get('argumentsHash');
          if (shown?.readable && readHash && readHash !== argumentsHash(shown.input))
            return refuse('This approval is not the call you read (its arguments differ). Reload the page and read it again.', 409);
          if (shown?.unread && edited.value === undefined) return refuse(`The arguments of this call cannot be shown here, so the inbox will not approve them as they are: ${shown.unread}.`, 409);
          const comment = (fields.get('comment') ?? '').trim();
          const changed = !shown?.readable || !sameArguments(shown.input, edited.value);
          const withEdit = changed && edited.value !== undefined;
          const outcome = await client.decide(taskId, {
            kind: 'approve',
            input: { approvalId, ...who, ...(withEdit ? { editedInput: edited.value } : {}), ...(comment ? { comment } : {}) },
          });
          done = settle(outcome, `Approved ${approvalId}${withEdit ? ' with edited arguments' : ''}.`, `Your approval of ${approvalId}${withEdit ? ' with edited arguments' : ''}`);
          break;
        }
        case 'deny': {
          if (!approvalId) return refuse('The form named no approval.');
          // Declining a tool's question needs no reason (the server is only told "decline"); the task still records one.
          const question = fields.get('question') === '1';
          const reason = (fields.get('reason') ?? '').trim() || (question ? 'Declined to answer.' : '');
          if (!reason) return refuse('A denial needs a reason: the model is told why.');
          const outcome = await client.decide(taskId, { kind: 'deny', input: { approvalId, ...who, reason } });
          done = settle(outcome, question ? `Declined question ${approvalId}.` : `Denied ${approvalId}.`, question ? `Your decline of question ${approvalId}` : `Your denial of ${approvalId}`);
          break;
        }
        case 'answer': {
          // A tool's question: the answer goes as the approval's editedInput, and the task checks it against the question's schema.
          if (!approvalId) return refuse('The form named no question.');
          // The question's schema is only in the live status: an answer needs a worker to have read it now.
          const pending = (await liveStatus(client, taskId))?.pendingApprovals.find((a) => a.id === approvalId);
          if (!pending?.question)
            return refuse(`Question ${approvalId} is not pending on this task (already answered, declined or expired, or no worker answered to show the question; declining works without one).`, 409);
          const answer = answerFromForm(pending.question.requestedSchema, fields);
          if ('error' in answer) return refuse(answer.error);
          const comment = (fields.get('comment') ?? '').trim();
          const outcome = await client.decide(taskId, { kind: 'approve', input: { approvalId, ...who, editedInput: answer.value, ...(comment ? { comment } : {}) } });
          done = settle(outcome, `Answered question ${approvalId}.`, `Your answer to question ${approvalId}`);
          break;
        }
        case 'unblock': {
          const blockId = (fields.get('blockId') ?? '').trim();
          if (!blockId) return refuse('The form named no block. Reload the page and read what the task is blocked on.');
          const input = unblockInput(fields);
          if ('error' in input) return refuse(input.error);
          const stale = await this.staleBlock(taskId, blockId);
          if (stale) return refuse(stale, 409);
          const outcome = await client.decide(taskId, { kind: 'unblock', input: { ...who, blockId, ...input.value } });
          done = settle(outcome, outcome.applied ? `Unblocked the task (escalation ${(outcome.answer as { escalationId: string }).escalationId}).` : '', `Your unblock of block ${blockId}`);
          break;
        }
        case 'message': {
          const text = (fields.get('text') ?? '').trim();
          if (!text) return refuse('A message needs text.');
          // A signal cannot be refused: the task would keep a message its policy does not take out of
          // the model's context without a word. Say so here instead.
          const problem = policyProblem(await liveStatus(client, taskId), session.approver, { kind: 'message' });
          if (problem) return refuse(`The task does not take your messages: ${problem}.`, 403);
          await client.message(taskId, { ...who, text });
          done = 'Message sent; the model reads it before its next call.';
          break;
        }
      }
    } catch (err) {
      // The task said no (its validator or handler): show why, keep what the person typed.
      if (err instanceof TaskRejectedError) return refuse(`The task refused: ${err.message}`, 409);
      if (err instanceof TaskNotFoundError) throw new HttpError(404, `There is no task "${taskId}" in this namespace.`, { title: 'No such task' });
      throw err;
    }
    if (done === undefined) return; // the recorded page was sent
    session.flash = { kind: 'ok', text: done };
    this.redirect(res, `/tasks/${encodeURIComponent(taskId)}`);
  }

  /**
   * The pending approval as the person could have read it: from the live status, else the memo.
   * `readable`: its arguments were shown; `unread`: why they could not be.
   */
  private async pendingApproval(taskId: string, approvalId: string): Promise<{ input: unknown; readable: boolean; unread?: string; inputHash?: string } | undefined> {
    const { status, atRest } = await pendingNow(this.options.client, this.args, taskId);
    const live = status?.pendingApprovals.find((a) => a.id === approvalId);
    if (live) {
      const unread = argumentsProblemOf(live);
      return { input: live.input, readable: !unread, inputHash: live.inputHash, ...(unread ? { unread } : {}) };
    }
    const memo = atRest?.approvals.find((a) => a.id === approvalId);
    if (!memo) return undefined;
    return memo.input !== undefined ? { input: memo.input, readable: true } : { input: undefined, readable: false, unread: memo.argumentsProblem ?? 'no worker is running this task' };
  }

  /** Why an unblock form for `blockId` is out of date (the task was unblocked, or blocked again since), or undefined. */
  private async staleBlock(taskId: string, blockId: string): Promise<string | undefined> {
    const { status, atRest } = await pendingNow(this.options.client, this.args, taskId);
    if (!status && !atRest) return undefined; // nothing to compare with: the task's validator judges it
    const now = status ? status.blocked : atRest!.block;
    if (now?.id === blockId) return undefined;
    return now
      ? `This form is for block ${blockId}, which is over: the task is blocked on ${now.id} (${now.code}) now. Nothing was changed. Reload the page and read the new block before you unblock.`
      : `This form is for block ${blockId}, which is over: the task is not blocked now. Nothing was changed.`;
  }

  // ---- plumbing -------------------------------------------------------------------------------

  private send(res: http.ServerResponse, status: number, body: string, type = 'text/html; charset=utf-8'): void {
    if (res.headersSent) return void res.end();
    res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type });
    res.end(body);
  }

  private redirect(res: http.ServerResponse, location: string): void {
    res.writeHead(303, { ...SECURITY_HEADERS, location });
    res.end();
  }

  private fail(res: http.ServerResponse, err: unknown): void {
    if (err instanceof HttpError) return this.send(res, err.status, messagePage(err.details.title ?? 'Error', err.message));
    console.error(`inbox: ${(err as Error)?.stack ?? String(err)}`);
    this.send(res, 500, messagePage('Something went wrong', 'The inbox could not complete this request (is Temporal reachable?). Nothing was decided.'));
  }
}

/** The signed-in person's roles: the client's signer vouches for them with `by`, the task's policy reads them. */
function decisionRoles(approver: Approver): { roles: string[] } {
  return { roles: [...approver.roles] };
}

function cookies(req: http.IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) out[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  return out;
}

function decodePart(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new HttpError(400, 'This address is malformed.', { title: 'Bad address' });
  }
}

function safeOrigin(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

const SELF = 'http://inbox.invalid';

/**
 * Only a path on this site: `next` must never send a person elsewhere after sign-in. Browsers drop
 * tabs and newlines from a Location and read `\` as `/`, so a check of the raw text is not enough
 * (`/\t/evil.example` is `//evil.example` to them): `next` is parsed as a URL against this site and
 * must stay on it, and what goes back is the parsed, percent-encoded path, never the raw text.
 */
function localPath(next: string | null | undefined): string {
  if (!next || !next.startsWith('/') || /[\u0000-\u0020\u007f\\]/.test(next)) return '/';
  let url: URL;
  try {
    url = new URL(next, SELF);
  } catch {
    return '/';
  }
  const path = url.pathname + url.search + url.hash;
  // `/.//host` parses to the path `//host`, which a browser would read as another host.
  if (url.origin !== SELF || path.startsWith('//')) return '/';
  return path;
}

async function readForm(req: http.IncomingMessage): Promise<Form> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') throw new HttpError(415, 'Forms are sent as application/x-www-form-urlencoded.', { title: 'Request refused' });
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, `A form may carry at most ${MAX_BODY_BYTES / 1024} KB.`, { title: 'Request refused' });
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

/** The arguments field: empty means "as asked"; otherwise a JSON object. */
function parseArguments(text: string): { value: Record<string, unknown> | undefined } | { error: string } {
  if (!text.trim()) return { value: undefined };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    return { error: `The arguments are not valid JSON: ${(err as Error).message}` };
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return { error: 'The arguments must be a JSON object, e.g. {"path": "notes.txt"}.' };
  return { value: parsed as Record<string, unknown> };
}

/** Unchanged arguments approve the call as asked (no edit is recorded). */
function sameArguments(input: unknown, value: Record<string, unknown> | undefined): boolean {
  return value === undefined || canonicalJson(value, { strict: false }) === canonicalJson(input, { strict: false });
}

function unblockInput(fields: Form): { value: Omit<UnblockInput, 'by'> } | { error: string } {
  const message = (fields.get('message') ?? '').trim();
  const budget: BudgetRaise = {};
  for (const name of RAISABLE_BUDGETS) {
    const raw = (fields.get(name) ?? '').trim();
    if (!raw) continue;
    const raise = parseBudgetRaise(name, raw, name === 'costUsd' ? 'Cost' : name);
    if ('problem' in raise) return { error: `${raise.problem}.` };
    budget[name] = raise.value;
  }
  return { value: { ...(message ? { message } : {}), ...(Object.keys(budget).length ? { budget } : {}) } };
}
