/**
 * The inbox on a real dev server: approvers sign in, see what waits for them, answer it; CSRF,
 * Origin and links are checked at the HTTP level; the whole flow runs in a real headless Chromium
 * (Debian's `chromium`, driven by playwright-core) when one is installed.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ApproverDirectory } from '../../src/inbox/approver-directory';
import { signLink, UsedLinks } from '../../src/notifications/links';
import { hashPassword } from '../../src/inbox/secret-hash';
import { InboxServer } from '../../src/inbox/server';
import { escapeHtml } from '../../src/inbox/html';
import { answer, callTool, runInBackground, startHarness, statusWhen, type Harness } from '../support/harness';
import { csrfIn, Visitor } from '../support/inbox-visitor';
import { runCli, spawnCli, waitFor } from '../support/processes';
import { createDemoAgent } from '../../src/demo/demo-agent';
import { createDecisionSigner, generateSecretKey } from '../../src/approvers';
import { TaskClient } from '../../src/client/task-client';
import type { TaskStatus } from '../../src/protocol/task';
import { testNeeding } from '../support/prerequisites';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const HAVE_CHROMIUM = existsSync(CHROMIUM);
const SCREENSHOT = path.resolve(__dirname, '../../docs/images/inbox.png');

let h: Harness;
let inbox: InboxServer;
let base: string;
let worker: { stop(): Promise<void> } | undefined;
let hook: http.Server;
type Notice = { taskId: string; level: string; code: string; approvalId?: string; text: string; link?: string; blocks: { type: string; elements?: { url?: string }[] }[] };
const notices: Notice[] = [];
const linkKey = Buffer.from('inbox-test-link-key-0123456789abcdef');
const stateDir = mkdtempSync(path.join(os.tmpdir(), 'inbox-state-'));

beforeAll(async () => {
  h = await startHarness();
  const directory = ApproverDirectory.fromJson(
    JSON.stringify({
      approvers: [
        { id: 'ana', name: 'Ana Lima', roles: ['ops'], password: await hashPassword('ana-password-1') },
        { id: 'bob', name: 'Bob Stone', roles: ['intern'], password: await hashPassword('bob-password-1') },
      ],
    }),
  );
  // The inbox signs what signed-in people decide; the worker trusts its key, so every decision must be signed.
  const signer = createDecisionSigner('inbox-test', generateSecretKey());
  const client = new TaskClient(h.client.client, h.taskQueue, signer);
  // The workers' blob store: long arguments travel there, and the inbox reads them for people.
  inbox = new InboxServer({ client, directory, linkKey, usedLinks: new UsedLinks(path.join(stateDir, 'used-links')), pollMs: 250, blobStore: h.blobStore });
  base = await inbox.start();
  // Destructive calls may be approved by people with the ops role only.
  const agent = createDemoAgent({ workspaceDir: h.workspaceDir, ordersUrl: h.orders.url, policy: { approvers: { destructive: ['role:ops'] } } });
  // The worker's notices go to this webhook; confirm and block notices carry signed links to this inbox.
  hook = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      notices.push(JSON.parse(body) as Notice);
      res.end('ok');
    });
  });
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
  process.env.DURABLE_AGENT_INBOX_URL = base;
  process.env.DURABLE_AGENT_LINK_KEY = linkKey.toString('utf8');
  worker = runInBackground(await h.worker([agent], { approverKeys: [signer.trustedKey()], webhookUrl: `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook` }));
});

afterAll(async () => {
  await worker?.stop();
  await inbox?.stop();
  hook?.close();
  delete process.env.DURABLE_AGENT_INBOX_URL;
  delete process.env.DURABLE_AGENT_LINK_KEY;
  await h?.close();
});

/** A task waiting for approval of delete_file on `file` (created in the workspace). */
async function pendingDelete(file: string, final = 'done'): Promise<{ taskId: string; status: TaskStatus }> {
  writeFileSync(path.join(h.workspaceDir, file), 'x');
  const script = h.script([callTool('delete_file', { path: file }), answer(final)]);
  const taskId = h.taskId('inbox');
  await h.client.start({ agent: 'demo', prompt: `delete ${file}`, model: { provider: 'scripted', script } }, { taskId });
  const status = await statusWhen(h, taskId, (s) => s.agentStatus === 'awaiting_approval');
  return { taskId, status };
}

