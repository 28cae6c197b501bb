/**
 * A long task moves to a new build at its next continue-as-new (docs/deploy.md), on a server with
 * upgrade-on-continue-as-new (test/support/versioning-server.ts: server 1.30; the embedded 1.29.1
 * ignores it). A v1 `durable-agent worker` process runs a task that is mid-loop, holding in a tool
 * call; the process is SIGKILLed there and an in-process v1 worker takes the call over; v2 (a start
 * timer without a patch, so v1 histories cannot replay on it) is promoted. When the held call ends,
 * the task's next model answer learns that the target build changed, the run hands over at the turn
 * boundary, and the new run starts on v2 with the progress carried: the old run never met v2 code.
 */
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { temporal } from '@temporalio/proto';
import type { NativeConnection } from '@temporalio/worker';
import type { TaskClient } from '../../src/client/task-client';
import { deploymentStatus, promoteBuild } from '../../src/deploy/deployment';
import { LocalBlobStore } from '../../src/blobs/local-blob-store';
import { createAgentWorker, type AgentWorker } from '../../src/worker/create-worker';
import { answer, callTool, runInBackground } from '../support/harness';
import { isStartTimer, modifiedBuild, withStartTimer } from '../support/modified-build';
import { sigkill, spawnCli, waitFor } from '../support/processes';
import { installQuietRuntime } from '../support/quiet-runtime';
import { testWorkflowBundle } from '../support/test-bundle';
import upgradeAgents from '../support/upgrade-agents';
import { connectTo, startVersioningServer, type VersioningServer } from '../support/versioning-server';

jest.setTimeout(300_000);

let server: VersioningServer;
let connection: NativeConnection;
let client: TaskClient;
let close: (() => Promise<void>) | undefined;
let tmpDir: string;
beforeAll(async () => {
  installQuietRuntime();
  tmpDir = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-upgrade-'));
  server = await startVersioningServer();
  ({ connection, client, close } = await connectTo(server));
});
afterAll(async () => {
  await close?.();
  await server?.stop();
});

const EventType = temporal.api.enums.v1.EventType;

