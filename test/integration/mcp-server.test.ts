/**
 * `durable-agent mcp` driven by the MCP SDK's own client over stdio, as Claude Code would: start a
 * task, read its status, find its pending approval, answer it and read the result, on a real dev
 * server with a worker.
 */
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createDemoAgent } from '../../src/demo/demo-agent';
import { createDecisionSigner, generateSecretKey } from '../../src/approvers';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { useHarness, answer, callTool, statusWhen } from '../support/harness';
import { waitFor } from '../support/processes';

const ROOT = path.resolve(__dirname, '../..');

const h = useHarness();
let stateDir: string;
beforeAll(async () => {
  stateDir = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-mcp-state-'));
});

/** An MCP client connected to a `durable-agent mcp` child process. */
async function mcpClient(extraArgs: string[], env: Record<string, string> = {}): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--require', 'tsx/cjs', path.join(ROOT, 'src/cli/main.ts'), 'mcp', '--address', h.server.address, '--task-queue', h.taskQueue, ...extraArgs],
    cwd: ROOT,
    // No state-dir key unless a test gives one: a stray key would make every decision signed.
    env: { ...(process.env as Record<string, string>), DURABLE_AGENT_LOG_LEVEL: 'ERROR', DURABLE_AGENT_HOME: stateDir, ...env },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'durable-agent-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}
const data = (r: CallToolResult) => r.structuredContent as Record<string, any>;
const text = (r: CallToolResult) => (r.content[0] as { text: string }).text;

test('an MCP client starts a task, sees its pending approval with the exact arguments, approves it, and reads the result', async () => {
  writeFileSync(path.join(h.workspaceDir, 'stale.log'), 'x');
  const script = h.script([callTool('delete_file', { path: 'stale.log' }), answer('removed stale.log')]);
  const taskId = h.taskId('mcp');
  const client = await mcpClient(['--as', 'alice']);
  const worker = await h.worker();
  try {
    const tools = (await client.listTools()).tools;
    expect(tools.map((t) => t.name).sort()).toEqual(['approve', 'deny', 'list_pending_approvals', 'start_task', 'task_result', 'task_status']);
    expect(tools.find((t) => t.name === 'task_status')!.annotations).toMatchObject({ readOnlyHint: true });
    expect(tools.find((t) => t.name === 'approve')!.annotations).toMatchObject({ destructiveHint: true });

    await worker.runUntil(async () => {
      const started = await call(client, 'start_task', { agent: 'demo', prompt: 'remove the stale log', script, task_id: taskId });
      expect(started.isError).toBeFalsy();
      expect(data(started)).toMatchObject({ task_id: taskId });
      await statusWhen(h, taskId, (s) => s.agentStatus === 'awaiting_approval');

      const status = data(await call(client, 'task_status', { task_id: taskId }));
      expect(status).toMatchObject({ agent_status: 'awaiting_approval', pending_approvals: [{ tool: 'delete_file', arguments: { path: 'stale.log' }, effect: 'destructive' }] });
      const approvalId = status.pending_approvals[0].approval_id as string;

      // Visibility is eventually consistent: the listing catches up with the status.
      const listed = await waitFor('the approval in list_pending_approvals', async () => {
        const all = data(await call(client, 'list_pending_approvals', {})).approvals as { task_id: string; approval_id: string }[];
        return all.find((a) => a.task_id === taskId);
      });
      expect(listed).toMatchObject({ approval_id: approvalId, tool: 'delete_file', arguments: { path: 'stale.log' } });

      const running = data(await call(client, 'task_result', { task_id: taskId }));
      expect(running).toMatchObject({ closed: false, agent_status: 'awaiting_approval' });
      expect(existsSync(path.join(h.workspaceDir, 'stale.log'))).toBe(true);

      const approved = await call(client, 'approve', { task_id: taskId, approval_id: approvalId, comment: 'ok from MCP' });
      expect(approved.isError).toBeFalsy();
      expect(data(approved)).toMatchObject({ outcome: 'applied', approvalId, decision: 'approved' });

      const result = data(await call(client, 'task_result', { task_id: taskId, wait_seconds: 30 }));
      expect(result).toMatchObject({ closed: true, result: { outcome: 'answered', text: 'removed stale.log' } });
      expect(existsSync(path.join(h.workspaceDir, 'stale.log'))).toBe(false);
      const decided = await h.client.status(taskId);
      expect(decided.approvals[0]).toMatchObject({ decision: 'approved', comment: 'ok from MCP' });
      expect(String(decided.approvals[0]!.by)).toContain('alice');

      const again = await call(client, 'approve', { task_id: taskId, approval_id: approvalId });
      expect(again.isError).toBe(true);
      expect(text(again)).toContain('completed');
    });
  } finally {
    await client.close();
  }
});