/**
 * A task waiting for approval of a destructive cancel_order padded past 50 KB, the way a
 * prompt-injected model would hide a call: the order id comes after the filler.
 */
const PAD = `Routine housekeeping, nothing to see. ${'All systems nominal. '.repeat(2_500)}`;
async function pendingPaddedCancel(orderId: string, final = 'cancelled'): Promise<{ taskId: string; status: TaskStatus; input: { reason: string; order_id: string } }> {
  const input = { reason: `${PAD}End of note.`, order_id: orderId };
  expect(JSON.stringify(input).length).toBeGreaterThan(50_000);
  const script = h.script([callTool('cancel_order', input), answer(final)]);
  const taskId = h.taskId('inbox-padded');
  await h.client.start({ agent: 'demo', prompt: 'tidy up', model: { provider: 'scripted', script } }, { taskId });
  const status = await statusWhen(h, taskId, (s) => s.agentStatus === 'awaiting_approval');
  return { taskId, status, input };
}

const eventCount = async (taskId: string) => (await h.client.handle(taskId).fetchHistory()).events!.length;

test('sign-in: a wrong password is refused and signs nobody in; the right one opens the inbox, which lists the pending approval with its exact arguments, effect, reason and expiry', async () => {
  const { taskId, status } = await pendingDelete('listed.txt');
  const stranger = new Visitor(base);
  expect((await stranger.get('/')).headers.get('location')).toBe('/signin?next=%2F');
  const wrong = await stranger.signIn('ana', 'not-her-password');
  expect(wrong.status).toBe(401);
  expect(await wrong.text()).toContain('Sign-in failed: unknown approver, wrong password or wrong token.');
  expect((await stranger.get('/')).status).toBe(303);

  const ana = new Visitor(base);
  const signedIn = await ana.signIn('ana', 'ana-password-1');
  expect(signedIn.status).toBe(303);
  expect(signedIn.headers.getSetCookie().join('\n')).toMatch(/da_session=[^;]+; Path=\/; HttpOnly; SameSite=Strict/);
  // Visibility is eventually consistent: the list catches up with the task within moments.
  let page = '';
  for (let i = 0; i < 100 && !page.includes(taskId); i++) {
    page = await (await ana.get('/')).text();
    if (!page.includes(taskId)) await new Promise((r) => setTimeout(r, 200));
  }
  const approval = status.pendingApprovals[0]!;
  expect(page).toContain(`delete_file on task ${taskId}`);
  expect(page).toContain('&quot;path&quot;: &quot;listed.txt&quot;');
  expect(page).toContain('<span class="badge destructive">destructive</span>');
  expect(page).toContain(escapeHtml(approval.reason));
  expect(page).toContain(approval.expiresAt);
  expect(page).toContain('Signed in as <strong>Ana Lima</strong>');
  await h.client.handle(taskId).terminate('test over');
});

