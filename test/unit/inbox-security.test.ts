/**
 * The inbox's security pieces on their own: hashed secrets, the approvers file, sessions, the
 * sign-in limiter, signed single-use links, the notification body, and escaping of task content.
 */
import http from 'node:http';
import { mkdtempSync, statSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { createActivities } from '../../src/activities';
import { ApproverDirectory, ApproverFileError } from '../../src/inbox/approver-directory';
import { loadLinkKey, signLink, UsedLinks, verifyLink } from '../../src/notifications/links';
import { webhookBody } from '../../src/notifications/notification';
import { inboxPage } from '../../src/inbox/pages';
import { hashPassword, hashToken, newToken, tokenMatches, verifyPassword } from '../../src/inbox/secret-hash';
import { constantTimeEqual } from '../../src/crypto/constant-time';
import { csrfMatches, SessionStore, SignInLimiter } from '../../src/inbox/sessions';
import { InboxServer } from '../../src/inbox/server';
import { TaskClient } from '../../src/client/task-client';
import { Client, Connection } from '@temporalio/client';

const tmp = () => mkdtempSync(path.join(os.tmpdir(), 'inbox-unit-'));

test('a password is stored as a salted scrypt hash that verifies only the same password', async () => {
  const a = await hashPassword('correct horse battery');
  const b = await hashPassword('correct horse battery');
  expect(a).toMatch(/^scrypt\$32768\$8\$1\$[A-Za-z0-9_-]+\$[A-Za-z0-9_-]+$/);
  expect(a).not.toBe(b); // salted
  expect(a).not.toContain('correct');
  expect(await verifyPassword('correct horse battery', a)).toBe(true);
  expect(await verifyPassword('correct horse batterY', a)).toBe(false);
  expect(await verifyPassword('correct horse battery', 'scrypt$1$1$1$x$y')).toBe(false); // a hostile cost is refused, not run
  await expect(hashPassword('short')).rejects.toThrow(/at least 8/);
});

test('tokens are kept as sha256 hashes and compared in constant time; strings of different lengths never compare equal', () => {
  const { token, hash } = newToken();
  expect(hash).toBe(hashToken(token));
  expect(tokenMatches(token, hash)).toBe(true);
  expect(tokenMatches(`${token}x`, hash)).toBe(false);
  expect(constantTimeEqual('abc', 'abc')).toBe(true);
  expect(constantTimeEqual('abc', 'abcd')).toBe(false);
});

test('the approvers file: sign-in by password or token; a clear-text password, an unknown field or a duplicate id is refused with the field named', async () => {
  const { token, hash } = newToken();
  const file = JSON.stringify({
    approvers: [
      { id: 'ana', name: 'Ana Lima', roles: ['ops'], password: await hashPassword('ana-password-1') },
      { id: 'bot', roles: ['ci'], tokens: [hash] },
    ],
  });
  const dir = ApproverDirectory.fromJson(file);
  expect(await dir.signInWithPassword('ana', 'ana-password-1')).toEqual({ id: 'ana', name: 'Ana Lima', roles: ['ops'] });
  expect(await dir.signInWithPassword('ana', 'wrong-password')).toBeUndefined();
  expect(await dir.signInWithPassword('nobody', 'ana-password-1')).toBeUndefined();
  expect(await dir.signInWithPassword('bot', '')).toBeUndefined(); // no password set: never signs in by password
  expect(dir.signInWithToken(token)).toEqual({ id: 'bot', name: 'bot', roles: ['ci'] });
  expect(dir.signInWithToken('dat_wrong')).toBeUndefined();

  const bad = (approvers: unknown[]) => () => ApproverDirectory.fromJson(JSON.stringify({ approvers }), 'f.json');
  expect(bad([{ id: 'x', password: 'hunter22' }])).toThrow(/approvers\[0\]\.password must be a scrypt hash .* never the password itself/);
  expect(bad([{ id: 'x', pasword: 'x' }])).toThrow(/unknown field\(s\) pasword/);
  expect(bad([{ id: 'x' }, { id: 'x' }])).toThrow(/approvers\[1\]\.id "x" appears twice/);
  expect(bad([{ id: 'x', roles: 'ops' }])).toThrow(ApproverFileError);
});

test('sessions end on the server after idle time and after their absolute lifetime; the cookie is HttpOnly and SameSite=Strict', () => {
  let now = 0;
  const store = new SessionStore({ idleMs: 1000, absoluteMs: 5000, now: () => now });
  const ana = { id: 'ana', name: 'Ana', roles: [] };
  const s = store.create(ana);
  expect(store.cookie(s, false)).toMatch(/^da_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=5$/);
  expect(store.cookie(s, true)).toMatch(/; Secure$/);
  now = 900;
  expect(store.get(s.id)?.approver.id).toBe('ana');
  now = 1950; // idle 1050 ms
  expect(store.get(s.id)).toBeUndefined();
  const t = store.create(ana);
  for (now = 2000; now <= 7000; now += 800) store.get(t.id);
  expect(store.get(t.id)).toBeUndefined(); // active, but past 5 s since sign-in
  const u = store.create(ana);
  expect(csrfMatches(u, u.csrf)).toBe(true);
  expect(csrfMatches(u, t.csrf)).toBe(false);
  expect(csrfMatches(u, undefined)).toBe(false);
});

test('after 5 sign-in attempts for a name that did not sign in the next attempt waits, and the wait ends with the window', () => {
  let now = 0;
  const limiter = new SignInLimiter(5, 60_000, () => now);
  for (let i = 0; i < 5; i++) expect(limiter.begin(['id:ana'])).toBe(0);
  expect(limiter.begin(['id:ana'])).toBe(60);
  expect(limiter.retryAfter(['id:ana'])).toBe(60);
  expect(limiter.begin(['id:bob'])).toBe(0);
  now = 60_001;
  expect(limiter.begin(['id:ana'])).toBe(0);
});

test('an attempt counts when it begins, before its check: five attempts in flight leave no room for a sixth; a success clears the name, a release only its own attempt', () => {
  const limiter = new SignInLimiter(5, 60_000, () => 0);
  // Five begun, none answered yet (each would be awaiting scrypt).
  for (let i = 0; i < 5; i++) expect(limiter.begin(['id:ana'])).toBe(0);
  expect(limiter.begin(['id:ana'])).toBeGreaterThan(0);
  limiter.succeed(['id:ana']);
  expect(limiter.begin(['id:ana'])).toBe(0);

  for (let i = 0; i < 4; i++) limiter.begin(['addr:10.0.0.1']);
  limiter.begin(['addr:10.0.0.1']);
  limiter.release(['addr:10.0.0.1']); // that one signed in: four failures still count
  expect(limiter.begin(['addr:10.0.0.1'])).toBe(0);
  expect(limiter.begin(['addr:10.0.0.1'])).toBeGreaterThan(0);
});

describe('the inbox sign-in over HTTP', () => {
  let inbox: InboxServer;
  let base: string;
  let directory: ApproverDirectory;
  beforeAll(async () => {
    directory = ApproverDirectory.fromJson(JSON.stringify({ approvers: [{ id: 'cy', password: await hashPassword('cy-password-1') }] }));
    // Sign-in never reaches Temporal; this client points at a closed port, so a page that did would fail.
    const client = new TaskClient(new Client({ connection: Connection.lazy({ address: '127.0.0.1:1' }) }));
    inbox = new InboxServer({ client, directory, linkKey: Buffer.from('k'.repeat(32)), usedLinks: new UsedLinks(path.join(tmp(), 'used-links')) });
    base = await inbox.start();
  });
  afterAll(async () => {
    await inbox?.stop();
  });
  afterEach(() => jest.restoreAllMocks());

  /** One sign-in form's pre-session token, and a POST of it (no redirects followed). */
  async function signInForm(): Promise<{ pre: string }> {
    const page = await (await fetch(`${base}/signin`)).text();
    return { pre: /name="_csrf" value="([^"]+)"/.exec(page)![1]! };
  }
  const post = (pre: string, fields: Record<string, string>) =>
    fetch(`${base}/signin`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: base, cookie: `da_pre=${pre}` },
      body: new URLSearchParams({ _csrf: pre, ...fields }).toString(),
    });

  test('a burst of 40 concurrent wrong guesses gets at most 5 password checks (the rest are answered 429), and then even the right password must wait', async () => {
    const checks = jest.spyOn(directory, 'signInWithPassword');
    const { pre } = await signInForm();
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => post(pre, { id: 'cy', password: `wrong-guess-${i}` })));
    const statuses = answers.map((a) => a.status);
    expect(checks.mock.calls.length).toBeLessThanOrEqual(5);
    expect(statuses.filter((s) => s === 401)).toHaveLength(checks.mock.calls.length);
    expect(statuses.filter((s) => s === 429)).toHaveLength(40 - checks.mock.calls.length);
    const right = await post(pre, { id: 'cy', password: 'cy-password-1' });
    expect(right.status).toBe(429);
    expect(Number(right.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(checks.mock.calls.length).toBeLessThanOrEqual(5);
  });

  test('after sign-in, `next` leads only to a path on this site: tab, newline, backslash and dot-segment disguises of another host land on /', async () => {
    const other = new InboxServer({
      client: new TaskClient(new Client({ connection: Connection.lazy({ address: '127.0.0.1:1' }) })),
      directory,
      linkKey: Buffer.from('k'.repeat(32)),
      usedLinks: new UsedLinks(path.join(tmp(), 'used-links')),
      maxFailedSignIns: 1_000,
    });
    const url = await other.start();
    try {
      const signIn = async (next: string) => {
        const page = await (await fetch(`${url}/signin`)).text();
        const pre = /name="_csrf" value="([^"]+)"/.exec(page)![1]!;
        const res = await fetch(`${url}/signin`, {
          method: 'POST',
          redirect: 'manual',
          headers: { 'content-type': 'application/x-www-form-urlencoded', origin: url, cookie: `da_pre=${pre}` },
          body: new URLSearchParams({ _csrf: pre, next, id: 'cy', password: 'cy-password-1' }).toString(),
        });
        expect(res.status).toBe(303);
        return res.headers.get('location')!;
      };
      const disguises = [
        '/\t/evil.example',
        '/\n/evil.example',
        '/\r\n/evil.example',
        '/ /evil.example',
        '/\\evil.example',
        '//evil.example',
        '/.//evil.example',
        '/x/..//evil.example',
        'https://evil.example/',
        '/\u0000/evil.example',
      ];
      for (const next of disguises) {
        const location = await signIn(next);
        // What a browser does with the Location: tabs and newlines dropped, then resolved against the inbox.
        expect({ next, location, lands: new URL(location.replace(/[\t\n\r]/g, ''), url).origin }).toEqual({ next, location: '/', lands: new URL(url).origin });
      }
      // The same from the query string of GET /signin (decoded %09 is a tab): the form carries / instead.
      const page = await (await fetch(`${url}/signin?next=/%09/evil.example`)).text();
      expect(page).toMatch(/name="next" value="\/"/);
      // Paths on this site keep their query and fragment.
      expect(await signIn('/tasks/t-1?tab=events#a-1')).toBe('/tasks/t-1?tab=events#a-1');
      expect(await signIn('/l/abc.def')).toBe('/l/abc.def');
    } finally {
      await other.stop();
    }
  });
});

