/**
 * Rolling out a build (issue 36, docs/deploy.md): how long `deploy check` takes to fetch and replay
 * 100 histories of real tasks, and how long a promote takes until a new task runs on the new build.
 * A waiting task's move at continue-as-new is not measured: the embedded server (1.29.1) has no
 * upgrade-on-continue-as-new (docs/deploy.md, "Limits").
 */
import { randomUUID } from 'node:crypto';
import type { Harness } from '../test/support/harness';
import { answer, callTool, runInBackground } from '../test/support/harness';
import { checkBuild, deploymentStatus, promoteBuild } from '../src/deploy/deployment';
import { summarize, type Summary } from './stats';

export const CHECK_HISTORIES = 100;
const ROUNDS = 3;

export interface DeployBenchmark {
  histories: number;
  eventsPerHistory: number;
  checkMs: Summary;
  fetchMs: Summary;
  replayMs: Summary;
  /** From `promote` called to a task started after it answering from the new build. */
  promoteToNewBuildMs: Summary;
  promoteCallMs: Summary;
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
    '',
    "A waiting task's move after a promote: not measured; server 1.29.1 keeps a continue-as-new on its pinned build (docs/deploy.md, Limits).",
  ].join('\n');
}
