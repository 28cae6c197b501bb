/**
 * Issue 28 (front ends never wait on a worker) and issue 22 item 9 (a stale unblock form) in the
 * inbox, on a real dev server: with every worker down the inbox lists a pending approval from the
 * task's memo, a person approves it in a real Chromium and is told it is recorded, and the task
 * takes it when a worker starts; an unblock form for a block that is over is refused and changes
 * nothing, and TaskClient.unblock signs the block the person saw, so the task refuses a stale one.
 */
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createDemoAgent } from '../../src/demo/demo-agent';
import { createDecisionSigner, generateSecretKey } from '../../src/approvers';
import { TaskClient, TaskRejectedError } from '../../src/client/task-client';
import { describeAtRest } from '../../src/client/send-decision';
import { ApproverDirectory } from '../../src/inbox/approver-directory';
import { escapeHtml } from '../../src/inbox/html';
import { UsedLinks } from '../../src/notifications/links';
import { hashPassword } from '../../src/inbox/secret-hash';
import { InboxServer } from '../../src/inbox/server';
import type { TaskStatus } from '../../src/protocol/task';
import { answer, callTool, startHarness, statusWhen, type Harness } from '../support/harness';
import { csrfIn, Visitor } from '../support/inbox-visitor';
import { testNeeding } from '../support/prerequisites';
import { waitFor } from '../support/processes';

jest.setTimeout(180_000);

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const HAVE_CHROMIUM = existsSync(CHROMIUM);
const browserTest = testNeeding('inbox-outage.test.ts', { missing: HAVE_CHROMIUM ? undefined : `no Chromium at ${CHROMIUM}`, install: 'apt-get install chromium (or set CHROMIUM_PATH)' });

const signer = createDecisionSigner('inbox-outage', generateSecretKey());
let h: Harness;
let inbox: InboxServer;
let base: string;
let signed: TaskClient;

function demoAgent() {
  // Destructive calls may be approved by people with the ops role only (a policy the signature proves).
  return createDemoAgent({ workspaceDir: h.workspaceDir, ordersUrl: h.orders.url, policy: { approvers: { destructive: ['role:ops'] } } });
}

async function worker() {
  return h.worker([demoAgent()], { approverKeys: [signer.trustedKey()] });
}

beforeAll(async () => {
  h = await startHarness();
  const directory = ApproverDirectory.fromJson(JSON.stringify({ approvers: [{ id: 'ana', name: 'Ana Lima', roles: ['ops'], password: await hashPassword('ana-password-1') }] }));
  signed = new TaskClient(h.client.client, h.taskQueue, signer);
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'inbox-outage-'));
  inbox = new InboxServer({
    client: signed,
    directory,
    linkKey: Buffer.from('inbox-outage-link-key-0123456789abcdef'),
    usedLinks: new UsedLinks(path.join(stateDir, 'used')),
    pollMs: 500,
    blobStore: h.blobStore,
  });
  base = await inbox.start();
});

afterAll(async () => {
  await inbox?.stop();
  await h?.close();
});

const eventCount = async (taskId: string) => (await h.client.handle(taskId).fetchHistory()).events!.length;

/** Waits until the task has no activity or workflow task in flight (a block's notice runs after it blocks), so only a decision could add events. */
async function settled(taskId: string): Promise<void> {
  await waitFor('the task to settle', async () => {
    const { raw } = await h.client.handle(taskId).describe();
    return (!raw.pendingActivities?.length && !raw.pendingWorkflowTask) || undefined;
  });
}

browserTest(
  "with every worker down, the inbox lists the pending approval from the task's memo with its arguments; approved in Chromium it is recorded (a plain page, not an error), and when a worker starts the task deletes the file once, attributed to the signed-in person",
  async () => {
    const { chromium } = await import('playwright-core');
    writeFileSync(path.join(h.workspaceDir, 'outage.csv'), 'x');
    const taskId = h.taskId('inbox-outage');
    const script = h.script([callTool('delete_file', { path: 'outage.csv' }), answer('deleted outage.csv')]);
    const approvalId = await (await worker()).runUntil(async () => {
      await h.client.start({ agent: 'demo', prompt: 'delete outage.csv', model: { provider: 'scripted', script } }, { taskId });
      return (await statusWhen(h, taskId, (s) => s.agentStatus === 'awaiting_approval')).pendingApprovals[0]!.id;
    });
    // Every worker is down from here on: nothing answers the status query.

    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    try {
      const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
      await page.goto(`${base}/`);
      await page.getByLabel('Approver id').fill('ana');
      await page.getByLabel('Password', { exact: true }).fill('ana-password-1');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(`${base}/`);
      // Visibility is eventually consistent: the list catches up with the task within moments.
      for (let i = 0; i < 20 && !(await page.getByText(`delete_file on task ${taskId}`).count()); i++) {
        await new Promise((r) => setTimeout(r, 500));
        await page.reload();
      }
      const card = page.locator('article.approval', { has: page.getByRole('heading', { name: `delete_file on task ${taskId}` }) });
      expect(await card.textContent()).toContain('No worker answered for this task');
      expect(await card.locator('pre').innerText()).toContain('"path": "outage.csv"');

      await page.getByRole('link', { name: `delete_file on task ${taskId}` }).click();
      await page.waitForURL(new RegExp(`/tasks/${taskId}`));
      const form = page.locator(`#approval-${approvalId}`);
      expect(JSON.parse(await form.getByLabel(/Arguments \(JSON\)/).inputValue())).toEqual({ path: 'outage.csv' });
      await form.getByLabel('Comment').fill('approved during the outage');
      await form.getByRole('button', { name: 'Approve' }).click();
      await page.getByRole('heading', { name: 'Decision recorded' }).waitFor();
      const said = await page.getByRole('status').filter({ hasText: 'recorded; it applies when a worker runs the task' }).innerText();
      expect(said).toContain(`Your approval of ${approvalId}: recorded; it applies when a worker runs the task (no worker`);
      expect(await page.getByRole('alert').count()).toBe(0);
    } finally {
      await browser.close();
    }
    expect(existsSync(path.join(h.workspaceDir, 'outage.csv'))).toBe(true);

    const status = await (await worker()).runUntil(async () => {
      expect(await h.client.result(taskId)).toMatchObject({ outcome: 'answered', text: 'deleted outage.csv' });
      return h.client.status(taskId);
    });
    expect(existsSync(path.join(h.workspaceDir, 'outage.csv'))).toBe(false);
    expect(status.approvals).toEqual([
      expect.objectContaining({ id: approvalId, decision: 'approved', by: 'ana', comment: 'approved during the outage', identity: expect.objectContaining({ verified: true, keyId: 'inbox-outage' }) }),
    ]);
    expect(status.approvals[0]!.editedInput).toBeUndefined();
    expect(status.events.filter((e) => e.kind === 'tool_succeeded' && e.tool === 'delete_file')).toHaveLength(1);
  },
);