test('a 50 KB destructive call: the task holds only a reference, but the inbox list and task page show its arguments (every field, the padding shortened and sized), the download is the exact JSON, and the confirm notice quotes them', async () => {
  const { taskId, status, input } = await pendingPaddedCancel('O-0011');
  const approval = status.pendingApprovals[0]!;
  expect(approval.input).toMatchObject({ $blob: expect.stringMatching(/^sha256:/) }); // what every front end used to show
  const ana = new Visitor(base);
  await ana.signIn('ana', 'ana-password-1');
  let list = '';
  for (let i = 0; i < 100 && !list.includes(taskId); i++) {
    list = await (await ana.get('/')).text();
    if (!list.includes(taskId)) await new Promise((r) => setTimeout(r, 200));
  }
  const page = await (await ana.get(`/tasks/${taskId}`)).text();
  for (const html of [list, page]) {
    expect(html).not.toContain('$blob');
    expect(html).toContain('&quot;order_id&quot;: &quot;O-0011&quot;');
    expect(html).toContain('&quot;reason&quot;: &quot;Routine housekeeping, nothing to see.');
    expect(html).toContain('nominal. End of note.&quot;');
    expect(html).toMatch(/<span class="omitted">… [\d,]+ characters not shown …<\/span>/);
    expect(html).toContain(`Download the exact arguments (JSON, ${JSON.stringify(input, null, 2).length.toLocaleString('en-US')} characters)`);
    expect(html).toContain((approval.input as { $blob: string }).$blob.slice('sha256:'.length));
    expect(html.length).toBeLessThan(60_000); // shortened, not the 50 KB pasted into the page
  }
  expect(page).toContain(`name="inputHash" value="${approval.inputHash}"`);
  const download = await ana.get(`/tasks/${taskId}/approvals/${approval.id}/arguments`);
  expect(download.status).toBe(200);
  expect(download.headers.get('content-disposition')).toBe(`attachment; filename="${approval.id}-arguments.json"`);
  expect(JSON.parse(await download.text())).toEqual(input);
  expect((await new Visitor(base).get(`/tasks/${taskId}/approvals/${approval.id}/arguments`)).status).toBe(303); // signed out: sign in first

  const notice = await waitFor('the confirm notice', () => notices.find((n) => n.taskId === taskId && n.level === 'confirm'));
  expect(notice.text).not.toContain('$blob');
  expect(notice.text).toContain(`[confirm] task ${taskId} (demo) approval_requested: cancel_order {"order_id":"O-0011","reason":"Routine housekeeping, nothing to see.`);
  expect(notice.text).toMatch(/characters not shown\]….*End of note\."\} \(shortened; [\d,]+ characters in all\)/);

  // The CLI reads the same store: `status` shortens, `--full` prints the exact JSON.
  const cli = ['status', taskId, '--address', h.server.address, '--task-queue', h.taskQueue, '--blob-store', `file:${path.join(h.tmpDir, 'blobs')}`];
  const shown = await runCli(cli);
  expect(shown.code).toBe(0);
  expect(shown.stdout).not.toContain('$blob');
  expect(shown.stdout).toContain('"order_id":"O-0011"');
  expect(shown.stdout).toContain(`see them whole: durable-agent status ${taskId} --full`);
  const full = await runCli([...cli, '--full']);
  const line = full.stdout.split('\n').find((l) => l.startsWith('  arguments: '))!;
  expect(JSON.parse(line.slice('  arguments: '.length))).toEqual(input);
  // `list` shows what a waiting task waits for (its memo) with the arguments, not the reference.
  const listed = await runCli(['list', '--status', 'awaiting_approval', '--address', h.server.address, '--blob-store', `file:${path.join(h.tmpDir, 'blobs')}`]);
  const row = listed.stdout.split('\n').find((l) => l.startsWith(taskId))!;
  expect(row).toContain(`approval ${approval.id}: cancel_order {"order_id":"O-0011","reason":"Routine housekeeping`);
  expect(row).not.toContain('$blob');

  // The form carries the hash of the call the person read: a form for other arguments approves nothing.
  const before = await eventCount(taskId);
  const stale = await ana.post(`/tasks/${taskId}/approve`, { _csrf: csrfIn(page), approvalId: approval.id, inputHash: 'not-the-shown-call', arguments: '' });
  expect(stale.status).toBe(409);
  expect(await stale.text()).toContain('This approval is not the call you read');
  expect(await eventCount(taskId)).toBe(before);
  await h.client.handle(taskId).terminate('test over');
});

test("an inbox without the workers' blob store says it cannot show a stored call's arguments and will not approve it as is", async () => {
  const { taskId, status } = await pendingPaddedCancel('O-0012');
  const approvalId = status.pendingApprovals[0]!.id;
  const signer = createDecisionSigner('inbox-test-2', generateSecretKey());
  const blind = new InboxServer({
    client: new TaskClient(h.client.client, h.taskQueue, signer),
    directory: ApproverDirectory.fromJson(JSON.stringify({ approvers: [{ id: 'ana', roles: ['ops'], password: await hashPassword('ana-password-1') }] })),
    linkKey,
    usedLinks: new UsedLinks(path.join(stateDir, 'used-blind')),
  });
  const url = await blind.start();
  try {
    const ana = new Visitor(url);
    await ana.signIn('ana', 'ana-password-1');
    const page = await (await ana.get(`/tasks/${taskId}`)).text();
    expect(page).toContain('<strong>The arguments cannot be shown here:</strong>');
    expect(page).toContain('no blob store is configured here');
    expect(page).toContain('Do not approve arguments you have not read.');
    const refused = await ana.post(`/tasks/${taskId}/approve`, { _csrf: csrfIn(page), approvalId, arguments: '' });
    expect(refused.status).toBe(409);
    expect(await refused.text()).toContain('cannot be shown here, so the inbox will not approve them as they are');
    expect((await h.client.status(taskId)).pendingApprovals.map((a) => a.id)).toEqual([approvalId]);
  } finally {
    await blind.stop();
    await h.client.handle(taskId).terminate('test over');
  }
});