test('wrong input is refused as a tool error the calling model can read, and a server without --as answers no approvals', async () => {
  const client = await mcpClient([]);
  try {
    const missing = await call(client, 'task_status', { task_id: 'no-such-task-here' });
    expect(missing.isError).toBe(true);
    expect(text(missing)).toContain('no-such-task-here');

    const badArgs = await call(client, 'start_task', { agent: 'demo' });
    expect(badArgs.isError).toBe(true);
    expect(text(badArgs)).toMatch(/prompt/);

    const anonymous = await call(client, 'approve', { task_id: 'any', approval_id: 'any' });
    expect(anonymous.isError).toBe(true);
    expect(text(anonymous)).toContain('without --as NAME');
  } finally {
    await client.close();
  }
});

test('on a worker that verifies approvers, the server signs with its key: its approve is recorded as verified; the same server without the key is refused and the approval stays pending', async () => {
  const secret = generateSecretKey();
  const signer = createDecisionSigner('mcp-test', secret);
  const agent = createDemoAgent({ workspaceDir: h.workspaceDir, ordersUrl: h.orders.url, policy: { destructive: 'confirm', approvers: { destructive: ['role:ops'] } } });
  const worker = await h.worker([agent], { approverKeys: [signer.trustedKey()] });
  writeFileSync(path.join(h.workspaceDir, 'signed.log'), 'x');
  const script = h.script([callTool('delete_file', { path: 'signed.log' }), answer('removed signed.log')]);
  const taskId = h.taskId('mcp-signed');
  const unsigned = await mcpClient(['--as', 'mallory', '--role', 'ops']);
  const trusted = await mcpClient(['--as', 'olga', '--role', 'ops'], { DURABLE_AGENT_SIGNING_KEY: `mcp-test:${secret}` });
  try {
    await worker.runUntil(async () => {
      await call(trusted, 'start_task', { agent: 'demo', prompt: 'remove it', script, task_id: taskId });
      const waiting = await statusWhen(h, taskId, (s) => s.agentStatus === 'awaiting_approval');
      const approvalId = waiting.pendingApprovals[0]!.id;

      const refused = await call(unsigned, 'approve', { task_id: taskId, approval_id: approvalId });
      expect(refused.isError).toBe(true);
      expect(text(refused)).toMatch(/unsigned approve/);
      expect((await h.client.status(taskId)).pendingApprovals.map((a) => a.id)).toEqual([approvalId]);

      const approved = await call(trusted, 'approve', { task_id: taskId, approval_id: approvalId });
      expect(approved.isError).toBeFalsy();
      expect(data(await call(trusted, 'task_result', { task_id: taskId, wait_seconds: 30 }))).toMatchObject({ closed: true, result: { text: 'removed signed.log' } });
      const [decision] = (await h.client.status(taskId)).approvals;
      expect(decision).toMatchObject({ decision: 'approved', by: 'olga', identity: { verified: true, keyId: 'mcp-test' } });
    });
  } finally {
    await Promise.all([unsigned.close(), trusted.close()]);
  }
});