test('links: a signed link verifies; a changed, cut or foreign-key link is refused; an expired one says so; each is usable once, across restarts', () => {
  const key = Buffer.from('k'.repeat(32));
  const token = signLink(key, { taskId: 't-1', approvalId: 'ap-1' }, { ttlMs: 60_000, now: 1_000 });
  const ok = verifyLink(key, token, 2_000);
  expect(ok).toMatchObject({ ok: true, claims: { t: 't-1', a: 'ap-1', e: 61_000 } });
  expect(verifyLink(key, token, 61_000)).toMatchObject({ ok: false, reason: 'expired' });
  expect(verifyLink(Buffer.from('x'.repeat(32)), token, 2_000)).toMatchObject({ ok: false, reason: 'forged' });
  const [payload, mac] = token.split('.');
  const otherTask = Buffer.from(Buffer.from(payload!, 'base64url').toString().replace('t-1', 't-2')).toString('base64url');
  expect(verifyLink(key, `${otherTask}.${mac}`, 2_000)).toMatchObject({ ok: false, reason: 'forged' });
  expect(verifyLink(key, token.slice(0, -3), 2_000)).toMatchObject({ ok: false, reason: 'malformed' });

  const dir = tmp();
  const claims = (ok as { claims: Parameters<UsedLinks['claim']>[0] }).claims;
  // At the link's own time: claim() sometimes sweeps expired records, and by the real clock this
  // 1970 link is long expired.
  expect(new UsedLinks(dir).claim(claims, 2_000)).toBe(true);
  expect(new UsedLinks(dir).claim(claims, 2_000)).toBe(false); // another process, or after a restart
  expect(new UsedLinks(dir).sweep(claims.e + 1)).toBe(1);
});