test('CSRF: a POST without the session token, with another token, or from another origin is refused (403) and writes nothing; with the token it decides', async () => {
  const { taskId, status } = await pendingDelete('csrf.txt', 'kept it');
  const approvalId = status.pendingApprovals[0]!.id;
  const ana = new Visitor(base);
  await ana.signIn('ana', 'ana-password-1');
  const taskPage = await (await ana.get(`/tasks/${taskId}`)).text();
  const csrf = csrfIn(taskPage);
  expect(taskPage.match(/name="_csrf" value="/g)!.length).toBeGreaterThanOrEqual(4); // sign-out, approve, deny, message
  const before = await eventCount(taskId);

  const noToken = await ana.post(`/tasks/${taskId}/approve`, { approvalId, arguments: '' });
  expect(noToken.status).toBe(403);
  expect(await noToken.text()).toContain('missing its security token');
  const otherToken = await ana.post(`/tasks/${taskId}/approve`, { _csrf: `${csrf.slice(0, -2)}xx`, approvalId, arguments: '' });
  expect(otherToken.status).toBe(403);
  const foreign = await ana.post(`/tasks/${taskId}/approve`, { _csrf: csrf, approvalId, arguments: '' }, 'http://evil.example');
  expect(foreign.status).toBe(403);
  expect(await foreign.text()).toContain('Origin did not match');
  const noOrigin = await ana.post(`/tasks/${taskId}/approve`, { _csrf: csrf, approvalId, arguments: '' }, null);
  expect(noOrigin.status).toBe(403);
  const signedOut = await new Visitor(base).post(`/tasks/${taskId}/approve`, { _csrf: csrf, approvalId, arguments: '' });
  expect(signedOut.status).toBe(403);
  expect((await h.client.status(taskId)).pendingApprovals.map((a) => a.id)).toEqual([approvalId]);
  expect(await eventCount(taskId)).toBe(before);

  const denied = await ana.post(`/tasks/${taskId}/deny`, { _csrf: csrf, approvalId, reason: 'keep csrf.txt' });
  expect(denied.status).toBe(303);
  expect(await h.client.result(taskId)).toMatchObject({ text: 'kept it' });
  expect((await h.client.status(taskId)).approvals[0]).toMatchObject({
    decision: 'denied',
    by: 'ana',
    denyReason: 'keep csrf.txt',
    identity: { id: 'ana', roles: ['ops'], verified: true, keyId: 'inbox-test' },
  });
  expect(await (await ana.get(`/tasks/${taskId}`)).text()).toContain(`Denied ${approvalId}.`);
});

test('after 5 failed sign-ins for one approver even the right password must wait (429 with Retry-After)', async () => {
  const guarded = new InboxServer({
    client: h.client,
    directory: ApproverDirectory.fromJson(JSON.stringify({ approvers: [{ id: 'cy', password: await hashPassword('cy-password-1') }] })),
    linkKey,
    usedLinks: new UsedLinks(path.join(stateDir, 'used-links-2')),
  });
  const url = await guarded.start();
  try {
    const signIn = async (password: string) => {
      const form = await (await fetch(`${url}/signin`)).text();
      const pre = /name="_csrf" value="([^"]+)"/.exec(form)![1]!;
      return fetch(`${url}/signin`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: url, cookie: `da_pre=${pre}` },
        body: new URLSearchParams({ _csrf: pre, id: 'cy', password }).toString(),
      });
    };
    for (let i = 0; i < 5; i++) expect((await signIn('wrong-guess')).status).toBe(401);
    const limited = await signIn('cy-password-1');
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await limited.text()).toContain('Too many failed sign-ins');
  } finally {
    await guarded.stop();
  }
});

