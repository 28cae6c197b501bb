/**
 * Rolling out a build (issue 36, docs/deploy.md): how long `deploy check` takes to fetch and replay
 * 100 histories of real tasks, and how long a promote takes until a new task runs on the new build.
 * and how long tasks waiting on a person take to move with `promote --move-waiting` (until the
 * person's answer has run on the new build). A long task's move at continue-as-new is measured in
 * deploy-move.ts, on a newer server: the embedded 1.29.1 has no upgrade-on-continue-as-new.
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Harness } from '../test/support/harness';
import { answer, callTool, runInBackground } from '../test/support/harness';
import { checkBuild } from '../src/deploy/build-check';
import { deploymentStatus, promoteBuild } from '../src/deploy/deployment';
import { summarize, type Summary } from './stats';

export const CHECK_HISTORIES = 100;
const ROUNDS = 3;
const WAITING_TASKS = 10;

export interface DeployBenchmark {
  histories: number;
  eventsPerHistory: number;
  checkMs: Summary;
  fetchMs: Summary;
  replayMs: Summary;
  /** From `promote` called to a task started after it answering from the new build. */
  promoteToNewBuildMs: Summary;
  promoteCallMs: Summary;
  /** Tasks waiting on a person moved by one `promote --move-waiting`. */
  waitingTasks: number;
  /** The promote with --move-waiting, from its start until it returned (every move decided). */
  moveWaitingPromoteMs: number;
  /** From the promote's start to each waiting task answered and finished on the new build (the person answers at once). */
  waitingMovedAndFinishedMs: Summary;
}

