/**
 * A notice about a long call's arguments reads them from the scope the notice names, without
 * asking Temporal for the task's history (the activity environment here has no client at all), and
 * a notice that names another task's scope is refused.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { createActivities } from '../../src/activities';
import { LocalBlobStore } from '../../src/blobs/local-blob-store';
import { storeValueIfLarge } from '../../src/blobs/claim-check';

const received: string[] = [];
let hook: Server;
let webhookUrl: string;

beforeAll(async () => {
  hook = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      received.push(body);
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
  webhookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`;
});
afterAll(() => new Promise((resolve) => hook.close(resolve)));

const env = (workflowId: string) => new MockActivityEnvironment({ workflowExecution: { workflowId, runId: 'run-1' } }, { logger: new DefaultLogger('ERROR') });

test("a notice names its task's scope: the stored arguments reach the webhook with no history read", async () => {
  const blobStore = new LocalBlobStore(mkdtempSync(path.join(os.tmpdir(), 'notify-scope-')));
  const scope = 'task-7/first-run';
  const args = { order_id: 'ord-1004', reason: 'x'.repeat(5_000) };
  const marker = await storeValueIfLarge(blobStore, scope, args);
  const activities = createActivities({ agents: [], blobStore, webhookUrl, modelEnv: { anthropicApiKey: '', scriptRoots: [] } });
  const message = `cancel_order ${JSON.stringify(marker)}: destructive`;
  expect(message).toContain('$blob');

  await env('task-7').run(activities.notify, { taskId: 'task-7', agent: 'demo', level: 'confirm' as const, code: 'approval_requested', message, approvalId: 'a-1', scope });
  const text = JSON.parse(received.at(-1)!).text as string;
  expect(text).toContain('"order_id":"ord-1004"');
  expect(text).not.toContain('$blob');

  await expect(
    env('task-7').run(activities.notify, { taskId: 'task-7', agent: 'demo', level: 'confirm' as const, code: 'approval_requested', message, scope: 'task-8/first-run' }),
  ).resolves.toBeUndefined();
  // Refused scope: the notice still goes out, saying the arguments cannot be read here.
  expect(JSON.parse(received.at(-1)!).text).toMatch(/not readable here: a notice for task task-7 named the scope of another task/);
});
