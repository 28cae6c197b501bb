/**
 * One real Temporal dev server per test file, one workflow bundle per run (test-bundle.ts); a worker per test inside
 * runUntil; unique task ids; real tools against a real orders service and a temp workspace.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { connectClient } from '../../src/client/client-connection';
import { NativeConnection } from '@temporalio/worker';
import { testWorkflowBundle } from './test-bundle';
import { installQuietRuntime } from './quiet-runtime';
import { spawnCli } from './processes';
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createDemoAgent, seedDemoWorkspace } from '../../src/demo/demo-agent';
import type { AgentDefinition } from '../../src/agents/define-agent';
import { TaskClient, type TaskView } from '../../src/client/task-client';
import type { ToolResultBlock } from '../../src/protocol/messages';
import type { TaskInput, TaskResult, TaskStatus, TranscriptView } from '../../src/protocol/task';
import type { ToolError } from '../../src/protocol/tool-error';
import type { ModelScript } from '../../src/models/scripted-model';
import { startDevServer, type DevServer } from '../../src/server/dev-server';
import { OrdersService } from '../../src/testing/orders-service';
import { createAgentWorker, type AgentWorker, type AgentWorkerOptions } from '../../src/worker/create-worker';
import { createDataConverter } from '../../src/codec';
import { LocalBlobStore } from '../../src/blobs/local-blob-store';
import type { BlobStore } from '../../src/blobs/blob-store';

// Test scripts live in temp folders: workers started by tests (in process or as `durable-agent`
// children, which inherit this) may read them there, and nowhere else outside the defaults.
process.env.DURABLE_AGENT_SCRIPT_DIRS ??= os.tmpdir();

export interface Harness {
  server: DevServer;
  client: TaskClient;
  connection: NativeConnection;
  orders: OrdersService;
  workspaceDir: string;
  tmpDir: string;
  taskQueue: string;
  /** The run's shared prebuilt bundle (test-bundle.ts). */
  bundle: { codePath: string };
  /** The blob store this harness's workers share (a folder in tmpDir unless a test passes its own). */
  blobStore: BlobStore;
  /** A worker for the given agents (default: the demo agent on this harness's workspace and orders). */
  worker(agents?: AgentDefinition[], options?: Partial<AgentWorkerOptions>): Promise<AgentWorker>;
  /** Writes a scripted model file and returns its absolute path. */
  script(turns: ModelScript['turns']): string;
  taskId(prefix?: string): string;
  close(): Promise<void>;
}

export interface HarnessOptions {
  dbFile?: string | null;
  sqlitePragmas?: Record<string, string>;
  dynamicConfig?: Record<string, unknown>;
  /** Bundled with the workflows, e.g. TRACING_WORKFLOW_MODULE for a test of traces. */
  workflowInterceptorModules?: string[];
}

/**
 * The file's harness: started in a beforeAll, closed in an afterAll. The returned object is filled in
 * when the beforeAll runs, so read its fields inside hooks and tests, not at the top of the file:
 *
 *     const h = useHarness();
 *
 * Jest runs afterAll hooks in the order they were declared, so the harness closes before the
 * afterAll hooks declared below this call: a file that must stop something of its own while the
 * server is still up (a worker, a connection) declares that afterAll above `useHarness()`.
 */
export function useHarness(options: HarnessOptions = {}): Harness {
  const h = {} as Harness;
  beforeAll(async () => {
    Object.assign(h, await startHarness(options));
  });
  afterAll(async () => {
    await h.close?.();
  });
  return h;
}

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  installQuietRuntime();
  const tmpDir = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-test-'));
  const server = await startDevServer({
    dbFile: options.dbFile ?? null,
    logFile: path.join(tmpDir, 'server.log'),
    ...(options.sqlitePragmas ? { sqlitePragmas: options.sqlitePragmas } : {}),
    ...(options.dynamicConfig ? { dynamicConfig: options.dynamicConfig } : {}),
  });
  const [bundle, connection, clientConnection] = await Promise.all([
    testWorkflowBundle(options.workflowInterceptorModules),
    NativeConnection.connect({ address: server.address }),
    connectClient({ address: server.address }),
  ]);
  const taskQueue = `test-${randomUUID().slice(0, 8)}`;
  const orders = new OrdersService();
  await orders.start();
  const workspaceDir = path.join(tmpDir, 'workspace');
  await seedDemoWorkspace(workspaceDir);
  let scripts = 0;
  const blobStore = new LocalBlobStore(path.join(tmpDir, 'blobs'));
  return {
    server,
    blobStore,
    client: new TaskClient(new Client({ connection: clientConnection, dataConverter: createDataConverter() }), taskQueue),
    connection,
    orders,
    workspaceDir,
    tmpDir,
    taskQueue,
    bundle,
    worker: (agents, options = {}) =>
      createAgentWorker({
        agents: agents ?? [createDemoAgent({ workspaceDir, ordersUrl: orders.url })],
        connection,
        namespace: 'default',
        taskQueue,
        workflowBundle: bundle,
        // Each test's agents are a build of their own (the default build id follows the agents), and
        // the newest is current, as under `dev`: a test's tasks go to its own worker.
        versioning: { bootstrap: 'always' },
        blobStore,
        modelEnv: { scriptRoots: [tmpDir], ...options.modelEnv },
        ...options,
        ...(options.modelEnv ? { modelEnv: { scriptRoots: [tmpDir], ...options.modelEnv } } : {}),
      }),
    script(turns) {
      const file = path.join(tmpDir, `script-${++scripts}.json`);
      writeFileSync(file, JSON.stringify({ description: 'test script', turns }));
      return file;
    },
    taskId: (prefix = 'task') => `${prefix}-${randomUUID().slice(0, 8)}`,
    async close() {
      await orders.stop();
      await clientConnection.close();
      await connection.close();
      await server.stop();
    },
  };
}