test('links: the confirm notice (Slack-shaped) links to the approval; opened signed out it asks for sign-in and is not used up; signed in it opens the approval once; a second use and an expired link are refused with a clear page', async () => {
  const { taskId, status } = await pendingDelete('linked.txt');
  const approvalId = status.pendingApprovals[0]!.id;
  const notice = await waitFor('the confirm notice', () => notices.find((n) => n.taskId === taskId && n.level === 'confirm'));
  expect(notice).toMatchObject({ code: 'approval_requested', approvalId });
  expect(notice.text).toContain(`[confirm] task ${taskId} (demo) approval_requested: delete_file {"path":"linked.txt"}`);
  expect(notice.link!.startsWith(`${base}/l/`)).toBe(true);
  expect(notice.blocks.find((b) => b.type === 'actions')!.elements![0]!.url).toBe(notice.link);
  const link = notice.link!.slice(base.length);

  const ana = new Visitor(base);
  const signedOut = await ana.get(link);
  expect(signedOut.status).toBe(303);
  expect(signedOut.headers.get('location')).toBe(`/signin?next=${encodeURIComponent(link)}`);
  const form = await (await ana.get(signedOut.headers.get('location')!)).text();
  const afterSignIn = await ana.post('/signin', { _csrf: csrfIn(form), next: link, id: 'ana', password: 'ana-password-1' });
  expect(afterSignIn.headers.get('location')).toBe(link);
  const opened = await ana.get(link);
  expect(opened.status).toBe(303);
  expect(opened.headers.get('location')).toBe(`/tasks/${taskId}#approval-${approvalId}`);
  expect(await (await ana.get(opened.headers.get('location')!)).text()).toContain(`id="approval-${approvalId}"`);

  const reused = await ana.get(link);
  expect(reused.status).toBe(410);
  const reusedPage = await reused.text();
  expect(reusedPage).toContain('<h1>Link already used</h1>');
  expect(reusedPage).toContain('links work only once');

  const expired = await ana.get(`/l/${signLink(linkKey, { taskId, approvalId }, { ttlMs: 1_000, now: Date.now() - 60_000 })}`);
  expect(expired.status).toBe(410);
  expect(await expired.text()).toContain('<h1>Link expired</h1>');
  const forged = await ana.get(`/l/${signLink(Buffer.from('another-key-another-key-another-key'), { taskId, approvalId })}`);
  expect(forged.status).toBe(400);
  expect(await forged.text()).toContain('This link was not made by this system');
  await h.client.handle(taskId).terminate('test over');
});

test('trusted-proxy mode (off by default): the named header signs in an approver from the file, only from the configured proxy addresses; an unknown name is refused', async () => {
  const directory = ApproverDirectory.fromJson(JSON.stringify({ approvers: [{ id: 'ana', name: 'Ana Lima', roles: ['ops'] }] }));
  const proxied = new InboxServer({ client: h.client, directory, linkKey, usedLinks: new UsedLinks(path.join(stateDir, 'used-3')), trustedHeader: { header: 'X-Forwarded-User' } });
  const elsewhere = new InboxServer({
    client: h.client,
    directory,
    linkKey,
    usedLinks: new UsedLinks(path.join(stateDir, 'used-4')),
    trustedHeader: { header: 'X-Forwarded-User', proxies: ['10.0.0.7'] },
  });
  const [url, otherUrl] = [await proxied.start(), await elsewhere.start()];
  try {
    const asAna = await fetch(`${url}/`, { headers: { 'x-forwarded-user': 'ana' } });
    expect(asAna.status).toBe(200);
    expect(await asAna.text()).toContain('Signed in as <strong>Ana Lima</strong>');
    expect((await fetch(`${url}/`, { redirect: 'manual' })).status).toBe(303); // no header: the sign-in page
    const unknown = await fetch(`${url}/`, { headers: { 'x-forwarded-user': 'mallory' } });
    expect(unknown.status).toBe(403);
    expect(await unknown.text()).toContain('mallory is signed in at the proxy but is not in the approvers file.');
    const notFromProxy = await fetch(`${otherUrl}/`, { headers: { 'x-forwarded-user': 'ana' } });
    expect(notFromProxy.status).toBe(403);
    expect(await notFromProxy.text()).toContain('only accepted from the configured proxy');
    // The default inbox ignores the header altogether.
    expect((await fetch(`${base}/`, { redirect: 'manual', headers: { 'x-forwarded-user': 'ana' } })).status).toBe(303);
  } finally {
    await proxied.stop();
    await elsewhere.stop();
  }
});