test('the link key: DURABLE_AGENT_LINK_KEY when set (32+ characters), else one key file made 0600 and shared by whoever reads it', () => {
  const dir = tmp();
  expect(loadLinkKey({ dir, env: {} })).toBeUndefined();
  const made = loadLinkKey({ dir, env: {}, create: true })!;
  expect(made.length).toBe(64);
  expect(statSync(path.join(dir, 'inbox-link.key')).mode & 0o777).toBe(0o600);
  expect(loadLinkKey({ dir, env: {} })!.equals(made)).toBe(true);
  expect(loadLinkKey({ dir, env: { DURABLE_AGENT_LINK_KEY: 'z'.repeat(40) } })!.toString()).toBe('z'.repeat(40));
  expect(() => loadLinkKey({ dir, env: { DURABLE_AGENT_LINK_KEY: 'short' } })).toThrow(/at least 32 characters/);
});

test('a confirm notice is Slack-shaped ({ text, blocks }) with a button to a signed link for its approval; an inform notice has no link', () => {
  const key = Buffer.from('k'.repeat(32));
  const links = { inboxUrl: 'https://inbox.example.test/', key, ttlMs: 3_600_000 };
  const notice = { taskId: 'task-9', agent: 'demo', level: 'confirm' as const, code: 'approval_requested', message: 'delete_file <b>x</b>', approvalId: 'ap-9' };
  const body = webhookBody(notice, 'line', links);
  expect(body.text).toBe(`line\n${body.link}`);
  expect(body.link).toMatch(/^https:\/\/inbox\.example\.test\/l\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
  expect(verifyLink(key, body.link!.split('/l/')[1]!)).toMatchObject({ ok: true, claims: { t: 'task-9', a: 'ap-9' } });
  expect(body.blocks).toEqual([
    { type: 'header', text: { type: 'plain_text', text: 'Approval needed: demo' } },
    { type: 'section', text: { type: 'mrkdwn', text: 'Task task-9 (approval_requested): delete_file &lt;b&gt;x&lt;/b&gt;' } },
    { type: 'actions', elements: [{ type: 'button', text: { type: 'plain_text', text: 'Review the approval' }, url: body.link }] },
    expect.objectContaining({ type: 'context' }),
  ]);
  expect(webhookBody({ ...notice, level: 'inform' }, 'line', links)).not.toHaveProperty('link');
});

test('the notify activity posts the Slack-shaped body with a signed link to DURABLE_AGENT_INBOX_URL for a block notice', async () => {
  const received: { text: string; link?: string; blocks: unknown[] }[] = [];
  const hook = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      received.push(JSON.parse(body));
      res.end('ok');
    });
  });
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
  const saved = { ...process.env };
  try {
    process.env.DURABLE_AGENT_INBOX_URL = 'http://127.0.0.1:7280';
    process.env.DURABLE_AGENT_LINK_KEY = 'q'.repeat(32);
    const activities = createActivities({ agents: [], webhookUrl: `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook` });
    const env = new MockActivityEnvironment({}, { logger: new DefaultLogger('ERROR') });
    await env.run(activities.notify, { taskId: 'task-b', agent: 'demo', level: 'block' as const, code: 'turn_budget', message: 'turns spent' });
  } finally {
    process.env = saved;
    hook.close();
  }
  expect(received).toHaveLength(1);
  expect(received[0]).toMatchObject({ taskId: 'task-b', level: 'block', code: 'turn_budget' });
  expect(received[0]!.link).toMatch(/^http:\/\/127\.0\.0\.1:7280\/l\//);
  expect(verifyLink(Buffer.from('q'.repeat(32)), received[0]!.link!.split('/l/')[1]!)).toMatchObject({ ok: true, claims: { t: 'task-b' } });
});

test('task content is escaped in pages: a tool argument with markup shows as text', () => {
  const approval = {
    id: 'ap-1',
    tool: 'write_file',
    toolUseId: 'tu',
    input: { path: '<script>alert(1)</script>' },
    inputHash: 'h',
    effect: 'write' as const,
    reason: 'a "write" <needs> approval',
    turn: 1,
    requestedAt: '2026-01-01T00:00:00Z',
    expiresAt: '2026-01-02T00:00:00Z',
    onExpiry: 'deny' as const,
  };
  const status = { pendingApprovals: [approval] } as never;
  const out = inboxPage({}, [{ summary: { taskId: 't<1>', runId: 'r', executionStatus: 'RUNNING', startTime: new Date(), agent: 'demo' }, status }]);
  expect(out).not.toContain('<script>alert');
  expect(out).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  expect(out).toContain('a &quot;write&quot; &lt;needs&gt; approval');
  expect(out).toContain('t&lt;1&gt;');
});