test("a 50 KB destructive call: task_status and list_pending_approvals give its exact arguments (read from the workers' blob store, hash-checked), not the reference the task holds; approve with another input_hash is refused; a server on another store says it cannot", async () => {
  const input = { reason: `Routine housekeeping. ${'All systems nominal. '.repeat(2_500)}`, order_id: 'O-0020' };
  const script = h.script([callTool('cancel_order', input), answer('cancelled')]);
  const taskId = h.taskId('mcp-padded');
  const worker = await h.worker();
  const client = await mcpClient(['--as', 'alice'], { DURABLE_AGENT_BLOB_STORE: `file:${path.join(h.tmpDir, 'blobs')}` });
  const elsewhere = await mcpClient(['--as', 'alice', '--blob-store', `file:${mkdtempSync(path.join(os.tmpdir(), 'other-blobs-'))}`]);
  try {
    await worker.runUntil(async () => {
      await h.client.start({ agent: 'demo', prompt: 'tidy up', model: { provider: 'scripted', script } }, { taskId });
      const [held] = (await statusWhen(h, taskId, (s) => s.agentStatus === 'awaiting_approval')).pendingApprovals;
      const marker = held!.input as { $blob: string; bytes: number };
      expect(marker.$blob).toMatch(/^sha256:/);

      const status = data(await call(client, 'task_status', { task_id: taskId }));
      expect(status.pending_approvals).toEqual([expect.objectContaining({ tool: 'cancel_order', arguments: input, arguments_sha256: marker.$blob, input_hash: held!.inputHash })]);
      const listed = await waitFor('the approval in list_pending_approvals', async () => {
        const all = data(await call(client, 'list_pending_approvals', {})).approvals as { task_id: string }[];
        return all.find((a) => a.task_id === taskId);
      });
      expect(listed).toMatchObject({ approval_id: held!.id, arguments: input });

      const stale = await call(client, 'approve', { task_id: taskId, approval_id: held!.id, input_hash: 'cancel_order#another-call' });
      expect(stale.isError).toBe(true);
      expect(text(stale)).toContain(`approval ${held!.id} is not the call you read: its input_hash is ${held!.inputHash}`);
      expect((await h.client.status(taskId)).pendingApprovals.map((a) => a.id)).toEqual([held!.id]);

      const blind = data(await call(elsewhere, 'task_status', { task_id: taskId })).pending_approvals[0];
      expect(blind.arguments).toBeUndefined();
      expect(blind.arguments_unavailable).toMatch(/stored in the blob store and cannot be read here: blob sha256:[0-9a-f]{64} of .* is missing/);
      await h.client.handle(taskId).terminate('test over');
    });
  } finally {
    await Promise.all([client.close(), elsewhere.close()]);
  }
});

test("with every worker down, list_pending_approvals reads the approval from the task's memo and approve returns recorded with the note; when a worker starts the task completes with it, decided by the server's person", async () => {
  writeFileSync(path.join(h.workspaceDir, 'outage.log'), 'x');
  const script = h.script([callTool('delete_file', { path: 'outage.log' }), answer('removed outage.log')]);
  const taskId = h.taskId('mcp-outage');
  const client = await mcpClient(['--as', 'alice']);
  try {
    const approvalId = await (await h.worker()).runUntil(async () => {
      await h.client.start({ agent: 'demo', prompt: 'remove the log', model: { provider: 'scripted', script } }, { taskId });
      return (await statusWhen(h, taskId, (s) => s.agentStatus === 'awaiting_approval')).pendingApprovals[0]!.id;
    });
    // Every worker is down from here on.
    const listed = await waitFor('the approval in list_pending_approvals', async () => {
      const all = data(await call(client, 'list_pending_approvals', {})).approvals as { task_id: string }[];
      return all.find((a) => a.task_id === taskId);
    });
    expect(listed).toMatchObject({
      approval_id: approvalId,
      tool: 'delete_file',
      arguments: { path: 'outage.log' },
      effect: 'destructive',
      note: expect.stringContaining('no worker answered for this task'),
    });

    const unchecked = await call(client, 'approve', { task_id: taskId, approval_id: approvalId, input_hash: 'delete_file#whatever' });
    expect(unchecked.isError).toBe(true);
    expect(text(unchecked)).toContain('input_hash cannot be checked');

    const approved = await call(client, 'approve', { task_id: taskId, approval_id: approvalId, comment: 'during the outage' });
    expect(approved.isError).toBeFalsy();
    expect(data(approved)).toMatchObject({
      outcome: 'recorded',
      applied: false,
      recorded: true,
      task_queue: h.taskQueue,
      note: expect.stringMatching(/^recorded; it applies when a worker runs the task \(no worker/),
    });
    expect(existsSync(path.join(h.workspaceDir, 'outage.log'))).toBe(true);

    const done = await (await h.worker()).runUntil(async () => {
      expect(data(await call(client, 'task_result', { task_id: taskId, wait_seconds: 30 }))).toMatchObject({ closed: true, result: { outcome: 'answered', text: 'removed outage.log' } });
      return h.client.status(taskId);
    });
    expect(existsSync(path.join(h.workspaceDir, 'outage.log'))).toBe(false);
    const [decided] = done.approvals;
    expect(decided).toMatchObject({ id: approvalId, decision: 'approved', comment: 'during the outage' });
    expect(String(decided!.by)).toContain('alice');
  } finally {
    await client.close();
  }
});
