/**
 * What a decision made while no worker runs costs (issue 28): the history bytes a signalled
 * approval adds beside the update path's, how long `durable-agent approve` takes to answer
 * "recorded" with every worker down, and the time from a worker's start to the decision taken.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { createDemoAgent } from '../src/demo/demo-agent';
import { createDecisionSigner, generateSecretKey } from '../src/approvers';
import { TaskClient } from '../src/client/task-client';
import type { PermissionPolicy } from '../src/protocol/task';
import { answer, callTool, runInBackground, statusWhen, type Harness } from '../test/support/harness';
import { runCli } from '../test/support/processes';
import { summarize, type Summary } from './stats';
import { LIVE_POLL_WINDOW_MS } from '../src/client/send-decision';

const ROUNDS = 5;
const POLICY: PermissionPolicy = { destructive: 'confirm', approvers: { destructive: ['olga'] } };

export interface DecisionCost {
  rounds: number;
  /** Bytes (protobuf) of the events a decision adds: the signal path (signal + the workflow task that takes it) beside the update path. */
  historyBytes: { signal: Summary; update: Summary };
  /** `durable-agent approve` right after every worker went down (their polls look recent: a 1.5 s query probe first), process start to exit 5. */
  cliRecordedMs: Summary;
  /** The same once no worker has polled for LIVE_POLL_WINDOW_MS (no probe: the signal at once). */
  cliRecordedAfterWindowMs: Summary;
  /** TaskClient.decide with every worker down (the same, without the CLI process's start). */
  clientRecordedMs: Summary;
  /** From creating a worker to the recorded approval being taken (status shows it decided). */
  workerStartToAppliedMs: Summary;
}

