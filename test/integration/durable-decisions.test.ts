/**
 * Issue 28: a person's decision is never lost. With every worker down, `approve` records the
 * decision as a signal (Temporal writes it to history without a worker) and says so; the task
 * judges it by the update validators' rules when a worker runs it, even after a server restart.
 * Forged, expired, stale and malformed decisions sent as signals change nothing and stay in the
 * audit trail; the plain `temporal` CLI's signal works like the update.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { createDemoAgent } from '../../src/demo/demo-agent';
import { createDecisionSigner, generateSecretKey } from '../../src/approvers';
import { TaskClient } from '../../src/client/task-client';
import { approveSignal, denySignal, unblockSignal } from '../../src/protocol/definitions';
import type { PermissionPolicy, TaskStatus } from '../../src/protocol/task';
import { provisionTemporalCli } from '../../src/server/temporal-cli';
import { answer, callTool, runInBackground, startHarness, statusWhen, type Harness } from '../support/harness';
import { runCli } from '../support/processes';
import { restartServer } from '../support/restarted-server';

jest.setTimeout(180_000);
const exec = promisify(execFile);

const secret = generateSecretKey();
const signer = createDecisionSigner('inbox-test', secret);
const POLICY: PermissionPolicy = { destructive: 'confirm', approvers: { destructive: ['role:ops', 'olga'] } };
const awaiting = (s: TaskStatus) => s.agentStatus === 'awaiting_approval';

function agentsFor(h: Harness, ordersUrl = h.orders.url) {
  return [createDemoAgent({ workspaceDir: h.workspaceDir, ordersUrl, policy: POLICY })];
}

/** Starts a signed task that deletes `file`, runs a worker until its approval is pending, then stops the worker. */
async function waitingTask(h: Harness, signed: TaskClient, file: string, prefix: string): Promise<{ taskId: string; approvalId: string }> {
  writeFileSync(path.join(h.workspaceDir, file), 'x');
  const taskId = h.taskId(prefix);
  const worker = await h.worker(agentsFor(h), { approverKeys: [signer.trustedKey()] });
  const approvalId = await worker.runUntil(async () => {
    const script = h.script([callTool('delete_file', { path: file }), answer(`deleted ${file}`)]);
    await signed.start({ agent: 'demo', prompt: `delete ${file}`, startedBy: 'sam', model: { provider: 'scripted', script } }, { taskId });
    return (await statusWhen(h, taskId, awaiting)).pendingApprovals[0]!.id;
  });
  return { taskId, approvalId };
}

async function workflowTaskFailures(h: Harness, taskId: string): Promise<number> {
  return ((await h.client.history(taskId)).events ?? []).filter((e) => e.workflowTaskFailedEventAttributes).length;
}

describe('with a persisted server', () => {
  test('approve with every worker down is recorded (exit 5), survives a server restart, and is taken when a worker starts: the delete runs once, attributed to the signer', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'durable-decisions-'));
    const dbFile = path.join(dir, 'temporal.db');
    const h = await startHarness({ dbFile });
    const signed = new TaskClient(h.client.client, h.taskQueue, signer);
    let taskId: string;
    let approvalId: string;
    try {
      ({ taskId, approvalId } = await waitingTask(h, signed, 'outage.txt', 'outage'));
      const cli = await runCli(['approve', taskId, '--as', 'olga', '--address', h.server.address], { DURABLE_AGENT_HOME: dir, DURABLE_AGENT_SIGNING_KEY: `inbox-test:${secret}` });
      expect(cli.stderr).toBe('');
      expect(cli.code).toBe(5);
      expect(cli.stdout).toMatch(/^recorded without a worker; it applies when a worker runs the task \(no worker/);
      expect(existsSync(path.join(h.workspaceDir, 'outage.txt'))).toBe(true);
    } finally {
      await h.close();
    }

    const restarted = await restartServer(h, dbFile, dir);
    try {
      const { client } = restarted;
      const worker = await restarted.worker(agentsFor(h, 'http://127.0.0.1:9'), { blobStore: h.blobStore, approverKeys: [signer.trustedKey()], modelEnv: { scriptRoots: [h.tmpDir] } });
      const status = await worker.runUntil(async () => {
        expect(await client.result(taskId)).toMatchObject({ outcome: 'answered', text: 'deleted outage.txt' });
        return client.status(taskId);
      });
      expect(existsSync(path.join(h.workspaceDir, 'outage.txt'))).toBe(false);
      expect(status.approvals).toEqual([expect.objectContaining({ id: approvalId, decision: 'approved', by: 'olga', identity: expect.objectContaining({ verified: true, keyId: 'inbox-test' }) })]);
      expect(status.events.filter((e) => e.kind === 'tool_succeeded' && e.tool === 'delete_file')).toHaveLength(1);
    } finally {
      await restarted.close();
    }
  });
});

