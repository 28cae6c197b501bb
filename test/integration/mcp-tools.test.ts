/**
 * MCP servers' tools as durable, guarded, classified tool calls, on a real dev server with the
 * reference MCP servers from npm (launched as `node <bin js>`) and an SDK server over Streamable HTTP.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { defineAgent } from '../../src/agents/define-agent';
import { McpClientPool } from '../../src/mcp/pool';
import { renderView } from '../../src/cli/render';
import { useHarness, answer, callTool, parsedResults, spawnWorker, statusWhen, type Harness } from '../support/harness';
import { sigkill, waitFor } from '../support/processes';
import mcpAgents from '../support/mcp-agents';

jest.setTimeout(240_000);

const h = useHarness();

const spawned = new Set<ChildProcess>();
afterEach(async () => {
  await Promise.all([...spawned].map(sigkill));
  spawned.clear();
});

const agents = () => mcpAgents({ workspaceDir: h.workspaceDir });

async function start(agent: string, turns: Parameters<Harness['script']>[0]): Promise<string> {
  const taskId = h.taskId('mcp');
  await h.client.start({ agent, prompt: 'do it', model: { provider: 'scripted', script: h.script(turns) } }, { taskId });
  return taskId;
}

const pendingOf = async (taskId: string) => (await statusWhen(h, taskId, (s) => s.pendingApprovals.length > 0, 60_000)).pendingApprovals[0]!;

test('a task uses MCP tools: a trusted read-only tool runs at once, a write the policy allows runs, the tools are named <server>__<tool>', async () => {
  writeFileSync(path.join(h.workspaceDir, 'mcp-notes.txt'), 'durable agents finish what they start\n');
  const pool = new McpClientPool();
  const worker = await h.worker(agents(), { mcp: pool });
  const run = await worker.runUntil(async () => {
    const taskId = await start('mcp-files', [
      callTool('fs__read_text_file', { path: path.join(h.workspaceDir, 'mcp-notes.txt') }),
      callTool('memory__create_entities', { entities: [{ name: 'durable-agent', entityType: 'project', observations: ['finishes what it starts'] }] }),
      callTool('memory__read_graph', {}),
      answer('done'),
    ]);
    const result = await h.client.result(taskId);
    return { result, transcript: await h.client.transcript(taskId), status: await h.client.status(taskId) };
  });
  await pool.close();
  expect(run.result.outcome).toBe('answered');
  const [read, created, graph] = parsedResults(run.transcript);
  // server-filesystem promises structured content: the model reads it, validated against the tool's outputSchema.
  expect(JSON.stringify(read)).toContain('durable agents finish what they start');
  expect(JSON.stringify(created)).toContain('durable-agent');
  expect(JSON.stringify(graph)).toContain('finishes what it starts');
  expect(run.status.pendingApprovals).toHaveLength(0);
  expect(run.status.approvals).toHaveLength(0);
  expect(readFileSync(path.join(h.workspaceDir, 'memory.jsonl'), 'utf8')).toContain('durable-agent');
});

test('a destructive MCP tool waits for a person and runs once approved; a wrong argument type gets a model error and the corrected call succeeds', async () => {
  const target = path.join(h.workspaceDir, 'mcp-written.txt');
  const pool = new McpClientPool();
  const worker = await h.worker(agents(), { mcp: pool });
  const run = await worker.runUntil(async () => {
    const taskId = await start('mcp-files', [
      // `path` must be a string: a number is no forgivable slip.
      callTool('fs__read_text_file', { path: 42 }),
      callTool('fs__read_text_file', { path: path.join(h.workspaceDir, 'mcp-notes.txt'), head: '1' }),
      callTool('fs__write_file', { path: target, content: 'approved content' }),
      answer('written'),
    ]);
    const approval = await pendingOf(taskId);
    expect(approval.tool).toBe('fs__write_file');
    expect(approval.effect).toBe('destructive');
    expect(() => readFileSync(target)).toThrow();
    await h.client.approve(taskId, { approvalId: approval.id, by: 'ops' });
    const result = await h.client.result(taskId);
    return { result, transcript: await h.client.transcript(taskId) };
  });
  await pool.close();
  expect(run.result.outcome).toBe('answered');
  const [wrong, corrected, written] = parsedResults(run.transcript);
  expect(wrong!.error).toMatchObject({ error_class: 'model', code: 'invalid_arguments' });
  expect(wrong!.error!.detail).toContain('Field `path`: got 42; expected string');
  // "1" for a number is forgiven, as for zod tools.
  expect(corrected!.error).toBeUndefined();
  expect(JSON.stringify(corrected)).toContain('durable agents');
  expect(JSON.stringify(written)).toContain('approved_by');
  expect(readFileSync(target, 'utf8')).toBe('approved content');
});

test("a long tool's progress shows in status, and its server killed mid-call is restarted and the call retried to completion", async () => {
  const pool = new McpClientPool();
  const worker = await h.worker(agents(), { mcp: pool });
  const run = await worker.runUntil(async () => {
    const taskId = await start('mcp-everything', [callTool('everything__trigger-long-running-operation', { duration: 6, steps: 6 }), answer('finished')]);
    const view = await waitFor(
      'progress in the task view',
      async () => {
        const v = await h.client.view(taskId);
        return v.toolProgress?.length ? v : undefined;
      },
      60_000,
    );
    expect(view.toolProgress![0]).toMatchObject({ tool: 'everything__trigger-long-running-operation', total: 6 });
    expect(renderView(view)).toMatch(/progress\s+everything__trigger-long-running-operation \d\/6/);
    const { everything: pid } = await pool.pids();
    expect(pid).toBeDefined();
    process.kill(pid!, 'SIGKILL');
    const result = await h.client.result(taskId);
    return { result, transcript: await h.client.transcript(taskId), pidBefore: pid, pidAfter: (await pool.pids()).everything, history: await h.client.handle(taskId).fetchHistory() };
  });
  await pool.close();
  expect(run.result.outcome).toBe('answered');
  expect(JSON.stringify(parsedResults(run.transcript)[0])).toContain('Long running operation completed');
  // A new server process answered the retry.
  expect(run.pidAfter).toBeDefined();
  expect(run.pidAfter).not.toBe(run.pidBefore);
  const attempts = run.history.events!.filter((e) => e.activityTaskStartedEventAttributes).map((e) => e.activityTaskStartedEventAttributes!.attempt ?? 0);
  expect(Math.max(...attempts)).toBeGreaterThanOrEqual(2);
});

test("an MCP server's question (elicitation) is asked durably, answered by a person, and the call completes with the answer", async () => {
  const pool = new McpClientPool();
  const worker = await h.worker(agents(), { mcp: pool });
  const run = await worker.runUntil(async () => {
    const taskId = await start('mcp-everything', [callTool('everything__trigger-elicitation-request', {}), answer('thanks')]);
    const question = await pendingOf(taskId);
    expect(question.question).toMatchObject({ server: 'everything', message: expect.stringContaining('Please provide inputs') });
    expect(question.question!.requestedSchema).toMatchObject({ required: ['name'] });
    // An approval without the answer is refused before it touches history, and so is an answer of the wrong shape.
    await expect(h.client.approve(taskId, { approvalId: question.id, by: 'ada' })).rejects.toThrow(/question from everything.*editedInput/);
    await expect(h.client.approve(taskId, { approvalId: question.id, by: 'ada', editedInput: { name: 7 } })).rejects.toThrow(/name/);
    expect((await h.client.status(taskId)).pendingApprovals).toHaveLength(1);
    await h.client.approve(taskId, { approvalId: question.id, by: 'ada', editedInput: { name: 'Ada Lovelace', integer: '7' } });
    const result = await h.client.result(taskId);
    return { result, transcript: await h.client.transcript(taskId), status: await h.client.status(taskId), history: await h.client.handle(taskId).fetchHistory() };
  });
  await pool.close();
  expect(run.result.outcome).toBe('answered');
  const text = JSON.stringify(parsedResults(run.transcript)[0]);
  expect(text).toContain('Ada Lovelace');
  expect(text).not.toMatch(/declined|cancelled/i);
  expect(run.status.approvals[0]).toMatchObject({ decision: 'approved', by: 'ada' });
  // Asked without a patch marker: the workflow records none (docs/architecture.md, "Changing workflow code").
  expect(run.history.events!.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')).toEqual([]);
});

test('a worker SIGKILLed during an MCP call: the call resumes on another worker and the task completes', async () => {
  const child = spawnWorker(h, ['--agents', path.join(__dirname, '../support/mcp-agents.ts')]);
  spawned.add(child);
  const taskId = await start('mcp-everything', [callTool('everything__trigger-long-running-operation', { duration: 4, steps: 4 }), answer('survived')]);
  await waitFor('the call to report progress on the doomed worker', async () => ((await h.client.toolProgress(taskId)).length ? true : undefined), 120_000);
  await sigkill(child);
  const pool = new McpClientPool();
  const worker = await h.worker(agents(), { mcp: pool });
  const run = await worker.runUntil(async () => ({ result: await h.client.result(taskId), transcript: await h.client.transcript(taskId) }));
  await pool.close();
  expect(run.result.outcome).toBe('answered');
  expect(JSON.stringify(parsedResults(run.transcript)[0])).toContain('Long running operation completed');
});

describe('a Streamable HTTP server', () => {
  let http: Server;
  let url: string;
  const notes: string[] = [];
  /** Calls of `slow` the server saw cancelled (its handler's signal aborted by notifications/cancelled). */
  const cancelled: string[] = [];
  let slowStarted = false;
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  beforeAll(async () => {
    // One SDK server and transport per session, as the SDK's examples do.
    http = createServer(async (req, res) => {
      let body = '';
      for await (const chunk of req) body += chunk;
      const parsed = body ? JSON.parse(body) : undefined;
      const known = sessions.get(String(req.headers['mcp-session-id'] ?? ''));
      if (known) return void (await known.handleRequest(req, res, parsed));
      const server = new McpServer({ name: 'notes', version: '1.0.0' });
      server.registerTool('slow', { description: 'Takes a minute unless cancelled.', inputSchema: { id: z.string() } }, async ({ id }, extra) => {
        slowStarted = true;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 60_000);
          extra.signal.addEventListener('abort', () => {
            clearTimeout(timer);
            cancelled.push(id);
            resolve();
          });
        });
        return { content: [{ type: 'text', text: 'slow done' }] };
      });
      // No annotations at all: MCP's defaults make it destructive.
      server.registerTool('add_note', { description: 'Add a note.', inputSchema: { text: z.string() } }, async ({ text }) => {
        notes.push(text);
        return { content: [{ type: 'text', text: `added: ${text}` }] };
      });
      server.registerTool('count_notes', { description: 'Count the notes.', inputSchema: {}, annotations: { readOnlyHint: true } }, async () => ({
        content: [{ type: 'text', text: String(notes.length) }],
      }));
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void sessions.set(id, transport),
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, parsed);
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  });
  afterAll(async () => {
    await Promise.all([...sessions.values()].map((t) => t.close()));
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
  });

  test('an unannotated tool waits for approval; an untrusted read-only hint does not skip the person', async () => {
    const agent = defineAgent({ name: 'mcp-http', system: 'Notes.', tools: [], mcpServers: [{ name: 'notes', url }] });
    const pool = new McpClientPool();
    const worker = await h.worker([agent], { mcp: pool });
    const run = await worker.runUntil(async () => {
      const taskId = await start('mcp-http', [callTool('notes__add_note', { text: 'first' }), callTool('notes__count_notes', {}), answer('noted')]);
      const first = await pendingOf(taskId);
      expect(first).toMatchObject({ tool: 'notes__add_note', effect: 'destructive' });
      expect(notes).toEqual([]);
      await h.client.approve(taskId, { approvalId: first.id, by: 'ops' });
      // The server is not trusted: its readOnlyHint is not believed.
      const second = await statusWhen(h, taskId, (s) => s.pendingApprovals.some((a) => a.tool === 'notes__count_notes'), 60_000);
      await h.client.approve(taskId, { approvalId: second.pendingApprovals[0]!.id, by: 'ops' });
      return { result: await h.client.result(taskId), transcript: await h.client.transcript(taskId) };
    });
    await pool.close();
    expect(run.result.outcome).toBe('answered');
    expect(notes).toEqual(['first']);
    const [added, counted] = parsedResults(run.transcript);
    expect(JSON.stringify(added)).toContain('added: first');
    expect(JSON.stringify(counted)).toContain('1');
  });

  test('cancelling the task cancels the running MCP call: the server receives notifications/cancelled', async () => {
    // Your own effect for a tool wins over the untrusted server's silence: `slow` runs without asking.
    const agent = defineAgent({ name: 'mcp-http-slow', system: 'Slow.', tools: [], mcpServers: [{ name: 'notes', url, effects: { slow: 'read' } }] });
    const pool = new McpClientPool();
    const worker = await h.worker([agent], { mcp: pool });
    const outcome = await worker.runUntil(async () => {
      const taskId = await start('mcp-http-slow', [callTool('notes__slow', { id: 'c1' }), answer('never')]);
      await waitFor('the slow call to start on the server', () => (slowStarted ? true : undefined), 60_000);
      await h.client.cancel(taskId);
      await waitFor('the server to see the call cancelled', () => (cancelled.includes('c1') ? true : undefined), 60_000);
      return (await statusWhen(h, taskId, (st) => st.agentStatus === 'cancelled', 60_000)).result;
    });
    await pool.close();
    expect(cancelled).toEqual(['c1']);
    expect(outcome).toMatchObject({ outcome: 'cancelled' });
  });
});