const browserTest = testNeeding('inbox.test.ts', { missing: HAVE_CHROMIUM ? undefined : `no Chromium at ${CHROMIUM}`, install: 'apt-get install chromium (or set CHROMIUM_PATH)' });

browserTest('in Chromium: sign in, see the pending approval, a wrong edit shows the schema error and stays pending, an edited approval runs, and the task page shows the task complete', async () => {
  const { chromium } = await import('playwright-core');
  writeFileSync(path.join(h.workspaceDir, 'keep-me.txt'), 'keep');
  const { taskId, status } = await pendingDelete('stale-report.csv', 'Deleted the file you chose.');
  const approvalId = status.pendingApprovals[0]!.id;
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  try {
    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    await page.goto(`${base}/`);
    expect(new URL(page.url()).pathname).toBe('/signin');
    await page.getByLabel('Approver id').fill('ana');
    await page.getByLabel('Password', { exact: true }).fill('ana-password-1');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${base}/`);
    for (let i = 0; i < 100 && !(await page.getByText(`delete_file on task ${taskId}`).count()); i++) {
      await new Promise((r) => setTimeout(r, 200));
      await page.reload();
    }
    await page.getByRole('heading', { name: `delete_file on task ${taskId}` }).waitFor();
    // The README's picture is refreshed only on request: a test run never writes into the repository.
    const shot = process.env.DURABLE_AGENT_UPDATE_SCREENSHOT ? SCREENSHOT : path.join(h.tmpDir, 'inbox.png');
    mkdirSync(path.dirname(shot), { recursive: true });
    await page.screenshot({ path: shot, fullPage: false });

    await page.getByRole('link', { name: `delete_file on task ${taskId}` }).click();
    await page.waitForURL(new RegExp(`/tasks/${taskId}`));
    const args = page.getByLabel(/Arguments \(JSON\)/);
    expect(JSON.parse(await args.inputValue())).toEqual({ path: 'stale-report.csv' });

    await args.fill('{"path": 42}');
    await page.getByRole('button', { name: 'Approve' }).click();
    const refusal = page.getByRole('alert');
    await refusal.waitFor();
    expect(await refusal.textContent()).toContain('the edited arguments are invalid: Field `path`: got 42; expected string');
    expect(await args.inputValue()).toBe('{"path": 42}'); // what the person typed is kept
    expect((await h.client.status(taskId)).pendingApprovals.map((a) => a.id)).toEqual([approvalId]);

    await args.fill('{"path": "keep-me.txt"}');
    await page.getByLabel('Comment').fill('the csv is still needed; delete this one');
    await page.getByRole('button', { name: 'Approve' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Approved ${approvalId} with edited arguments.` })
      .waitFor();
    await page.locator('#live-status[data-status="completed"]').waitFor({ timeout: 60_000 });
    expect(await page.locator('#live-result').textContent()).toContain('Result (answered): Deleted the file you chose.');
  } finally {
    await browser.close();
  }
  expect(existsSync(path.join(h.workspaceDir, 'keep-me.txt'))).toBe(false);
  expect(existsSync(path.join(h.workspaceDir, 'stale-report.csv'))).toBe(true);
  expect((await h.client.status(taskId)).approvals[0]).toMatchObject({ decision: 'approved', by: 'ana', editedInput: { path: 'keep-me.txt' }, comment: 'the csv is still needed; delete this one' });
});

