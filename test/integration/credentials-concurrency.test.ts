/**
 * Fifty concurrent tasks, one expiring OAuth credential (issue 41): the tasks' tools all read the
 * same grant at about the same time, on two workers (each with its own Vault over the same file
 * vault, as two worker processes would be), while the stored access token is about to expire. The
 * token endpoint must see exactly one refresh (one caller per worker process by its in-flight
 * promise, one across them by the lease), every call must succeed with a token the API accepts, and
 * no access token, refresh token or client secret may appear in any task's history.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { NativeConnection } from '@temporalio/worker';
import { z } from 'zod';
import { defineAgent } from '../../src/agents/define-agent';
import { createKeyring } from '../../src/codec';
import { ToolFailure } from '../../src/errors/tool-failure';
import { defineTool } from '../../src/tools/define-tool';
import { FileVault, OAUTH_GRANT_TYPE, Vault } from '../../src/vault';
import { answer, callTool, parsedResults, runInBackground, useHarness } from '../support/harness';
import { CLIENT_ID, CLIENT_SECRET, startOAuthServer } from '../support/oauth-server';
import { historyTexts, leaks } from '../support/secret-search';

jest.setTimeout(180_000);

const TASKS = 50;
const h = useHarness();

test(`${TASKS} concurrent tasks on two workers, one expiring OAuth credential: one refresh, no failed call, no token in history`, async () => {
  // The token endpoint is slow enough that every task's call arrives while the refresh is running.
  const oauth = await startOAuthServer({ expiresInS: 3600, delayMs: 500 });
  const accepted: string[] = [];
  const acceptedPaths = new Set<string>();
  const refused: string[] = [];
  const api = createServer((req, res) => {
    const token = /^Bearer (.*)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
    if (!oauth.isValid(token)) {
      refused.push(req.url ?? '');
      return void res.writeHead(401).end();
    }
    accepted.push(token);
    acceptedPaths.add(req.url ?? '');
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true }));
  });
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  const started = Date.now();
  try {
    const apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
    const dir = path.join(h.tmpDir, 'soak-vault');
    const keyring = createKeyring([{ id: 'k', key: randomBytes(32) }]);
    // An access token the endpoint never issued, 5 s from expiry: inside the refresh skew, so the first call refreshes.
    const stale = `at_stale_${randomBytes(12).toString('hex')}`;
    const refreshToken = oauth.grant();
    await new Vault(new FileVault(dir, keyring), {}).set(
      'api-oauth',
      JSON.stringify({
        type: OAUTH_GRANT_TYPE,
        token_url: oauth.tokenUrl,
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        refresh_token: refreshToken,
        access_token: stale,
        expires_at: Date.now() + 5_000,
      }),
    );
    // Each worker's tool says which worker ran it (the agent is the same: same name, tools and manifest).
    const servedBy = { first: 0, second: 0 };
    const callApiOn = (workerName: 'first' | 'second') =>
      defineTool({
        name: 'call_api',
        description: 'Calls the API.',
        input: z.object({ n: z.number() }),
        output: z.object({ ok: z.boolean() }),
        effect: 'read',
        idempotent: true,
        cacheTtlMs: 0,
        credentials: ['api'],
        run: async ({ n }, ctx) => {
          const res = await fetch(`${apiUrl}/${n}`, { headers: { authorization: `Bearer ${ctx.credentials?.api}` } });
          if (res.status === 401) throw new ToolFailure('permanent', 'unauthorized', 'the API refused the token');
          servedBy[workerName] += 1;
          return res.json();
        },
      });
    const agentOn = (workerName: 'first' | 'second') => defineAgent({ name: 'oauth-soak', system: 'API.', tools: [callApiOn(workerName)], credentials: { api: 'vault:api-oauth' } });
    const taskQueue = `${h.taskQueue}-soak`;
    // Two workers, each with a Vault of its own over the same file: like two worker processes.
    const workerOptions = { maxConcurrentActivityTaskExecutions: TASKS, maxConcurrentLocalActivityExecutions: TASKS };
    // The second on a connection of its own: one connection may not register two workers of one queue and build.
    const second = await NativeConnection.connect({ address: h.server.address });
    const workers = [
      runInBackground(await h.worker([agentOn('first')], { vault: new Vault(new FileVault(dir, keyring), {}), taskQueue, workerOptions })),
      runInBackground(await h.worker([agentOn('second')], { vault: new Vault(new FileVault(dir, keyring), {}), taskQueue, workerOptions, connection: second })),
    ];
    const taskIds = Array.from({ length: TASKS }, (_, i) => h.taskId(`soak-${i}`));
    try {
      await Promise.all(
        taskIds.map((taskId, i) =>
          h.client.start(
            { agent: 'oauth-soak', prompt: 'Call the API.', model: { provider: 'scripted', script: h.script([callTool('call_api', { n: i }), answer(`done ${i}`)]) } },
            { taskId, taskQueue },
          ),
        ),
      );
      const results = await Promise.all(taskIds.map((taskId) => h.client.result(taskId)));
      expect(results).toEqual(taskIds.map((_, i) => expect.objectContaining({ outcome: 'answered', text: `done ${i}` })));
      for (const taskId of taskIds) {
        const status = await h.client.status(taskId);
        expect({ taskId, failed: status.toolCalls.failed, succeeded: status.toolCalls.succeeded }).toEqual({ taskId, failed: 0, succeeded: 1 });
        expect(parsedResults(await h.client.transcript(taskId))).toEqual([{ ok: true }]);
      }
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
      await second.close();
    }
    // One refresh for all fifty calls on both workers, no refused grant, no call refused by the API.
    expect({ refreshes: oauth.refreshes, sent: oauth.sent.length, refusals: oauth.refusals }).toEqual({ refreshes: 1, sent: 1, refusals: [] });
    expect(refused).toEqual([]);
    // Every task's read reached the API with an accepted token. A read may run twice when its heartbeat
    // reaches the server late on an overloaded machine (activity-options.ts, HEARTBEAT_TIMEOUT_MS): that
    // is a read's retry, and every execution must still carry the one refreshed token.
    expect([...acceptedPaths].sort()).toEqual(Array.from({ length: TASKS }, (_, i) => `/${i}`).sort());
    expect(accepted.length).toBe(servedBy.first + servedBy.second);
    // Both workers ran calls: the one refresh was shared across them, not only within one.
    expect(servedBy.first).toBeGreaterThan(0);
    expect(servedBy.second).toBeGreaterThan(0);
    expect(new Set(accepted)).toEqual(new Set(oauth.issued));
    const secrets = [stale, refreshToken, ...oauth.issued, ...oauth.sent, CLIENT_SECRET];
    const found: string[] = [];
    for (const taskId of taskIds) found.push(...leaks(`history of ${taskId}`, await historyTexts(h, taskId), secrets));
    expect(found).toEqual([]);
    expect(Date.now() - started).toBeLessThan(120_000);
  } finally {
    await new Promise((resolve) => api.close(resolve));
    await oauth.close();
  }
});