describe('on one server', () => {
  let h: Harness;
  let signed: TaskClient;
  beforeAll(async () => {
    h = await startHarness();
    signed = new TaskClient(h.client.client, h.taskQueue, signer);
  });
  afterAll(async () => {
    await h?.close();
  });

  test('forged and expired decisions sent as signals are recorded as refused; the task still waits, and a signed approve through the plain temporal CLI is then taken', async () => {
    const { taskId, approvalId } = await waitingTask(h, signed, 'forged.txt', 'forged-signal');
    const handle = h.client.handle(taskId);
    const intruder = createDecisionSigner('inbox-test', generateSecretKey());
    const claim = (s: typeof signer, request: { approvalId: string; by: string; roles?: string[] }, lifetimeMs?: number, now?: Date) =>
      s.sign({ kind: 'approve', taskId, subject: approvalId, by: request.by, roles: request.roles ?? [], request, ...(lifetimeMs ? { lifetimeMs } : {}), ...(now ? { now } : {}) });
    await handle.signal(approveSignal, { approvalId, by: 'rita', roles: ['ops'], proof: claim(intruder, { approvalId, by: 'rita', roles: ['ops'] }) });
    await handle.signal(approveSignal, { approvalId, by: 'olga' });
    const stale = new Date(Date.now() - 10 * 60_000);
    await handle.signal(approveSignal, { approvalId, by: 'olga', proof: claim(signer, { approvalId, by: 'olga' }, 60_000, stale) });
    const worker = runInBackground(await h.worker(agentsFor(h), { approverKeys: [signer.trustedKey()] }));
    try {
      const refused = await statusWhen(h, taskId, (s) => s.decisions.filter((d) => d.outcome === 'refused').length === 3);
      expect(refused.agentStatus).toBe('awaiting_approval');
      expect(refused.pendingApprovals.map((a) => a.id)).toEqual([approvalId]);
      const details = refused.decisions.map((d) => d.detail).join('\n');
      expect(details).toMatch(/signature/);
      expect(details).toMatch(/unsigned/);
      expect(details).toMatch(/proof expired/);
      expect(existsSync(path.join(h.workspaceDir, 'forged.txt'))).toBe(true);

      const good = { approvalId, by: 'olga' };
      const temporalCli = await provisionTemporalCli();
      await exec(temporalCli, ['workflow', 'signal', '--address', h.server.address, '--workflow-id', taskId, '--name', 'approve', '--input', JSON.stringify({ ...good, proof: claim(signer, good) })]);
      expect(await h.client.result(taskId)).toMatchObject({ outcome: 'answered' });
      const done = await h.client.status(taskId);
      expect(done.approvals).toEqual([expect.objectContaining({ id: approvalId, decision: 'approved', by: 'olga' })]);
      expect(existsSync(path.join(h.workspaceDir, 'forged.txt'))).toBe(false);
    } finally {
      await worker.stop();
    }
    expect(await workflowTaskFailures(h, taskId)).toBe(0);
  });

  test('a proof that expired while no worker ran counts: it is judged at the time the server recorded the signal', async () => {
    const { taskId, approvalId } = await waitingTask(h, signed, 'late.txt', 'late-worker');
    const request = { approvalId, by: 'olga' };
    const proof = signer.sign({ kind: 'approve', taskId, subject: approvalId, by: 'olga', roles: [], request, lifetimeMs: 1_500 });
    await h.client.handle(taskId).signal(approveSignal, { ...request, proof });
    // The proof expires before any worker runs the task.
    await new Promise((r) => setTimeout(r, 2_500));
    const worker = runInBackground(await h.worker(agentsFor(h), { approverKeys: [signer.trustedKey()] }));
    try {
      expect(await h.client.result(taskId)).toMatchObject({ outcome: 'answered' });
      expect((await h.client.status(taskId)).approvals).toEqual([expect.objectContaining({ decision: 'approved', by: 'olga' })]);
    } finally {
      await worker.stop();
    }
  });

  test('a decision that arrives after the approval was decided is recorded as superseded and changes nothing', async () => {
    const { taskId, approvalId } = await waitingTask(h, signed, 'twice.txt', 'superseded');
    const worker = runInBackground(await h.worker(agentsFor(h), { approverKeys: [signer.trustedKey()] }));
    try {
      // The update path (synchronous), so the signal below surely comes second.
      expect(await signed.approve(taskId, { approvalId, by: 'olga' })).toMatchObject({ decision: 'approved' });
      const request = { approvalId, by: 'olga', reason: 'changed my mind' };
      await h.client.handle(taskId).signal(denySignal, { ...request, proof: signer.sign({ kind: 'deny', taskId, subject: approvalId, by: 'olga', roles: [], request }) });
      const status = await statusWhen(h, taskId, (s) => s.decisions.some((d) => d.outcome === 'superseded'));
      expect(status.approvals).toEqual([expect.objectContaining({ id: approvalId, decision: 'approved' })]);
      expect(status.decisions.filter((d) => d.outcome === 'superseded')).toEqual([expect.objectContaining({ action: 'deny', by: 'olga' })]);
      await h.client.result(taskId);
    } finally {
      await worker.stop();
    }
  });

  test('decide() with no worker returns "recorded" and the next worker takes it; a closed task refuses it at once', async () => {
    const { taskId, approvalId } = await waitingTask(h, signed, 'decide.txt', 'decide');
    const recorded = await signed.decide(taskId, { kind: 'approve', input: { approvalId, by: 'olga' } });
    expect(recorded).toMatchObject({ applied: false, recorded: true, taskQueue: h.taskQueue });
    const worker = runInBackground(await h.worker(agentsFor(h), { approverKeys: [signer.trustedKey()] }));
    try {
      expect(await h.client.result(taskId)).toMatchObject({ outcome: 'answered' });
    } finally {
      await worker.stop();
    }
    await expect(signed.decide(taskId, { kind: 'approve', input: { approvalId, by: 'olga' } })).rejects.toThrow(/completed; it takes no more requests/);
  });

  test('arbitrary JSON sent as approve, deny and unblock signals never fails a workflow task and never decides anything', async () => {
    const { taskId, approvalId } = await waitingTask(h, signed, 'fuzz.txt', 'fuzz-signals');
    const handle = h.client.handle(taskId);
    const sent = await fc.sample(fc.tuple(fc.constantFrom('approve', 'deny', 'unblock'), fc.anything()), { numRuns: 60, seed: 28 });
    for (const [name, value] of sent) await handle.signal(name, value);
    // Shapes close to real ones: the right id without a proof, a wrong id with a valid-looking proof.
    await handle.signal(approveSignal, { approvalId, by: 'olga' });
    await handle.signal(denySignal, {
      approvalId: 'nope',
      by: 'olga',
      reason: 'x',
      proof: signer.sign({ kind: 'deny', taskId, subject: 'nope', by: 'olga', roles: [], request: { approvalId: 'nope', by: 'olga', reason: 'x' } }),
    });
    await handle.signal(unblockSignal, { by: 'olga', blockId: 'b-1' });
    const worker = runInBackground(await h.worker(agentsFor(h), { approverKeys: [signer.trustedKey()] }));
    try {
      const status = await statusWhen(h, taskId, (s) => (s.untakenDecisions ?? 0) === sent.length + 3);
      expect(status.pendingApprovals.map((a) => a.id)).toEqual([approvalId]);
      expect(status.approvals).toEqual([]);
      expect(status.agentStatus).toBe('awaiting_approval');
      // Itemised up to the bound, counted beyond it.
      expect(status.decisions.filter((d) => d.outcome).length).toBeLessThanOrEqual(100);
      // Taken at once, or (on a loaded machine, past the one-second try) recorded and taken as a signal: either way, once.
      await signed.decide(taskId, { kind: 'approve', input: { approvalId, by: 'olga' } });
      expect(await h.client.result(taskId)).toMatchObject({ outcome: 'answered' });
    } finally {
      await worker.stop();
    }
    expect(await workflowTaskFailures(h, taskId)).toBe(0);
  });
});