test('a stale unblock form (the task was unblocked and blocked again since) is refused with a clear message and changes nothing, with a worker and with every worker down; TaskClient.unblock with the old block id is refused by the task', async () => {
  const taskId = h.taskId('inbox-stale-block');
  const script = h.script([callTool('list_files', {}), callTool('list_files', { path: '.' }), answer('listed twice')]);
  const blockedOn = (id: string | undefined) => (s: TaskStatus) => s.agentStatus === 'blocked' && s.blocked !== undefined && s.blocked.id !== id;
  const ana = new Visitor(base);
  await ana.signIn('ana', 'ana-password-1');
  const { first, second, stalePage } = await (await worker()).runUntil(async () => {
    await h.client.start({ agent: 'demo', prompt: 'list', budgets: { turns: 1 }, model: { provider: 'scripted', script } }, { taskId });
    const first = (await statusWhen(h, taskId, blockedOn(undefined))).blocked!;
    // Ana opens the task page on the first block, and leaves the form open.
    const stalePage = await (await ana.get(`/tasks/${taskId}`)).text();
    expect(stalePage).toContain(`<input type="hidden" name="blockId" value="${escapeHtml(first.id)}">`);
    // Someone else unblocks it with one more turn; the task blocks again on the same budget.
    await signed.unblock(taskId, { by: 'ops', roles: ['ops'], blockId: first.id, budget: { turns: 2 } });
    const second = (await statusWhen(h, taskId, blockedOn(first.id))).blocked!;
    expect(second.code).toBe('turn_budget');

    await settled(taskId);
    const before = await eventCount(taskId);
    const refused = await ana.post(`/tasks/${taskId}/unblock`, { _csrf: csrfIn(stalePage), blockId: first.id, turns: '9', message: 'go on' });
    expect(refused.status).toBe(409);
    expect(await refused.text()).toContain(`This form is for block ${escapeHtml(first.id)}, which is over: the task is blocked on ${escapeHtml(second.id)} (turn_budget) now. Nothing was changed.`);
    // The client signs the block it is given, not the one it would read now: the task itself refuses it.
    const stale = await signed.unblock(taskId, { by: 'ops', roles: ['ops'], blockId: first.id, budget: { turns: 9 } }).catch((err: unknown) => err);
    expect(stale).toBeInstanceOf(TaskRejectedError);
    expect((stale as Error).message).toContain(`block ${first.id} is not the current one: the task is blocked on ${second.id} (turn_budget) now`);
    expect(await eventCount(taskId)).toBe(before);
    return { first, second, stalePage };
  });

  // Every worker is down: the inbox compares the form with the task's memo and still refuses.
  await waitFor('the memo to name the second block', async () => (await describeAtRest(h.client.client, taskId)).pending?.block?.id === second.id || undefined);
  const before = await eventCount(taskId);
  const refused = await ana.post(`/tasks/${taskId}/unblock`, { _csrf: csrfIn(stalePage), blockId: first.id, turns: '9' });
  expect(refused.status).toBe(409);
  expect(await refused.text()).toContain(`This form is for block ${escapeHtml(first.id)}, which is over: the task is blocked on ${escapeHtml(second.id)} (turn_budget) now.`);
  const noBlock = await ana.post(`/tasks/${taskId}/unblock`, { _csrf: csrfIn(stalePage), turns: '9' });
  expect(noBlock.status).toBe(422);
  expect(await noBlock.text()).toContain('The form named no block.');
  expect(await eventCount(taskId)).toBe(before);
  expect((await describeAtRest(h.client.client, taskId)).pending?.block?.id).toBe(second.id);

  // The current block's form, sent with no worker, is recorded and resumes the task when one starts.
  const current = await ana.post(`/tasks/${taskId}/unblock`, { _csrf: csrfIn(stalePage), blockId: second.id, turns: '9' });
  expect(current.status).toBe(200);
  expect(await current.text()).toContain(`Your unblock of block ${escapeHtml(second.id)}: recorded; it applies when a worker runs the task`);
  const done = await (await worker()).runUntil(async () => {
    expect(await h.client.result(taskId)).toMatchObject({ outcome: 'answered', text: 'listed twice' });
    return h.client.status(taskId);
  });
  const blocks = done.escalations.filter((e) => e.level === 'block');
  expect(blocks.map((e) => e.id)).toEqual([first.id, second.id]);
  expect(blocks[1]!.resolved).toMatchObject({ by: 'ana' });
});