test('a person the agent policy does not name is refused by the task: the page shows why and the approval stays pending, with nothing written', async () => {
  const { taskId, status } = await pendingDelete('not-for-bob.txt', 'fine');
  const approvalId = status.pendingApprovals[0]!.id;
  const bob = new Visitor(base);
  await bob.signIn('bob', 'bob-password-1');
  const taskPage = await (await bob.get(`/tasks/${taskId}`)).text();
  // The inbox warns before the task refuses: the same rule, read from the task's status.
  expect(taskPage).toContain('The task will refuse you:</strong> bob (roles: intern) may not approve delete_file (destructive)');
  const before = await eventCount(taskId);
  const refused = await bob.post(`/tasks/${taskId}/approve`, { _csrf: csrfIn(taskPage), approvalId, arguments: '', comment: '' });
  expect(refused.status).toBe(409);
  expect(await refused.text()).toContain('The task refused: bob (roles: intern) may not approve delete_file (destructive) on this task: the agent&#39;s policy allows role:ops');
  expect((await h.client.status(taskId)).pendingApprovals.map((a) => a.id)).toEqual([approvalId]);
  expect(await eventCount(taskId)).toBe(before);
  await h.client.handle(taskId).terminate('test over');
});

browserTest('in Chromium: a wrong approver clicks Approve and sees the task refuse; the approval is still pending', async () => {
  const { chromium } = await import('playwright-core');
  const { taskId, status } = await pendingDelete('bob-tries.txt');
  const approvalId = status.pendingApprovals[0]!.id;
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  try {
    const page = await browser.newPage();
    await page.goto(`${base}/tasks/${taskId}`);
    await page.getByLabel('Approver id').fill('bob');
    await page.getByLabel('Password', { exact: true }).fill('bob-password-1');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${base}/tasks/${taskId}`);
    await page.getByRole('button', { name: 'Approve' }).click();
    const refusal = page.getByRole('alert');
    await refusal.waitFor();
    expect(await refusal.textContent()).toContain('The task refused: bob (roles: intern) may not approve delete_file (destructive)');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('role'))).toBe('alert'); // focus moves to the refusal
  } finally {
    await browser.close();
  }
  expect((await h.client.status(taskId)).pendingApprovals.map((a) => a.id)).toEqual([approvalId]);
  await h.client.handle(taskId).terminate('test over');
});

browserTest(
  'in Chromium: a 50 KB destructive call shows its arguments (the order id after the padding, the padding shortened, a download of the exact JSON); approved as shown, it runs once with exactly those arguments',
  async () => {
    const { chromium } = await import('playwright-core');
    const { taskId, status, input } = await pendingPaddedCancel('O-0016', 'cancelled O-0016');
    const approvalId = status.pendingApprovals[0]!.id;
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    try {
      const context = await browser.newContext({ acceptDownloads: true });
      const page = await context.newPage();
      await page.goto(`${base}/tasks/${taskId}`);
      await page.getByLabel('Approver id').fill('ana');
      await page.getByLabel('Password', { exact: true }).fill('ana-password-1');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(`${base}/tasks/${taskId}`);
      const card = page.locator(`#approval-${approvalId}`);
      const shown = (await card.locator('pre').first().innerText()).trim();
      expect(shown).toContain('"order_id": "O-0016"');
      expect(shown).toContain('"reason": "Routine housekeeping, nothing to see.');
      expect(shown).toMatch(/… [\d,]+ characters not shown …/);
      expect(shown).not.toContain('$blob');
      await expect(card.locator('.omitted').count()).resolves.toBe(1);
      const [download] = await Promise.all([page.waitForEvent('download'), card.getByRole('link', { name: /Download the exact arguments/ }).click()]);
      expect(JSON.parse(readFileSync((await download.path())!, 'utf8'))).toEqual(input);
      // Too long to edit in place: the box starts empty, and empty approves the arguments shown.
      expect(await card.getByLabel(/Different arguments \(JSON\)/).inputValue()).toBe('');
      await card.getByRole('button', { name: 'Approve' }).click();
      await page
        .getByRole('status')
        .filter({ hasText: `Approved ${approvalId}.` })
        .waitFor();
      await page.locator('#live-status[data-status="completed"]').waitFor({ timeout: 60_000 });
    } finally {
      await browser.close();
    }
    expect(h.orders.effects.filter((e) => e.order_id === 'O-0016')).toMatchObject([{ kind: 'cancel' }]);
    const [decided] = (await h.client.status(taskId)).approvals;
    expect(decided).toMatchObject({ decision: 'approved', by: 'ana', identity: { verified: true } });
    expect(decided!.editedInput).toBeUndefined();
  },
);