/** A scripted assistant turn that calls one tool. */
export function callTool(name: string, input: unknown, text = `calling ${name}`): ModelScript['turns'][number] {
  return {
    content: [
      { type: 'text', text },
      { type: 'tool_use', name, input },
    ],
  };
}

/** A scripted final answer. */
export function answer(text: string): ModelScript['turns'][number] {
  return { content: [{ type: 'text', text }] };
}

export interface TaskRun {
  taskId: string;
  result?: TaskResult;
  failure?: Error;
  transcript: TranscriptView;
  view: TaskView;
}

/** Starts a task, runs a fresh worker until it closes, and reads its transcript and status meanwhile. */
/** Runs `worker` until the returned stop() is called; stop() resolves once it has shut down. */
export function runInBackground(worker: AgentWorker): { stop(): Promise<void> } {
  let release!: () => void;
  const done = worker.runUntil(new Promise<void>((resolve) => (release = resolve)));
  return {
    stop: async () => {
      release();
      await done;
    },
  };
}

export async function runTask(h: Harness, input: Omit<TaskInput, 'model'> & { script: string }, agents?: AgentDefinition[]): Promise<TaskRun> {
  const { script, ...rest } = input;
  const taskId = h.taskId();
  const worker = await h.worker(agents);
  return worker.runUntil(async () => {
    await h.client.start({ ...rest, model: { provider: 'scripted', script } }, { taskId });
    const outcome = await h.client.result(taskId).then(
      (result) => ({ result }),
      (failure: Error) => ({ failure }),
    );
    return { taskId, ...outcome, transcript: await h.client.transcript(taskId), view: await h.client.view(taskId) };
  });
}

/** The tool_result blocks of a transcript, in order. */
export function toolResultsOf(transcript: TranscriptView): ToolResultBlock[] {
  return transcript.messages
    .filter((m) => m.role === 'user' && Array.isArray(m.content))
    .flatMap((m) => m.content as { type: string }[])
    .filter((b): b is ToolResultBlock => b.type === 'tool_result');
}

/** Polls the task's status until `accept` holds (a worker must be running). */
export async function statusWhen(h: Harness, taskId: string, accept: (s: TaskStatus) => boolean, timeoutMs = 30_000): Promise<TaskStatus> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await h.client.status(taskId).catch(() => undefined);
    if (status && accept(status)) return status;
    if (Date.now() > deadline) throw new Error(`status of ${taskId} never matched; last: ${JSON.stringify(status?.events.slice(-3))}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The parsed content of each tool_result, in order. */
export function parsedResults(transcript: TranscriptView): { error?: ToolError; [k: string]: unknown }[] {
  return toolResultsOf(transcript).map((r) => JSON.parse(r.content));
}

/** `durable-agent worker` as a child process on this harness's server, task queue, workspace and orders service. */
export function spawnWorker(h: Harness, extraArgs: string[] = [], env: NodeJS.ProcessEnv = {}): ChildProcess {
  return spawnCli(
    [
      'worker',
      '--address',
      h.server.address,
      '--task-queue',
      h.taskQueue,
      '--workspace',
      h.workspaceDir,
      // The demo agent's orders service; an agents module reads it from ORDERS_URL (--agents takes no demo settings).
      ...(extraArgs.includes('--agents') ? [] : ['--orders-url', h.orders.url]),
      ...extraArgs,
    ],
    {
      ORDERS_URL: h.orders.url,
      // As the harness's own workers: each worker started becomes its deployment's current build.
      DURABLE_AGENT_BOOTSTRAP: 'always',
      // The same scripts and the same blob store as the harness's own workers: a task moves between them.
      DURABLE_AGENT_SCRIPT_DIRS: h.tmpDir,
      DURABLE_AGENT_BLOB_STORE: `file:${path.join(h.tmpDir, 'blobs')}`,
      ...env,
    },
  );
}

/** The family name a root task's claims are kept under (`<taskId>/<first run id>`, protocol/fork.ts familyOf). */
export async function familyNameOf(h: Harness, taskId: string): Promise<string> {
  const started = (await h.client.history(taskId)).events![0]!.workflowExecutionStartedEventAttributes!;
  return `${taskId}/${started.firstExecutionRunId}`;
}
