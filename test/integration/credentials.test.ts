/**
 * Credentials that never enter history, end to end on a real dev server: the value is put in the
 * vault with `durable-agent vault set` (on stdin), a `durable-agent worker` child process resolves
 * it at each tool call and its tools prove they got it (a local service checks the bearer token);
 * then the whole history (raw bytes and decoded payloads, every run), every blob, the `export`
 * file, the worker's logs (stderr at DEBUG and its log file), the spans it exports and the vault file hold no trace of
 * it. Revoking mid-task stops the next call, classified, and blocks the task with the command that
 * fixes it; `vault set` and an unblock let it go on. An MCP server over Streamable HTTP gets its
 * Authorization header from the vault the same way, at each request.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { answer, callTool, parsedResults, spawnWorker, statusWhen, toolResultsOf, useHarness } from '../support/harness';
import { cliIn } from '../support/cli-in-process';
import { runCliWithInput, waitFor } from '../support/processes';
import { CREDENTIAL_AGENT, ENCODED_CREDENTIAL_AGENT } from '../support/credential-agents';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { defineAgent } from '../../src/agents/define-agent';
import { createKeyring } from '../../src/codec';
import { FileVault, OAUTH_GRANT_TYPE, Vault } from '../../src/vault';
import { defineTool } from '../../src/tools/define-tool';
import { ToolFailure } from '../../src/errors/tool-failure';
import { CLIENT_ID, CLIENT_SECRET, startOAuthServer } from '../support/oauth-server';
import { historyTexts, leaks } from '../support/secret-search';
import { startCollector } from '../support/otlp-collector';
import { ATTR } from '../../src/telemetry';
import { createDecisionSigner, generateSecretKey } from '../../src/approvers';
import { TaskClient } from '../../src/client/task-client';

jest.setTimeout(240_000);

const tag = randomBytes(6).toString('hex');
const SECRET = `ghp_FIRST${tag}${randomBytes(8).toString('hex')}`;
const SECOND = `ghp_SECOND${tag}${randomBytes(8).toString('hex')}`;

const h = useHarness();
let vaultDir: string;
let home: string;
let worker: ChildProcess;
let workerOutput = '';
let collector: Awaited<ReturnType<typeof startCollector>>;
let service: Server;
/** The tokens the service accepts, and every authorized request it served (method, token's name). */
const accepted = new Map<string, string>();
const served: { method: string; token: string }[] = [];
const refused: number[] = [];

function env(): NodeJS.ProcessEnv {
  return { DURABLE_AGENT_VAULT: `file:${vaultDir}`, DURABLE_AGENT_HOME: home };
}

/** `durable-agent vault ACTION NAME`, the value (if any) written to its stdin, as an operator would pipe it. */
const vaultCli = (args: string[], value?: string) => runCliWithInput(['vault', ...args], value ?? '', env());

