/**
 * A tool's question in the inbox, on a real dev server with the reference MCP server from npm
 * (`@modelcontextprotocol/server-everything`, whose trigger-elicitation-request asks for a name and
 * a dozen optional fields): the list and the task page show it as a question with its fields, a
 * wrong answer is refused by the task and the question stays pending, a right one completes the call;
 * a person can decline. The answer form is also filled in a real headless Chromium when one is installed.
 */
import { existsSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApproverDirectory } from '../../src/inbox/approver-directory';
import { UsedLinks } from '../../src/notifications/links';
import { hashPassword } from '../../src/inbox/secret-hash';
import { InboxServer } from '../../src/inbox/server';
import { McpClientPool } from '../../src/mcp/pool';
import type { ApprovalRequest } from '../../src/protocol/task';
import { answer, callTool, parsedResults, runInBackground, startHarness, statusWhen, type Harness } from '../support/harness';
import { csrfIn, Visitor } from '../support/inbox-visitor';
import mcpAgents from '../support/mcp-agents';
import { testNeeding } from '../support/prerequisites';

jest.setTimeout(240_000);

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const HAVE_CHROMIUM = existsSync(CHROMIUM);

let h: Harness;
let inbox: InboxServer;
let base: string;
let pool: McpClientPool;
let worker: { stop(): Promise<void> } | undefined;

beforeAll(async () => {
  h = await startHarness();
  const directory = ApproverDirectory.fromJson(JSON.stringify({ approvers: [{ id: 'ana', name: 'Ana Lima', roles: ['ops'], password: await hashPassword('ana-password-1') }] }));
  inbox = new InboxServer({
    client: h.client,
    directory,
    linkKey: Buffer.from('inbox-questions-link-key-0123456789'),
    usedLinks: new UsedLinks(path.join(mkdtempSync(path.join(os.tmpdir(), 'inbox-q-')), 'used')),
    pollMs: 250,
  });
  base = await inbox.start();
  pool = new McpClientPool();
  worker = runInBackground(await h.worker(mcpAgents({ workspaceDir: h.workspaceDir }), { mcp: pool }));
});

afterAll(async () => {
  await worker?.stop();
  await pool?.close();
  await inbox?.stop();
  await h?.close();
});

/** A task whose MCP call asked server-everything's question, and that question. */
async function askedQuestion(final: string): Promise<{ taskId: string; question: ApprovalRequest }> {
  const taskId = h.taskId('inbox-q');
  const script = h.script([callTool('everything__trigger-elicitation-request', {}), answer(final)]);
  await h.client.start({ agent: 'mcp-everything', prompt: 'ask me', model: { provider: 'scripted', script } }, { taskId });
  const status = await statusWhen(h, taskId, (s) => s.pendingApprovals.length > 0, 60_000);
  const question = status.pendingApprovals[0]!;
  expect(question.question).toMatchObject({ server: 'everything', message: 'Please provide inputs for the following fields:' });
  return { taskId, question };
}

const pendingIds = async (taskId: string) => (await h.client.status(taskId)).pendingApprovals.map((a) => a.id);