describe('a flood of signals', () => {
  let h: Harness;
  const LIMIT = 30;
  beforeAll(async () => {
    h = await startHarness({ dynamicConfig: { 'history.maximumSignalsPerExecution': LIMIT } });
  });
  afterAll(async () => {
    await h?.close();
  });

  test("is refused by the server past the per-run limit with a clear error; the task is not terminated and still takes a person's decision", async () => {
    const signed = new TaskClient(h.client.client, h.taskQueue, signer);
    const { taskId, approvalId } = await waitingTask(h, signed, 'flood.txt', 'flood');
    const handle = h.client.handle(taskId);
    let refusedAt: number | undefined;
    let refusal = '';
    for (let i = 0; i < LIMIT + 5 && refusedAt === undefined; i++) {
      await handle.signal(denySignal, { approvalId, by: 'mallory', reason: `flood ${i}` }).catch((err: Error & { cause?: Error }) => {
        refusedAt = i;
        refusal = `${err.message}: ${err.cause?.message}`;
      });
    }
    expect(refusal).toMatch(/limit for signal events/);
    expect(refusedAt).toBeLessThanOrEqual(LIMIT);
    // A front end says so in words. (It offered the decision as an update first, if the queue had pollers.)
    const offered = await signed.decide(taskId, { kind: 'deny', input: { approvalId, by: 'olga', reason: 'no' } }).then(
      () => 'sent',
      (err: Error) => err.message,
    );
    expect(offered).toMatch(/server refused the decision: .*limit for signal events/);
    const worker = runInBackground(await h.worker(agentsFor(h), { approverKeys: [signer.trustedKey()] }));
    try {
      if (/offered as an update first/.test(offered)) {
        // The update the server held is taken once a worker runs: olga's denial.
        await h.client.result(taskId);
        expect((await h.client.status(taskId)).approvals).toEqual([expect.objectContaining({ id: approvalId, decision: 'denied', by: 'olga' })]);
      } else {
        await statusWhen(h, taskId, (s) => (s.untakenDecisions ?? 0) === refusedAt);
        expect(await signed.approve(taskId, { approvalId, by: 'olga' })).toMatchObject({ decision: 'approved' });
        await h.client.result(taskId);
      }
      const status = await h.client.status(taskId);
      expect(status.untakenDecisions).toBe(refusedAt);
      expect(status.agentStatus).toBe('completed');
    } finally {
      await worker.stop();
    }
  });
});