beforeAll(async () => {
  vaultDir = path.join(h.tmpDir, 'vault');
  home = path.join(h.tmpDir, 'home');
  mkdirSync(home, { recursive: true });
  service = createServer((req, res) => {
    const token = /^Bearer (.*)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
    const name = accepted.get(token);
    if (!name) {
      refused.push(Date.now());
      res.writeHead(401).end('{"error":"bad token"}');
      return;
    }
    served.push({ method: req.method!, token: name });
    const repo = decodeURIComponent(req.url!.split('/').pop()!);
    // A long readme: the result travels as a blob, so the blob store is searched too.
    const readme = repo.endsWith('-docs') ? 'Widgets are small. '.repeat(400) : undefined;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ repo, stars: 42, by: name, ...(readme ? { readme } : {}) }));
  });
  await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(service.address() as AddressInfo).port}`;
  // The worker exports its spans to a collector on loopback, searched like the rest.
  collector = await startCollector();
  worker = spawnWorker(h, ['--agents', path.join(__dirname, '../support/credential-agents.ts'), '--verbose'], {
    ...env(),
    CREDENTIAL_SERVICE_URL: url,
    DURABLE_AGENT_LOG_LEVEL: 'DEBUG',
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_SERVICE_NAME: 'credentials-test',
    OTEL_BSP_SCHEDULE_DELAY: '20',
  });
  worker.stdout!.on('data', (d) => (workerOutput += d));
  worker.stderr!.on('data', (d) => (workerOutput += d));
});

afterAll(async () => {
  if (worker && worker.exitCode === null) {
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    worker.kill('SIGTERM');
    await exited;
  }
  await new Promise((resolve) => service?.close(resolve));
  await collector?.close();
});

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name));
}

test('a tool gets the credential at its call and proves it; history, blobs, export, logs, exported spans and the vault file hold none of it', async () => {
  accepted.set(SECRET, 'first');
  const set = await vaultCli(['set', 'github-token'], `${SECRET}\n`);
  expect(set).toMatchObject({ code: 0 });
  expect(set.stdout).toMatch(/^set github-token: version 1/);
  const taskId = h.taskId('cred');
  const script = h.script([
    callTool('fetch_repo', { repo: 'acme/widgets' }),
    callTool('fetch_repo', { repo: 'acme/widgets-docs' }),
    callTool('leaky_echo', {}),
    callTool('leaky_echo', { fail: true }),
    answer('The repository has 42 stars.'),
  ]);
  await h.client.start({ agent: CREDENTIAL_AGENT, prompt: 'How many stars has acme/widgets?', model: { provider: 'scripted', script } }, { taskId });
  expect(await h.client.result(taskId)).toMatchObject({ outcome: 'answered', text: 'The repository has 42 stars.' });

  // The worker said at start which tool gets which credential (clock names none; leaky_url gets the agent-wide default).
  expect(workerOutput).toContain('worker: agent gh-bot credentials: github -> fetch_repo, push_change, leaky_echo\n');
  expect(workerOutput).toContain('worker: agent gh-encoded credentials: token -> (all tools)\n');
  // The tool had the value: the service saw the right bearer token.
  expect(served).toEqual([
    { method: 'GET', token: 'first' },
    { method: 'GET', token: 'first' },
  ]);
  const transcript = await h.client.transcript(taskId);
  const results = parsedResults(transcript);
  expect(results[0]).toEqual({ repo: 'acme/widgets', stars: 42, by: 'first' });
  // What a careless tool sent back was replaced before it reached history.
  expect(results[2]).toEqual({ echoed: 'my token is [credential github]' });
  expect(toolResultsOf(transcript)[3]!.content).toContain('the upstream refused token [credential github]');

  const exported = path.join(h.tmpDir, `${taskId}.json`);
  const exportRun = await cliIn(h, 'export', taskId, '--out', exported);
  expect(exportRun.code).toBe(0);
  const blobs = filesUnder(path.join(h.tmpDir, 'blobs'));
  expect(blobs.length).toBeGreaterThan(0);
  const logFiles = filesUnder(path.join(home, 'logs'));
  expect(logFiles.length).toBeGreaterThan(0);
  expect(workerOutput).toMatch(/DEBUG|INFO/);
  const history = await historyTexts(h, taskId);
  // The spans of the task's tool calls have reached the collector (they are searched below).
  await waitFor(
    'the tool-call spans to be exported',
    () => collector.spans.filter((sp) => sp.attributes[ATTR.taskId] === taskId && sp.name === 'ToolCall:fetch_repo').length === 2 || undefined,
    60_000,
  );
  // The searches see what is there: the task's own words are found where they travel.
  expect(history.some((t) => t.includes('acme/widgets'))).toBe(true);
  expect(blobs.some((f) => readFileSync(f, 'latin1').includes('Widgets are small.'))).toBe(true);
  expect(readFileSync(exported, 'utf8')).toContain('[credential github]');
  const found = [
    ...leaks('history', history, [SECRET]),
    ...leaks(
      'blobs',
      blobs.map((f) => readFileSync(f, 'latin1')),
      [SECRET],
    ),
    ...leaks('export', [readFileSync(exported, 'utf8'), exportRun.out, exportRun.err], [SECRET]),
    ...leaks('worker logs', [workerOutput, ...logFiles.map((f) => readFileSync(f, 'utf8'))], [SECRET]),
    ...leaks('exported spans', collector.bodies, [SECRET]),
    ...leaks(
      'vault file',
      filesUnder(vaultDir)
        .filter((f) => !f.endsWith('vault.key'))
        .map((f) => readFileSync(f, 'utf8')),
      [SECRET],
    ),
    ...leaks('vault list', [(await vaultCli(['list', '--json'])).stdout], [SECRET]),
  ];
  expect(found).toEqual([]);
});

test("a tool's error URL carries the token percent-encoded (a token with + / =), its output carries it form-encoded, in a Basic header, JSON, base64url and hex: no encoding of it is found anywhere", async () => {
  // A token with the characters a URL encodes: exactly matched, it would reach history as %2B %2F %3D.
  const TOKEN = `enc_${randomBytes(9).toString('base64')}+/=${randomBytes(6).toString('hex')}==`;
  expect(encodeURIComponent(TOKEN)).not.toContain(TOKEN);
  expect((await vaultCli(['set', 'encoded-token'], TOKEN)).code).toBe(0);
  const taskId = h.taskId('cred-encoded');
  const script = h.script([callTool('leaky_url', { fail: true }), callTool('leaky_url', {}), answer('The upstream refused the token.')]);
  await h.client.start({ agent: ENCODED_CREDENTIAL_AGENT, prompt: 'Call the upstream.', model: { provider: 'scripted', script } }, { taskId });
  expect(await h.client.result(taskId)).toMatchObject({ outcome: 'answered', text: 'The upstream refused the token.' });

  // The tool did hold the token, and each encoding of it was replaced before it reached history.
  const results = parsedResults(await h.client.transcript(taskId));
  expect(results[0]).toMatchObject({ error: { code: 'unauthorized', detail: 'GET https://api.example.test/repos/acme/widgets?access_token=[credential token]&page=2 answered 401' } });
  expect(results[1]).toMatchObject({
    form: 'grant_type=client_credentials&client_secret=[credential token]',
    basic: expect.stringContaining('[credential token]'),
    json: '{"token":"[credential token]"}',
    base64url: '[credential token]',
    hex: '[credential token]',
    HEX: '[credential token]',
  });
  const exported = path.join(h.tmpDir, `${taskId}.json`);
  const exportRun = await cliIn(h, 'export', taskId, '--out', exported);
  expect(exportRun.code).toBe(0);
  const history = await historyTexts(h, taskId);
  expect(history.some((t) => t.includes('api.example.test'))).toBe(true);
  await waitFor(
    'the tool-call spans to be exported',
    () => collector.spans.filter((sp) => sp.attributes[ATTR.taskId] === taskId && sp.name === 'ToolCall:leaky_url').length === 2 || undefined,
    60_000,
  );
  const found = [
    ...leaks('history', history, [TOKEN]),
    ...leaks(
      'blobs',
      filesUnder(path.join(h.tmpDir, 'blobs')).map((f) => readFileSync(f, 'latin1')),
      [TOKEN],
    ),
    ...leaks('export', [readFileSync(exported, 'utf8'), exportRun.out, exportRun.err], [TOKEN]),
    ...leaks('worker logs', [workerOutput, ...filesUnder(path.join(home, 'logs')).map((f) => readFileSync(f, 'utf8'))], [TOKEN]),
    ...leaks('exported spans', collector.bodies, [TOKEN]),
  ];
  expect(found).toEqual([]);
});

test('revoked mid-task: the next call fails classified and the task blocks with `vault set`; set again and unblocked, it goes on', async () => {
  accepted.set(SECRET, 'first');
  accepted.set(SECOND, 'second');
  served.length = 0;
  expect((await vaultCli(['set', 'github-token'], SECRET)).code).toBe(0);
  const taskId = h.taskId('revoke');
  const script = h.script([
    callTool('fetch_repo', { repo: 'acme/widgets' }),
    callTool('push_change', { repo: 'acme/widgets' }),
    callTool('clock', {}),
    callTool('push_change', { repo: 'acme/widgets', note: 'again' }),
    answer('Pushed.'),
  ]);
  await h.client.start({ agent: CREDENTIAL_AGENT, prompt: 'Push a change to acme/widgets.', model: { provider: 'scripted', script } }, { taskId });
  // The write waits for a person; meanwhile the credential is revoked.
  const waiting = await statusWhen(h, taskId, (s) => s.pendingApprovals.length === 1);
  expect(served).toEqual([{ method: 'GET', token: 'first' }]);
  const revoked = await vaultCli(['revoke', 'github-token']);
  expect(revoked).toMatchObject({ code: 0 });
  expect(revoked.stdout).toMatch(/^revoked github-token: version \d+/);
  await h.client.approve(taskId, { approvalId: waiting.pendingApprovals[0]!.id, by: 'ana' });

  const blocked = await statusWhen(h, taskId, (s) => s.agentStatus === 'blocked');
  expect(blocked.lastError).toMatchObject({ error_class: 'resource', code: 'credential_revoked', retryable: false, attempts: 1 });
  expect(blocked.blocked?.reason).toMatch(
    /push_change: Credential "github" \(vault:github-token\): vault entry github-token was revoked at .*A person must run `durable-agent vault set github-token`, then unblock the task\./,
  );
  // The revoked call never reached the service.
  expect(served).toEqual([{ method: 'GET', token: 'first' }]);

  expect((await vaultCli(['set', 'github-token'], SECOND)).code).toBe(0);
  await h.client.unblock(taskId, { by: 'ana', message: 'credential set again' });
  const again = await statusWhen(h, taskId, (s) => s.pendingApprovals.length === 1);
  await h.client.approve(taskId, { approvalId: again.pendingApprovals[0]!.id, by: 'ana' });
  expect(await h.client.result(taskId)).toMatchObject({ outcome: 'answered', text: 'Pushed.' });
  // The new value reached the next call: resolution happens per call.
  expect(served).toEqual([
    { method: 'GET', token: 'first' },
    { method: 'POST', token: 'second' },
  ]);
  const results = parsedResults(await h.client.transcript(taskId));
  expect(results[1]).toMatchObject({ error: { code: 'credential_revoked' } });
  expect(results[2]).toMatchObject({ now: expect.any(String) });
  expect(leaks('history', await historyTexts(h, taskId), [SECRET, SECOND])).toEqual([]);
});

test('a read blocked on a revoked credential runs again after `vault set` and unblock: the fixed cause clears its refusal (issue 49)', async () => {
  accepted.set(SECRET, 'first');
  accepted.set(SECOND, 'second');
  served.length = 0;
  expect((await vaultCli(['set', 'github-token'], SECRET)).code).toBe(0);
  expect((await vaultCli(['revoke', 'github-token'])).code).toBe(0);
  const taskId = h.taskId('revoked-read');
  // The model asks for the same read again after the unblock, as the docs tell it it may.
  const script = h.script([callTool('fetch_repo', { repo: 'acme/widgets' }), callTool('fetch_repo', { repo: 'acme/widgets' }), answer('Read it.')]);
  await h.client.start({ agent: CREDENTIAL_AGENT, prompt: 'Read acme/widgets.', model: { provider: 'scripted', script } }, { taskId });
  const blocked = await statusWhen(h, taskId, (s) => s.agentStatus === 'blocked');
  expect(blocked.lastError).toMatchObject({ error_class: 'resource', code: 'credential_revoked' });
  expect(served).toEqual([]);

  expect((await vaultCli(['set', 'github-token'], SECOND)).code).toBe(0);
  await h.client.unblock(taskId, { by: 'ana', message: 'credential set again' });
  expect(await h.client.result(taskId)).toMatchObject({ outcome: 'answered', text: 'Read it.' });
  // Run once more with the new value, not refused as repeated_failed_call, no loop_detected.
  expect(served).toEqual([{ method: 'GET', token: 'second' }]);
  const results = parsedResults(await h.client.transcript(taskId));
  expect(results[0]).toMatchObject({ error: { code: 'credential_revoked' } });
  expect(results[1]?.error).toBeUndefined();
});

test("an MCP server's Authorization comes from the vault at each request: a revoked token blocks the next call", async () => {
  const TOKEN = `mcp_${randomBytes(12).toString('hex')}`;
  const seen: string[] = [];
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const http = createServer(async (req, res) => {
    seen.push(req.headers.authorization === `Bearer ${TOKEN}` ? 'ok' : 'refused');
    if (req.headers.authorization !== `Bearer ${TOKEN}`) return void res.writeHead(401).end();
    let body = '';
    for await (const chunk of req) body += chunk;
    const parsed = body ? JSON.parse(body) : undefined;
    const known = sessions.get(String(req.headers['mcp-session-id'] ?? ''));
    if (known) return void (await known.handleRequest(req, res, parsed));
    const server = new McpServer({ name: 'repos', version: '1.0.0' });
    server.registerTool('whoami', { description: 'Who the token is.', inputSchema: {}, annotations: { readOnlyHint: true } }, async () => ({ content: [{ type: 'text', text: 'the repo bot' }] }));
    // No annotations: destructive, so it waits for a person (and the test revokes the token meanwhile).
    server.registerTool('push', { description: 'Push.', inputSchema: { note: z.string().optional() } }, async () => ({ content: [{ type: 'text', text: 'pushed' }] }));
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => void sessions.set(id, transport) });
    await server.connect(transport);
    await transport.handleRequest(req, res, parsed);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
    const vault = new Vault(new FileVault(path.join(h.tmpDir, 'mcp-vault'), createKeyring([{ id: 'k', key: randomBytes(32) }])), {});
    await vault.set('repos-token', TOKEN);
    const agent = defineAgent({ name: 'mcp-auth', system: 'Repos.', tools: [], mcpServers: [{ name: 'repos', url, trust: 'trusted', authorization: 'vault:repos-token' }] });
    const taskId = h.taskId('mcp-auth');
    const script = h.script([callTool('repos__whoami', {}), callTool('repos__push', {}), callTool('repos__push', { note: 'again' }), answer('done')]);
    // A queue of its own: the `durable-agent worker` of the tests above polls the harness's queue.
    const taskQueue = `${h.taskQueue}-mcp`;
    const worker = await h.worker([agent], { vault, taskQueue });
    await worker.runUntil(async () => {
      await h.client.start({ agent: 'mcp-auth', prompt: 'Who are you?', model: { provider: 'scripted', script } }, { taskId, taskQueue });
      const waiting = await statusWhen(h, taskId, (s) => s.pendingApprovals.length === 1, 60_000);
      expect(seen).toContain('ok');
      await vault.revoke('repos-token');
      await h.client.approve(taskId, { approvalId: waiting.pendingApprovals[0]!.id, by: 'ops' });
      const blocked = await statusWhen(h, taskId, (s) => s.agentStatus === 'blocked', 60_000);
      expect(blocked.lastError).toMatchObject({ error_class: 'resource', code: 'credential_revoked' });
      expect(blocked.blocked?.reason).toMatch(/The Authorization of MCP server "repos" \(vault:repos-token\): vault entry repos-token was revoked .*`durable-agent vault set repos-token`/);
      await vault.set('repos-token', TOKEN);
      await h.client.unblock(taskId, { by: 'ops' });
      const again = await statusWhen(h, taskId, (s) => s.pendingApprovals.length === 1, 60_000);
      await h.client.approve(taskId, { approvalId: again.pendingApprovals[0]!.id, by: 'ops' });
      expect(await h.client.result(taskId)).toMatchObject({ outcome: 'answered', text: 'done' });
    });
    expect(seen.length).toBeGreaterThan(2);
    expect(seen).not.toContain('refused');
    expect(leaks('history', await historyTexts(h, taskId), [TOKEN])).toEqual([]);
  } finally {
    await Promise.all([...sessions.values()].map((t) => t.close()));
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
  }
});

test('an OAuth grant in the vault: each call gets an access token the resource server accepts; a revoked grant blocks with auth_revoked', async () => {
  // Tokens of 1 s are inside the refresh skew: every call refreshes, so revoking reaches the next call.
  const oauth = await startOAuthServer({ expiresInS: 1 });
  const api = createServer((req, res) => {
    const token = /^Bearer (.*)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
    if (!oauth.isValid(token)) return void res.writeHead(401).end();
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true }));
  });
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  try {
    const apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
    const vault = new Vault(new FileVault(path.join(h.tmpDir, 'oauth-vault'), createKeyring([{ id: 'k', key: randomBytes(32) }])), {});
    const grant = () => JSON.stringify({ type: OAUTH_GRANT_TYPE, token_url: oauth.tokenUrl, client_id: CLIENT_ID, client_secret: CLIENT_SECRET, refresh_token: oauth.grant() });
    await vault.set('gh-oauth', grant());
    const call = (name: string, effect: 'read' | 'write') =>
      defineTool({
        name,
        description: `${name} on the API.`,
        input: z.object({ note: z.string().optional() }),
        output: z.object({ ok: z.boolean() }),
        effect,
        idempotent: effect === 'read',
        cacheTtlMs: 0,
        credentials: ['github'],
        run: async (_input, ctx) => {
          const res = await fetch(apiUrl, { headers: { authorization: `Bearer ${ctx.credentials?.github}` } });
          if (res.status === 401) throw new ToolFailure('permanent', 'unauthorized', 'the API refused the token');
          return res.text();
        },
      });
    const agent = defineAgent({ name: 'oauth-bot', system: 'API.', tools: [call('read_api', 'read'), call('write_api', 'write')], credentials: { github: 'vault:gh-oauth' } });
    const taskId = h.taskId('oauth');
    const script = h.script([callTool('read_api', {}), callTool('write_api', {}), callTool('write_api', { note: 'again' }), answer('done')]);
    const taskQueue = `${h.taskQueue}-oauth`;
    const worker = await h.worker([agent], { vault, taskQueue });
    await worker.runUntil(async () => {
      await h.client.start({ agent: 'oauth-bot', prompt: 'Use the API.', model: { provider: 'scripted', script } }, { taskId, taskQueue });
      const waiting = await statusWhen(h, taskId, (s) => s.pendingApprovals.length === 1, 60_000);
      expect(parsedResults(await h.client.transcript(taskId))[0]).toEqual({ ok: true });
      oauth.revoke();
      await h.client.approve(taskId, { approvalId: waiting.pendingApprovals[0]!.id, by: 'ops' });
      const blocked = await statusWhen(h, taskId, (s) => s.agentStatus === 'blocked', 60_000);
      expect(blocked.lastError).toMatchObject({ error_class: 'resource', code: 'auth_revoked' });
      expect(blocked.blocked?.reason).toMatch(/write_api: Credential "github" \(vault:gh-oauth\): the token endpoint refused the OAuth grant \(invalid_grant\).*`durable-agent vault set gh-oauth`/);
      // A person authorizes again.
      await vault.set('gh-oauth', grant());
      await h.client.unblock(taskId, { by: 'ops' });
      const again = await statusWhen(h, taskId, (s) => s.pendingApprovals.length === 1, 60_000);
      await h.client.approve(taskId, { approvalId: again.pendingApprovals[0]!.id, by: 'ops' });
      expect(await h.client.result(taskId)).toMatchObject({ outcome: 'answered', text: 'done' });
      expect(parsedResults(await h.client.transcript(taskId))[2]).toMatchObject({ result: { ok: true } });
    });
    expect(oauth.issued.length).toBeGreaterThanOrEqual(2);
    expect(new Set(oauth.sent).size).toBe(oauth.sent.length);
    expect(leaks('history', await historyTexts(h, taskId), [...oauth.issued, ...oauth.sent, CLIENT_SECRET])).toEqual([]);
  } finally {
    await new Promise((resolve) => api.close(resolve));
    await oauth.close();
  }
});

test("a verified starter's own credential, else the agent's; an unverified claim never gets a person's; a fork acts for whoever forks it; status says whose", async () => {
  const AGENT_TOKEN = `agt_${randomBytes(12).toString('hex')}`;
  const ANA_TOKEN = `ana_${randomBytes(12).toString('hex')}`;
  const BOB_ELSEWHERE = `bob_${randomBytes(12).toString('hex')}`;
  const tokens = new Map([
    [AGENT_TOKEN, 'agent'],
    [ANA_TOKEN, 'ana'],
  ]);
  const bearers: string[] = [];
  const api = createServer((req, res) => {
    const token = /^Bearer (.*)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
    const who = tokens.get(token);
    bearers.push(who ?? 'refused');
    if (!who) return void res.writeHead(401).end();
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ as: who }));
  });
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  try {
    const apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
    const vault = new Vault(new FileVault(path.join(h.tmpDir, 'person-vault'), createKeyring([{ id: 'k', key: randomBytes(32) }])), {});
    await vault.set('api-token', AGENT_TOKEN);
    await vault.set('api-token', ANA_TOKEN, { person: 'ana' });
    // Bob's own entry of another credential: it is not this tool's, so bob's calls run with the agent's.
    await vault.set('other-token', BOB_ELSEWHERE, { person: 'bob' });
    const whoami = defineTool({
      name: 'whoami',
      description: 'Who the API thinks we are.',
      input: z.object({}),
      output: z.object({ as: z.string() }),
      effect: 'read',
      idempotent: true,
      cacheTtlMs: 0,
      credentials: ['api'],
      run: async (_input, ctx) => {
        const res = await fetch(apiUrl, { headers: { authorization: `Bearer ${ctx.credentials?.api}` } });
        if (res.status === 401) throw new ToolFailure('permanent', 'unauthorized', 'the API refused the token');
        return res.json();
      },
    });
    const agent = defineAgent({ name: 'per-person', system: 'API.', tools: [whoami], credentials: { api: 'vault:api-token', other: 'vault:other-token' } });
    const signer = createDecisionSigner('front-person', generateSecretKey());
    const taskQueue = `${h.taskQueue}-person`;
    const signed = new TaskClient(h.client.client, taskQueue, signer);
    const worker = await h.worker([agent], { vault, taskQueue, approverKeys: [signer.trustedKey()] });
    const run = async (client: TaskClient, startedBy: string) => {
      const taskId = h.taskId(`person-${startedBy}`);
      const script = h.script([callTool('whoami', {}), answer('done')]);
      await client.start({ agent: 'per-person', prompt: 'Who am I?', startedBy, model: { provider: 'scripted', script } }, { taskId, taskQueue });
      expect(await h.client.result(taskId)).toMatchObject({ outcome: 'answered', text: 'done' });
      const status = await h.client.status(taskId);
      const succeeded = status.events.filter((e) => e.kind === 'tool_succeeded' && e.tool === 'whoami');
      const text = await cliIn(h, 'status', taskId);
      return { taskId, answer: parsedResults(await h.client.transcript(taskId))[0], starter: status.starter, credentialsOf: succeeded.map((e) => e.credentialsOf), text: text.out };
    };
    await worker.runUntil(async () => {
      const ana = await run(signed, 'ana');
      expect(ana).toMatchObject({ answer: { as: 'ana' }, starter: { id: 'ana', verified: true }, credentialsOf: ['ana'] });
      expect(ana.text).toContain('[credentials of ana]');
      const bob = await run(signed, 'bob');
      expect(bob).toMatchObject({ answer: { as: 'agent' }, starter: { id: 'bob', verified: true }, credentialsOf: ['agent'] });
      expect(bob.text).toContain("[the agent's credentials]");
      // Claimed, not signed: the claim selects nobody's credential.
      const claimed = await run(new TaskClient(h.client.client, taskQueue), 'ana');
      expect(claimed).toMatchObject({ answer: { as: 'agent' }, starter: { id: 'ana', verified: false }, credentialsOf: ['agent'] });
      expect(bearers).toEqual(['ana', 'agent', 'agent']);
      for (const task of [ana, bob, claimed]) expect(leaks(`history of ${task.taskId}`, await historyTexts(h, task.taskId), [AGENT_TOKEN, ANA_TOKEN, BOB_ELSEWHERE])).toEqual([]);

      // A fork acts for whoever forks it: ana's fork of her task keeps her credential; bob's fork of
      // the same task, or a fork nobody signed, never gets it.
      const forkBy = async (client: TaskClient, by: string) => {
        const script = h.script([answer('not played: the fork starts after turn 1'), callTool('whoami', {}), answer('forked')]);
        const fork = await client.fork(ana.taskId, 1, { startedBy: by, model: { provider: 'scripted', script } });
        expect(await h.client.result(fork.taskId)).toMatchObject({ outcome: 'answered', text: 'forked' });
        const status = await h.client.status(fork.taskId);
        const calls = status.events.filter((e) => e.kind === 'tool_succeeded' && e.tool === 'whoami');
        return { starter: status.starter, credentialsOf: calls.at(-1)?.credentialsOf, history: await historyTexts(h, fork.taskId) };
      };
      expect(await forkBy(signed, 'ana')).toMatchObject({ starter: { id: 'ana', verified: true }, credentialsOf: 'ana' });
      expect(await forkBy(signed, 'bob')).toMatchObject({ starter: { id: 'bob', verified: true }, credentialsOf: 'agent' });
      const unsigned = await forkBy(new TaskClient(h.client.client, taskQueue), 'ana');
      expect(unsigned).toMatchObject({ starter: { id: 'ana', verified: false }, credentialsOf: 'agent' });
      expect(bearers).toEqual(['ana', 'agent', 'agent', 'ana', 'agent', 'agent']);
      expect(leaks('history of a fork', unsigned.history, [AGENT_TOKEN, ANA_TOKEN, BOB_ELSEWHERE])).toEqual([]);
    });
  } finally {
    await new Promise((resolve) => api.close(resolve));
  }
});