test("the inbox lists a tool's question as a question (the server's message and the fields it asks for) and its page has a labelled input per field; a wrong answer is refused by the task and stays pending, a right one completes the call and the task", async () => {
  const { taskId, question } = await askedQuestion('thanks for answering');
  const ana = new Visitor(base);
  expect((await ana.signIn('ana', 'ana-password-1')).status).toBe(303);
  // Visibility is eventually consistent: the list catches up with the task within moments.
  let list = '';
  for (let i = 0; i < 100 && !list.includes(taskId); i++) {
    list = await (await ana.get('/')).text();
    if (!list.includes(taskId)) await new Promise((r) => setTimeout(r, 200));
  }
  expect(list).toContain('1 pending approval (1 of them question from tools)');
  expect(list).toContain(`Question from everything on task ${taskId}`);
  expect(list).toContain('<blockquote class="question">Please provide inputs for the following fields:</blockquote>');
  expect(list).toMatch(/<th scope="row"><code>name<\/code> <span class="hint">String<\/span><\/th><td>text<\/td><td>required<\/td><td>Your full, legal name<\/td>/);
  expect(list).toMatch(/<code>integer<\/code>.*<td>integer, 1 to 100<\/td><td>optional<\/td>/);
  expect(list).toContain('one of the choices: Monica, Rachel, Joey, Chandler, Ross, Phoebe');
  expect(list).toContain('Cats (pet-1)');
  expect(list).not.toContain('Exact arguments'); // not shown as a tool call to approve

  const page = await (await ana.get(`/tasks/${taskId}`)).text();
  const id = question.id;
  expect(page).toContain(`<h3 id="h-approval-${id}">Question from everything</h3>`);
  expect(page).toContain(`<form method="post" action="/tasks/${taskId}/answer">`);
  expect(page).not.toContain('Arguments (JSON)');
  // name is the first property: a required text input, labelled, its description linked.
  expect(page).toContain(
    `<label for="q-${id}-0">String <code class="hint">name</code> <span class="required">(required)</span></label> <span class="hint" id="q-${id}-0-hint">text. Your full, legal name</span>`,
  );
  expect(page).toContain(`<input type="text" id="q-${id}-0" name="answer.name" value="" aria-describedby="q-${id}-0-hint" required aria-required="true">`);
  expect(page).toContain(`<input type="email" id="q-${id}-3" name="answer.email"`);
  expect(page).toContain(`<input type="number" id="q-${id}-6" name="answer.integer" value="42" aria-describedby="q-${id}-6-hint" min="1" max="100" step="1">`);
  expect(page).toContain(`<select id="q-${id}-1" name="answer.check"`); // boolean: yes / no / no answer
  expect(page).toContain('<option value="hero-1" selected>Superman (hero-1)</option>');
  expect(page).toContain(`<input type="checkbox" id="q-${id}-9-0" name="answer.untitledMultipleSelectEnum" value="Guitar" checked> Guitar`);
  expect(page).toContain('<button type="submit" class="danger">Decline</button>');

  // Wrong: an integer above the schema's maximum. The task's check refuses it; nothing is decided.
  const wrong = await ana.post(`/tasks/${taskId}/answer`, [
    ['_csrf', csrfIn(page)],
    ['approvalId', id],
    ['answer.name', 'Ada Lovelace'],
    ['answer.integer', '500'],
  ]);
  expect(wrong.status).toBe(409);
  const refusal = await wrong.text();
  expect(refusal).toMatch(/role="alert"[^>]*>The task refused: the edited arguments are invalid: [^<]*integer/);
  expect(refusal).toContain(`name="answer.integer" value="500"`); // what the person typed is kept
  expect(await pendingIds(taskId)).toEqual([id]);
  // Wrong again: the required name left out.
  const missing = await ana.post(`/tasks/${taskId}/answer`, [
    ['_csrf', csrfIn(page)],
    ['approvalId', id],
    ['answer.name', '  '],
    ['answer.integer', '7'],
  ]);
  expect(missing.status).toBe(409);
  expect(await missing.text()).toMatch(/The task refused: the edited arguments are invalid: Field `name`: required/);
  expect(await pendingIds(taskId)).toEqual([id]);

  const right = await ana.post(`/tasks/${taskId}/answer`, [
    ['_csrf', csrfIn(page)],
    ['approvalId', id],
    ['answer.name', 'Ada Lovelace'],
    ['answer.check', 'true'],
    ['answer.email', 'ada@example.org'],
    ['answer.integer', '7'],
    ['answer.untitledMultipleSelectEnum', 'Guitar'],
    ['answer.untitledMultipleSelectEnum', 'Piano'],
    ['answer.legacyTitledEnum', 'pet-2'],
    ['comment', 'answered for the test'],
  ]);
  expect(right.status).toBe(303);
  expect(await (await ana.get(`/tasks/${taskId}`)).text()).toContain(`Answered question ${id}.`);
  expect(await h.client.result(taskId)).toMatchObject({ outcome: 'answered', text: 'thanks for answering' });
  const status = await h.client.status(taskId);
  expect(status.approvals[0]).toMatchObject({
    decision: 'approved',
    by: 'ana',
    comment: 'answered for the test',
    editedInput: { name: 'Ada Lovelace', check: true, email: 'ada@example.org', integer: 7, untitledMultipleSelectEnum: ['Guitar', 'Piano'], legacyTitledEnum: 'pet-2' },
  });
  // The server got the answer: its tool result echoes it to the model.
  const result = JSON.stringify(parsedResults(await h.client.transcript(taskId))[0]);
  expect(result).toContain('- Name: Ada Lovelace');
  expect(result).toContain('- Agreed to terms: true');
  expect(result).toContain('- Favorite Integer: 7');
});