test('a long task mid-loop moves to the promoted build at its next continue-as-new, after a SIGKILL of its v1 worker', async () => {
  const deploymentName = `ucan-${randomUUID().slice(0, 8)}`;
  const taskQueue = `ucan-${randomUUID().slice(0, 8)}`;
  const workspaceDir = path.join(tmpDir, 'workspace');
  mkdirSync(workspaceDir, { recursive: true });
  const blobDir = path.join(tmpDir, 'blobs');
  const scriptFile = path.join(tmpDir, 'script.json');
  const steps = 6;
  writeFileSync(
    scriptFile,
    JSON.stringify({ description: 'steps', turns: [...Array.from({ length: steps }, (_, i) => callTool('step', { n: i + 1, ...(i === 1 ? { hold: true } : {}) })), answer('all steps read')] }),
  );
  const v2Pending = modifiedBuild(tmpDir, 'v2', withStartTimer);
  const bundle = await testWorkflowBundle();
  const workerOf = (buildId: string, codePath: string): Promise<AgentWorker> =>
    createAgentWorker({
      agents: upgradeAgents({ workspaceDir }),
      connection,
      namespace: server.namespace,
      taskQueue,
      workflowBundle: { codePath },
      blobStore: new LocalBlobStore(blobDir),
      modelEnv: { scriptRoots: [tmpDir] },
      versioning: { deploymentName, buildId, bootstrap: false },
    });

  // v1: a worker process, the deployment's first build (it makes itself current).
  const v1Process = spawnCli(
    [
      'worker',
      '--address',
      server.address,
      '--namespace',
      server.namespace,
      '--task-queue',
      taskQueue,
      '--workspace',
      workspaceDir,
      '--agents',
      path.resolve(__dirname, '../support/upgrade-agents.ts'),
      '--build-id',
      'v1',
      '--deployment',
      deploymentName,
    ],
    { DURABLE_AGENT_SCRIPT_DIRS: tmpDir, DURABLE_AGENT_BLOB_STORE: `file:${blobDir}`, DURABLE_AGENT_HOME: path.join(tmpDir, 'home') },
  );
  let stderr = '';
  v1Process.stderr!.on('data', (d) => (stderr += d));
  const workers: { stop(): Promise<void> }[] = [];
  try {
    await waitFor(
      'v1 to be current',
      () =>
        deploymentStatus(client.client, deploymentName).then(
          (v) => v.current === 'v1' || undefined,
          () => undefined,
        ),
      120_000,
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${stderr.slice(-2000)}`);
    });
    const taskId = `ucan-${randomUUID().slice(0, 8)}`;
    await client.start({ agent: 'stepper', prompt: 'read the steps', model: { provider: 'scripted', script: scriptFile } }, { taskId, taskQueue });
    const firstRunId = (await client.client.workflow.getHandle(taskId).describe()).runId;
    await waitFor('step 2 to hold on the v1 process', () => existsSync(path.join(workspaceDir, 'held-2')) || undefined, 60_000);

    // The v1 process dies inside the held call; another v1 worker takes the call over.
    await sigkill(v1Process);
    workers.push(runInBackground(await workerOf('v1', bundle.codePath)));
    workers.push(runInBackground(await workerOf('v2', (await v2Pending).codePath)));
    await waitFor('the server to know v2', () => deploymentStatus(client.client, deploymentName).then((v) => v.builds.some((b) => b.buildId === 'v2') || undefined), 60_000);
    await promoteBuild(client.client, 'v2', { deploymentName, force: true });
    expect((await deploymentStatus(client.client, deploymentName)).current).toBe('v2');

    // The held call runs again on the new v1 worker (its attempt 2) and is released there.
    await waitFor('the held call to be retried on the v1 worker', () => readFileSync(path.join(workspaceDir, 'held-2'), 'utf8') === '2' || undefined, 60_000);
    writeFileSync(path.join(workspaceDir, 'release'), 'go');
    expect(await client.result(taskId)).toMatchObject({ outcome: 'answered', text: 'all steps read', toolCalls: steps, turns: steps + 1 });

    const runs: { runId: string; buildId?: string | null; events: temporal.api.history.v1.IHistoryEvent[] }[] = [];
    for await (const e of client.client.workflow.list({ query: `WorkflowId = '${taskId}'` })) {
      const history = await client.client.workflow.getHandle(taskId, e.runId).fetchHistory();
      const described = await client.client.workflowService.describeWorkflowExecution({ namespace: server.namespace, execution: { workflowId: taskId, runId: e.runId } });
      runs.push({ runId: e.runId, buildId: described.workflowExecutionInfo?.versioningInfo?.deploymentVersion?.buildId, events: history.events ?? [] });
    }
    const first = runs.find((r) => r.runId === firstRunId)!;
    const later = runs.filter((r) => r.runId !== firstRunId);
    // One hand-over, caused by the build change (the task's own rollover is 25 turns away).
    expect([first, ...later].map((r) => r.buildId)).toEqual(['v1', 'v2']);
    expect(first.events.some(isStartTimer)).toBe(false);
    expect(first.events.at(-1)?.eventType).toBe(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW);
    expect(later[0]!.buildId).toBe('v2');
    expect(later[0]!.events.some(isStartTimer)).toBe(true);
    for (const run of runs) expect(run.events.filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED)).toEqual([]);
    // The v1 run completed step 2 and the answer after it before handing over; v2 read the rest.
    const scheduledSteps = (r: (typeof runs)[number]) =>
      r.events.filter((e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED && e.activityTaskScheduledEventAttributes?.activityType?.name === 'runTool').length;
    expect(scheduledSteps(first) + scheduledSteps(later[0]!)).toBe(steps);
    const status = await client.status(taskId);
    expect(status.build).toMatchObject({ deploymentName, buildId: 'v2' });
  } finally {
    for (const w of workers) await w.stop();
    await sigkill(v1Process);
  }
});