export async function measureDeploy(h: Harness): Promise<DeployBenchmark> {
  const deploymentName = `bench-${randomUUID().slice(0, 8)}`;
  const v1 = runInBackground(await h.worker(undefined, { versioning: { deploymentName, buildId: 'b1' } }));
  let eventsPerHistory = 0;
  const checks: number[] = [];
  const fetches: number[] = [];
  const replays: number[] = [];
  const promotes: number[] = [];
  const promoteCalls: number[] = [];
  let moveWaitingPromoteMs = 0;
  const movedAndFinished: number[] = [];
  try {
    const script = h.script([callTool('search_orders', { customer_id: 'C-1001' }), answer('done')]);
    const ids = Array.from({ length: CHECK_HISTORIES }, () => h.taskId('bench-deploy'));
    for (const taskId of ids) await h.client.start({ agent: 'demo', prompt: 'find orders', model: { provider: 'scripted', script } }, { taskId });
    await Promise.all(ids.map((id) => h.client.result(id)));
    eventsPerHistory = (await h.client.client.workflow.getHandle(ids[0]!).fetchHistory()).events?.length ?? 0;
    for (let round = 0; round < ROUNDS; round++) {
      const started = Date.now();
      const result = await checkBuild(h.client.client, h.bundle.codePath, { deploymentName, closedPerAgent: CHECK_HISTORIES });
      checks.push(Date.now() - started);
      fetches.push(result.fetchMs);
      replays.push(result.replayMs);
      if (!result.passed || result.histories < CHECK_HISTORIES) throw new Error(`deploy check replayed ${result.histories} histories, passed: ${result.passed}`);
    }
    // The same code under two build ids, promoted back and forth.
    const v2 = runInBackground(await h.worker(undefined, { versioning: { deploymentName, buildId: 'b2', bootstrap: false } }));
    try {
      const deadline = Date.now() + 60_000;
      while (!(await deploymentStatus(h.client.client, deploymentName)).builds.some((b) => b.buildId === 'b2')) {
        if (Date.now() > deadline) throw new Error('the server never saw build b2');
        await new Promise((r) => setTimeout(r, 200));
      }
      for (let round = 0; round < ROUNDS * 2; round++) {
        const target = round % 2 === 0 ? 'b2' : 'b1';
        const started = Date.now();
        await promoteBuild(h.client.client, target, { deploymentName, force: true });
        promoteCalls.push(Date.now() - started);
        const taskId = h.taskId('bench-promoted');
        await h.client.start({ agent: 'demo', prompt: 'hi', model: { provider: 'scripted', script: h.script([answer('hi')]) } }, { taskId });
        await h.client.result(taskId);
        promotes.push(Date.now() - started);
        const info = (await h.client.client.workflowService.describeWorkflowExecution({ namespace: 'default', execution: { workflowId: taskId } })).workflowExecutionInfo;
        if (info?.versioningInfo?.deploymentVersion?.buildId !== target) throw new Error(`a task started after promoting ${target} ran on ${info?.versioningInfo?.deploymentVersion?.buildId}`);
      }
      // Tasks waiting on a person on b1: make b1 current, start them there, check b2, then promote b2 with --move-waiting.
      if ((await deploymentStatus(h.client.client, deploymentName)).current !== 'b1') await promoteBuild(h.client.client, 'b1', { deploymentName, force: true });
      const waitingIds = Array.from({ length: WAITING_TASKS }, () => h.taskId('bench-waiting'));
      for (const [i, taskId] of waitingIds.entries()) {
        writeFileSync(path.join(h.workspaceDir, `bench-wait-${i}.txt`), 'x');
        const script = h.script([callTool('delete_file', { path: `bench-wait-${i}.txt` }), answer('moved')]);
        await h.client.start({ agent: 'demo', prompt: 'delete', model: { provider: 'scripted', script } }, { taskId });
      }
      const approvals = new Map<string, string>();
      for (const taskId of waitingIds) {
        for (;;) {
          const s = await h.client.status(taskId).catch(() => undefined);
          if (s?.pendingApprovals[0] && s.agentStatus === 'awaiting_approval') {
            approvals.set(taskId, s.pendingApprovals[0].id);
            break;
          }
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      // Visibility (AgentStatus) trails the query a little.
      await new Promise((r) => setTimeout(r, 1500));
      await checkBuild(h.client.client, h.bundle.codePath, { deploymentName, buildId: 'b2', closedPerAgent: 0 });
      const started = Date.now();
      const change = await promoteBuild(h.client.client, 'b2', { deploymentName, moveWaiting: true });
      moveWaitingPromoteMs = Date.now() - started;
      if ((change.moved ?? []).length !== WAITING_TASKS) throw new Error(`--move-waiting moved ${change.moved?.length} of ${WAITING_TASKS}: ${JSON.stringify(change.kept)}`);
      await Promise.all(
        waitingIds.map(async (taskId) => {
          await h.client.approve(taskId, { approvalId: approvals.get(taskId)!, by: 'bench' });
          await h.client.result(taskId);
          movedAndFinished.push(Date.now() - started);
        }),
      );
    } finally {
      await v2.stop();
    }
  } finally {
    await v1.stop();
  }
  return {
    histories: CHECK_HISTORIES,
    eventsPerHistory,
    checkMs: summarize(checks),
    fetchMs: summarize(fetches),
    replayMs: summarize(replays),
    promoteToNewBuildMs: summarize(promotes),
    promoteCallMs: summarize(promoteCalls),
    waitingTasks: WAITING_TASKS,
    moveWaitingPromoteMs,
    waitingMovedAndFinishedMs: summarize(movedAndFinished),
  };
}

export function deployTable(r: DeployBenchmark): string {
  const row = (what: string, s: Summary) => `| ${what} | ${s.median} | ${s.p95} | ${s.n} |`;
  return [
    `\`deploy check\` of ${r.histories} closed histories (${r.eventsPerHistory} events each), and promotes on the embedded dev server:`,
    '',
    '| what | median ms | p95 ms | n |',
    '|---|---|---|---|',
    row(`deploy check, ${r.histories} histories (fetch + replay)`, r.checkMs),
    row('  fetching the histories', r.fetchMs),
    row('  replaying them', r.replayMs),
    row('promote (the routing change, until the server reports it done)', r.promoteCallMs),
    row('promote to a new task answered on the new build', r.promoteToNewBuildMs),
    `| promote --move-waiting of ${r.waitingTasks} tasks waiting on a person (every move decided) | ${r.moveWaitingPromoteMs} | | 1 |`,
    row('promote --move-waiting to a waiting task answered and finished on the new build', r.waitingMovedAndFinishedMs),
  ].join('\n');
}