test('a blocked task notifies with a signed link to its page, where a person sends a message and unblocks it with a raised budget', async () => {
  const script = h.script([callTool('list_files', {}), callTool('list_files', { path: '.' }), answer('listed twice')]);
  const taskId = h.taskId('inbox-blocked');
  await h.client.start({ agent: 'demo', prompt: 'list', budgets: { turns: 1 }, model: { provider: 'scripted', script } }, { taskId });
  const notice = await waitFor('the block notice', () => notices.find((n) => n.taskId === taskId && n.level === 'block'));
  expect(notice.code).toBe('turn_budget');
  const ana = new Visitor(base);
  await ana.signIn('ana', 'ana-password-1');
  const opened = await ana.get(notice.link!.slice(base.length));
  expect(opened.headers.get('location')).toBe(`/tasks/${taskId}`);
  const page = await (await ana.get(`/tasks/${taskId}`)).text();
  expect(page).toContain('Blocked: turn_budget');
  // The form names the block the page shows: the unblock answers that block and no later one.
  const blockId = /name="blockId" value="([^"]+)"/.exec(page)![1]!;
  expect(blockId).toBe((await h.client.status(taskId)).blocked!.id);
  const bad = await ana.post(`/tasks/${taskId}/unblock`, { _csrf: csrfIn(page), blockId, turns: '0' });
  expect(bad.status).toBe(422);
  expect(await bad.text()).toContain('turns must be a whole number of at least 1 (the new total), got &quot;0&quot;.');
  const messaged = await ana.post(`/tasks/${taskId}/message`, { _csrf: csrfIn(page), text: 'list the folder once more, then stop' });
  expect(messaged.status).toBe(303);
  await statusWhen(h, taskId, (s) => s.decisions.some((d) => d.action === 'message' && d.by === 'ana'));
  const unblocked = await ana.post(`/tasks/${taskId}/unblock`, { _csrf: csrfIn(page), blockId, turns: '5', message: 'go on' });
  expect(unblocked.status).toBe(303);
  expect(await h.client.result(taskId)).toMatchObject({ outcome: 'answered', text: 'listed twice' });
  const status = await h.client.status(taskId);
  expect(status.escalations.find((e) => e.level === 'block')!.resolved).toMatchObject({ by: 'ana' });
});

test('durable-agent inbox: hash-password --token prints a token and its hash; the verb serves the sign-in page with the hashed approvers file and says which key signs decisions', async () => {
  const made = await runCli(['inbox', 'hash-password', '--token']);
  expect(made.code).toBe(0);
  const token = /token .*: (dat_\S+)/.exec(made.stdout)![1]!;
  const hash = /hash .*:\s+(sha256\$[0-9a-f]{64})/.exec(made.stdout)![1]!;
  const home = mkdtempSync(path.join(os.tmpdir(), 'inbox-cli-'));
  const file = path.join(home, 'approvers.json');
  writeFileSync(file, JSON.stringify({ approvers: [{ id: 'ci-bot', roles: ['ops'], tokens: [hash] }] }));
  const missing = await runCli(['inbox', '--approvers', path.join(home, 'nope.json'), '--address', h.server.address]);
  expect(missing.code).toBe(2);
  expect(missing.stderr).toContain('cannot read the approvers file');

  const child = spawnCli(['inbox', '--approvers', file, '--port', '0', '--address', h.server.address], {
    DURABLE_AGENT_HOME: home,
    // Not this file's in-process inbox settings: this inbox finds its own in its state dir.
    DURABLE_AGENT_INBOX_URL: '',
    DURABLE_AGENT_LINK_KEY: '',
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  try {
    const url = await waitFor('the inbox to listen', () => /inbox: (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1], 60_000);
    await waitFor('the signing key line', () => out.includes('decisions are signed with key local-'));
    expect((await fetch(`${url}/signin`)).status).toBe(200);
    const form = await (await fetch(`${url}/signin`)).text();
    const pre = csrfIn(form);
    const signedIn = await fetch(`${url}/signin`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: url, cookie: `da_pre=${pre}` },
      body: new URLSearchParams({ _csrf: pre, next: '/', token }).toString(),
    });
    expect(signedIn.status).toBe(303);
    expect(existsSync(path.join(home, 'inbox-link.key'))).toBe(true);
  } finally {
    child.kill('SIGTERM');
  }
});
