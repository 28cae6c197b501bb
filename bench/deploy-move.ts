/**
 * How long a long task mid-loop takes to move to a promoted build at its next continue-as-new
 * (docs/deploy.md), on the server 1.30 of test/support/versioning-server.ts (the embedded 1.29.1
 * has no upgrade-on-continue-as-new). Tasks loop through cheap tool turns on b1; b2 (the same code
 * under another build id) is promoted; each task is timed from the promote's start until its
 * current run is on b2.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LocalBlobStore } from '../src/blobs/local-blob-store';
import { deploymentStatus, promoteBuild } from '../src/deploy/deployment';
import { createAgentWorker } from '../src/worker/create-worker';
import { answer, callTool, runInBackground } from '../test/support/harness';
import { testWorkflowBundle } from '../test/support/test-bundle';
import upgradeAgents from '../test/support/upgrade-agents';
import { connectTo, startVersioningServer, VERSIONING_SERVER_VERSION } from '../test/support/versioning-server';
import { summarize, type Summary } from './stats';

const TASKS = 5;
const TURNS = 400;

export interface MoveAtContinueAsNew {
  server: string;
  tasks: number;
  /** From the promote's start until each looping task's current run is on the new build. */
  movedMs: Summary;
  /** The promote call itself (the routing change, until the server reports it done). */
  promoteCallMs: number;
}

export async function measureMoveAtContinueAsNew(): Promise<MoveAtContinueAsNew> {
  const server = await startVersioningServer();
  const tmpDir = mkdtempSync(path.join(os.tmpdir(), 'bench-move-'));
  const { connection, client, close } = await connectTo(server);
  const deploymentName = `bench-move-${randomUUID().slice(0, 8)}`;
  const taskQueue = `bench-move-${randomUUID().slice(0, 8)}`;
  const workspaceDir = path.join(tmpDir, 'workspace');
  mkdirSync(workspaceDir);
  const bundle = await testWorkflowBundle();
  const worker = (buildId: string, bootstrap: boolean) =>
    createAgentWorker({
      agents: upgradeAgents({ workspaceDir }),
      connection,
      namespace: server.namespace,
      taskQueue,
      workflowBundle: bundle,
      blobStore: new LocalBlobStore(path.join(tmpDir, 'blobs')),
      modelEnv: { scriptRoots: [tmpDir] },
      versioning: { deploymentName, buildId, bootstrap },
    });
  const b1 = runInBackground(await worker('b1', true));
  const b2 = runInBackground(await worker('b2', false));
  try {
    const script = path.join(tmpDir, 'script.json');
    writeFileSync(script, JSON.stringify({ description: 'a long loop', turns: [...Array.from({ length: TURNS }, (_, i) => callTool('step', { n: i + 1 })), answer('done')] }));
    await until('b1 current and b2 known', async () => {
      const v = await deploymentStatus(client.client, deploymentName).catch(() => undefined);
      return v?.current === 'b1' && v.builds.some((b) => b.buildId === 'b2');
    });
    const ids = Array.from({ length: TASKS }, () => `bench-move-${randomUUID().slice(0, 8)}`);
    for (const taskId of ids) {
      await client.start({ agent: 'stepper', prompt: 'loop', model: { provider: 'scripted', script }, budgets: { turns: TURNS + 1, toolCalls: TURNS } }, { taskId, taskQueue });
    }
    // Every task is mid-loop (a few turns in) when the promote lands.
    await until('every task a few turns in', async () => (await Promise.all(ids.map((id) => client.status(id).catch(() => undefined)))).every((s) => (s?.turn ?? 0) >= 5));
    const started = Date.now();
    await promoteBuild(client.client, 'b2', { deploymentName, force: true });
    const promoteCallMs = Date.now() - started;
    const moved = await Promise.all(
      ids.map(async (taskId) => {
        await until(`${taskId} on b2`, async () => {
          const info = (await client.client.workflowService.describeWorkflowExecution({ namespace: server.namespace, execution: { workflowId: taskId } })).workflowExecutionInfo;
          return info?.versioningInfo?.deploymentVersion?.buildId === 'b2';
        });
        return Date.now() - started;
      }),
    );
    for (const taskId of ids) await client.cancel(taskId).catch(() => undefined);
    return { server: VERSIONING_SERVER_VERSION, tasks: TASKS, movedMs: summarize(moved), promoteCallMs };
  } finally {
    await b2.stop();
    await b1.stop();
    await close();
    await server.stop();
    rmSync(tmpDir, { recursive: true, force: true });
  }
}

async function until(what: string, probe: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`bench deploy: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export function moveTable(r: MoveAtContinueAsNew): string {
  return [
    `A long task's move at its next continue-as-new, on server ${r.server} (test/support/versioning-server.ts; the embedded 1.29.1 has no upgrade-on-continue-as-new): ${r.tasks} tasks looping through tool turns on b1, b2 promoted:`,
    '',
    '| what | median ms | p95 ms | n |',
    '|---|---|---|---|',
    `| promote (the routing change, until the server reports it done) | ${r.promoteCallMs} | | 1 |`,
    `| promote to the task's current run on the new build | ${r.movedMs.median} | ${r.movedMs.p95} | ${r.movedMs.n} |`,
  ].join('\n');
}