export async function measureDecisionCost(h: Harness): Promise<DecisionCost> {
  const secret = generateSecretKey();
  const signer = createDecisionSigner('bench', secret);
  const signed = new TaskClient(h.client.client, h.taskQueue, signer);
  const agents = [createDemoAgent({ workspaceDir: h.workspaceDir, ordersUrl: h.orders.url, policy: POLICY })];
  const home = mkdtempSync(path.join(os.tmpdir(), 'bench-decisions-'));
  const samples = { signal: [] as number[], update: [] as number[], cli: [] as number[], client: [] as number[], applied: [] as number[] };

  const waiting = async (name: string) => {
    writeFileSync(path.join(h.workspaceDir, `${name}.txt`), 'x');
    const taskId = h.taskId(name);
    const worker = await h.worker(agents, { approverKeys: [signer.trustedKey()] });
    const approvalId = await worker.runUntil(async () => {
      const script = h.script([callTool('delete_file', { path: `${name}.txt` }), answer('done')]);
      await signed.start({ agent: 'demo', prompt: 'x', startedBy: 'sam', model: { provider: 'scripted', script } }, { taskId });
      return (await statusWhen(h, taskId, (s) => s.agentStatus === 'awaiting_approval')).pendingApprovals[0]!.id;
    });
    return { taskId, approvalId, eventsBefore: ((await h.client.history(taskId)).events ?? []).length };
  };
  const bytesSince = async (taskId: string, from: number, until: (e: temporal.api.history.v1.IHistoryEvent) => boolean) => {
    const events = ((await h.client.history(taskId)).events ?? []).slice(from);
    const end = events.findIndex(until);
    return events.slice(0, end + 1).reduce((sum, e) => sum + temporal.api.history.v1.HistoryEvent.encode(e).finish().length, 0);
  };
  const decidedMarker = (e: temporal.api.history.v1.IHistoryEvent) => !!e.workflowTaskCompletedEventAttributes;

  for (let round = 0; round < ROUNDS; round++) {
    // Signal path, through the CLI: every worker down.
    const viaCli = await waiting(`cli-${round}`);
    let t = performance.now();
    const run = await runCli(['approve', viaCli.taskId, '--as', 'olga', '--address', h.server.address], { DURABLE_AGENT_HOME: home, DURABLE_AGENT_SIGNING_KEY: `bench:${secret}` });
    samples.cli.push(performance.now() - t);
    if (run.code !== 5) throw new Error(`approve exited ${run.code}: ${run.stdout} ${run.stderr}`);
    t = performance.now();
    const worker = runInBackground(await h.worker(agents, { approverKeys: [signer.trustedKey()] }));
    await statusWhen(h, viaCli.taskId, (s) => s.approvals.length === 1);
    samples.applied.push(performance.now() - t);
    await h.client.result(viaCli.taskId);
    await worker.stop();
    samples.signal.push(await bytesSince(viaCli.taskId, viaCli.eventsBefore, decidedMarker));

    // Signal path, in process.
    const viaClient = await waiting(`client-${round}`);
    t = performance.now();
    const outcome = await signed.decide(viaClient.taskId, { kind: 'approve', input: { approvalId: viaClient.approvalId, by: 'olga' } });
    samples.client.push(performance.now() - t);
    if (outcome.applied) throw new Error('expected the decision to be recorded, not applied');
    const again = runInBackground(await h.worker(agents, { approverKeys: [signer.trustedKey()] }));
    await h.client.result(viaClient.taskId);
    await again.stop();

    // Update path, a worker running: the same decision's bytes.
    const viaUpdate = await waiting(`update-${round}`);
    const live = runInBackground(await h.worker(agents, { approverKeys: [signer.trustedKey()] }));
    await signed.approve(viaUpdate.taskId, { approvalId: viaUpdate.approvalId, by: 'olga' });
    await h.client.result(viaUpdate.taskId);
    samples.update.push(await bytesSince(viaUpdate.taskId, viaUpdate.eventsBefore, (e) => !!e.workflowExecutionUpdateCompletedEventAttributes));
    await live.stop();
  }
  // Workers down for longer than a live worker's poll interval: the decision is a signal at once.
  const later = [];
  for (let i = 0; i < 3; i++) later.push(await waiting(`later-${i}`));
  await new Promise((r) => setTimeout(r, LIVE_POLL_WINDOW_MS + 2_000));
  const afterWindow: number[] = [];
  for (const task of later) {
    const t = performance.now();
    const run = await runCli(['approve', task.taskId, '--as', 'olga', '--address', h.server.address], { DURABLE_AGENT_HOME: home, DURABLE_AGENT_SIGNING_KEY: `bench:${secret}` });
    afterWindow.push(performance.now() - t);
    if (run.code !== 5) throw new Error(`approve exited ${run.code}: ${run.stdout} ${run.stderr}`);
  }
  const drain = runInBackground(await h.worker(agents, { approverKeys: [signer.trustedKey()] }));
  for (const task of later) await h.client.result(task.taskId);
  await drain.stop();
  return {
    rounds: ROUNDS,
    cliRecordedAfterWindowMs: summarize(afterWindow),
    historyBytes: { signal: summarize(samples.signal, 0), update: summarize(samples.update, 0) },
    cliRecordedMs: summarize(samples.cli),
    clientRecordedMs: summarize(samples.client),
    workerStartToAppliedMs: summarize(samples.applied),
  };
}

export function decisionTable(c: DecisionCost): string {
  const row = (what: string, s: Summary, unit: string) => `| ${what} | ${s.median} ${unit} | ${s.p95} ${unit} | ${s.n} |`;
  return [
    '| what | median | p95 | n |',
    '|---|---|---|---|',
    row('history bytes of an approval sent as a signal (signal + the workflow task that takes it)', c.historyBytes.signal, 'B'),
    row('history bytes of the same approval as an update (accepted + completed, with its workflow task)', c.historyBytes.update, 'B'),
    row('`durable-agent approve` just after every worker went down (1.5 s probe), until it exits 5 ("recorded")', c.cliRecordedMs, 'ms'),
    row('`durable-agent approve` when no worker has polled for 70 s, until it exits 5', c.cliRecordedAfterWindowMs, 'ms'),
    row('TaskClient.decide with every worker down, until "recorded"', c.clientRecordedMs, 'ms'),
    row('worker created -> the recorded approval taken', c.workerStartToAppliedMs, 'ms'),
  ].join('\n');
}