test('a person declines a question without giving a reason: the server is told "decline", the task records who declined, and the task completes', async () => {
  const { taskId, question } = await askedQuestion('no answer then');
  const ana = new Visitor(base);
  expect((await ana.signIn('ana', 'ana-password-1')).status).toBe(303);
  const page = await (await ana.get(`/tasks/${taskId}`)).text();
  const declined = await ana.post(`/tasks/${taskId}/deny`, [
    ['_csrf', csrfIn(page)],
    ['approvalId', question.id],
    ['question', '1'],
    ['reason', ''],
  ]);
  expect(declined.status).toBe(303);
  expect(await (await ana.get(`/tasks/${taskId}`)).text()).toContain(`Declined question ${question.id}.`);
  expect(await h.client.result(taskId)).toMatchObject({ outcome: 'answered', text: 'no answer then' });
  expect((await h.client.status(taskId)).approvals[0]).toMatchObject({ decision: 'denied', by: 'ana', denyReason: 'Declined to answer.' });
  expect(JSON.stringify(parsedResults(await h.client.transcript(taskId))[0])).toContain('User declined to provide the requested information.');
});

const browserTest = testNeeding('inbox-questions.test.ts', { missing: HAVE_CHROMIUM ? undefined : `no Chromium at ${CHROMIUM}`, install: 'apt-get install chromium (or set CHROMIUM_PATH)' });

browserTest('in Chromium: the answer form is filled by its labels; sent without the required name the task refuses and the refusal takes focus; with it the task completes', async () => {
  const { chromium } = await import('playwright-core');
  const { taskId, question } = await askedQuestion('answered in a browser');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  try {
    const page = await browser.newPage();
    await page.goto(`${base}/tasks/${taskId}`);
    await page.getByLabel('Approver id').fill('ana');
    await page.getByLabel('Password', { exact: true }).fill('ana-password-1');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${base}/tasks/${taskId}`);
    const name = page.getByLabel(/name \(required\)/);
    expect(await name.getAttribute('required')).not.toBeNull();
    // The browser would stop an empty required field; a blank one gets through to the task's own check.
    await name.fill(' ');
    await page.getByLabel(/Integer integer \(optional\)/).fill('12');
    await page.getByLabel(/Boolean check \(optional\)/).selectOption('true');
    await page.getByLabel('Piano').check();
    await page.getByRole('button', { name: 'Send answer' }).click();
    const refusal = page.getByRole('alert');
    await refusal.waitFor();
    expect(await refusal.textContent()).toContain('Field `name`: required');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('role'))).toBe('alert');
    expect(await page.getByLabel(/Integer integer/).inputValue()).toBe('12');
    expect(await pendingIds(taskId)).toEqual([question.id]);

    await page.getByLabel(/name \(required\)/).fill('Grace Hopper');
    await page.getByRole('button', { name: 'Send answer' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Answered question ${question.id}.` })
      .waitFor();
    await page.locator('#live-status[data-status="completed"]').waitFor({ timeout: 60_000 });
  } finally {
    await browser.close();
  }
  expect((await h.client.status(taskId)).approvals[0]!.editedInput).toMatchObject({ name: 'Grace Hopper', integer: 12, check: true, untitledMultipleSelectEnum: ['Guitar', 'Piano'] });
});
