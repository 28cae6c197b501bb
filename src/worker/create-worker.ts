/**
 * A worker that runs `agentTask` workflows and the agent activities for the given agents.
 */
import { NativeConnection, Worker, type State, type WorkerOptions } from '@temporalio/worker';
import { createActivities, type ActivityDependencies } from '../activities';
import { agentQueue, type AgentDefinition } from '../agents/define-agent';
import type { BlobStore } from '../blobs/blob-store';
import { openBlobStore } from '../blobs/open-blob-store';
import { createDataConverter, type CodecOptions } from '../codec';
import { DEFAULT_TASK_QUEUE } from '../protocol/definitions';
import { cachedWorkflowBundle } from './workflow-bundle';
import { flushTracing, workerTracing, type TelemetryOptions } from '../telemetry/worker-tracing';
import { loadConnectionConfig } from '../client/connection-config';
import { McpClientPool } from '../mcp/pool';
import { requireTrustedKeysFor, trustedKeysFromEnvironment } from '../approvers/keys';

/** Workflows kept in the worker's memory between steps (DURABLE_AGENT_MAX_CACHED_WORKFLOWS overrides). */
export const DEFAULT_MAX_CACHED_WORKFLOWS = 200;

/**
 * How long a task's next workflow task may wait on the sticky queue of the worker that ran its last
 * one before the server hands it to any worker (DURABLE_AGENT_STICKY_TIMEOUT_MS overrides; the SDK's
 * own default is 10 s). After a worker is SIGKILLed, its tasks' next steps wait this long on the dead
 * worker's queue (the server calls a sticky worker gone only 10 s after its last poll), on top of
 * the heartbeat timeout that noticed the dead tool call: with 10 s a task moved again ~16 s after
 * the kill, with 1 s ~7.1 s; 0.5 s measured the same (the server fired it after 0.94 s: it does
 * not honour less than about a second), so 1 s (docs/performance.md). The price: a worker whose workflow task slots stay full longer than
 * this sends some tasks to the shared queue, where they are replayed from history (300 tasks at
 * once on 2 cores: 95 such replays at 1 s, none at 10 s; the same wall time). Correct either way,
 * only more CPU: raise it for workers that run saturated on purpose.
 */
export const DEFAULT_STICKY_TIMEOUT_MS = 1_000;

export interface AgentWorkerOptions {
  agents: AgentDefinition[];
  /** Default: Temporal's environment configuration (see loadConnectionConfig). */
  connection?: NativeConnection;
  /** Default: from the environment configuration, else `default`. */
  namespace?: string;
  /**
   * One queue for all of `agents` (a single Temporal Worker), chosen by you: clients must start the
   * tasks on it, and no worker serving other agents may poll it. Default: each agent's own queue
   * (`durable-agent.<agent>`, or the agent's declared taskQueue), one Temporal Worker per queue
   * serving only the agents routed to it.
   */
  taskQueue?: string;
  /**
   * Also poll the queue every task shared before work was routed by agent (`durable-agent`), with
   * all of `agents`, so tasks started on it before the upgrade finish. Default: on unless
   * `taskQueue` is given.
   */
  legacyTaskQueue?: boolean;
  /** A prebuilt bundle (bundleWorkflowCode), e.g. one per test file. Default: cachedWorkflowBundle(), built once per version of the workflow code under `<stateDir>/bundles`. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  modelEnv?: ActivityDependencies['modelEnv'];
  /** Your own Model implementations, chosen by a task with `{ provider: 'custom', name }`. */
  models?: ActivityDependencies['models'];
  /** Where `inform` escalations are POSTed. Default: DURABLE_AGENT_WEBHOOK_URL. */
  webhookUrl?: string;
  /** USD per million tokens per model, over the defaults (see models/pricing.ts). */
  prices?: ActivityDependencies['prices'];
  /** Tool results longer than this (JSON chars) are cut before they enter history. Default 50 000. */
  maxToolResultChars?: number;
  /**
   * Where large content goes (the claim check). Default: openBlobStore(): DURABLE_AGENT_BLOB_STORE
   * (`file:/abs/dir` or `postgres://...`), else `<state dir>/blobs`, behind a per-worker LRU cache,
   * encrypted at rest with `codec`'s keys when encryption is on. Workers on several machines must share one store.
   */
  blobStore?: BlobStore;
  /**
   * Public keys of the front ends (inbox, operators' CLIs) trusted to vouch for who approves. Default:
   * DURABLE_AGENT_APPROVER_KEYS (`KEYID:HEX` entries, `local` for the state dir's key); none: dev mode,
   * decisions recorded as unverified. See docs/approvers.md.
   */
  approverKeys?: ActivityDependencies['approverKeys'];
  /** Payload codecs (compression). Must match the clients' (TaskClient.connect and the CLI use the same defaults). */
  codec?: CodecOptions;
  /**
   * The worker's MCP connections (agents' `mcpServers`). Default: a pool of this worker's own, closed
   * (its stdio servers stopped) when the worker stops; a pool you pass is yours to close.
   */
  mcp?: McpClientPool;
  /**
   * Traces of every task (docs/observability.md). Default: from the OTEL_* environment variables
   * (an OTLP/HTTP endpoint), off when none is set; `false`: off whatever the environment says. With
   * tracing on, a `workflowBundle` you pass must include TRACING_WORKFLOW_MODULE (src/telemetry) in
   * its workflowInterceptorModules.
   */
  telemetry?: TelemetryOptions | false;
  /** Passed through to Worker.create (concurrency, cache size, shutdown grace time...). */
  workerOptions?: Partial<WorkerOptions>;
}

/** The cached bundle; where it cannot be written (a read-only folder), bundling in this process as before. */
async function defaultWorkflowCode(failureConverterPath?: string, workflowInterceptorModules?: string[]): Promise<Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath'>> {
  try {
    return {
      workflowBundle: await cachedWorkflowBundle(undefined, {
        ...(failureConverterPath ? { failureConverterPath } : {}),
        ...(workflowInterceptorModules ? { workflowInterceptorModules } : {}),
      }),
    };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EACCES' && code !== 'EROFS' && code !== 'EPERM') throw err;
    console.error(`warning: cannot cache the workflow bundle (${(err as Error).message}); bundling in this process`);
    return { workflowsPath: require.resolve('../workflows') };
  }
}

/** The Temporal Workers of one agent worker: one per task queue. */
export interface QueueWorker {
  taskQueue: string;
  /** The agents this queue's activities serve. */
  agents: string[];
  worker: Worker;
}

/**
 * What createAgentWorker returns: the Temporal Workers polling each agent's queue (and the legacy
 * shared one), run and stopped together. Offers the parts of Worker's API its callers use.
 */
export class AgentWorker {
  private running: Promise<void> | undefined;

  constructor(
    readonly queues: QueueWorker[],
    /** Runs once after every Worker has stopped (MCP servers, the last spans). */
    private readonly afterStop: () => Promise<void>,
  ) {}

  get taskQueues(): string[] {
    return this.queues.map((q) => q.taskQueue);
  }

  /** RUNNING while any Worker runs; FAILED if one failed; else the state they share. */
  getState(): State {
    const states = this.queues.map((q) => q.worker.getState());
    if (states.includes('FAILED')) return 'FAILED';
    if (states.includes('RUNNING')) return 'RUNNING';
    return states.every((s) => s === states[0]) ? states[0]! : 'STOPPING';
  }

  /** Starts a graceful shutdown of every Worker still running. */
  shutdown(): void {
    for (const { worker } of this.queues) if (worker.getState() === 'RUNNING') worker.shutdown();
  }

  /** Resolves when every Worker has stopped (SIGINT/SIGTERM, shutdown()); a Worker that fails stops the others. */
  run(): Promise<void> {
    this.running ??= this.runAll();
    return this.running;
  }

  private async runAll(): Promise<void> {
    try {
      const outcomes = await Promise.allSettled(
        this.queues.map(({ worker }) =>
          worker.run().catch((err: unknown) => {
            // One queue left unserved would strand its agents' tasks while the process looks alive.
            this.shutdown();
            throw err;
          }),
        ),
      );
      const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
      if (failed) throw failed.reason;
    } finally {
      await this.afterStop();
    }
  }

  /** Runs until `fnOrPromise` settles, then shuts down and waits for the Workers; its result, or the Workers' failure. */
  async runUntil<R>(fnOrPromise: Promise<R> | (() => Promise<R>)): Promise<R> {
    const running = this.run();
    const stoppedFirst = running.then(() => {
      throw new Error('The worker stopped before runUntil\'s work was done');
    });
    stoppedFirst.catch(() => undefined); // only raced: settling later must not be an unhandled rejection
    let result: R;
    try {
      result = await Promise.race([typeof fnOrPromise === 'function' ? fnOrPromise() : fnOrPromise, stoppedFirst]);
    } catch (err) {
      this.shutdown();
      await running.catch(() => undefined);
      throw err;
    }
    this.shutdown();
    await running;
    return result;
  }
}

/** Agents grouped by the queue they are served on, in the order given. */
function queuesOf(options: AgentWorkerOptions): { taskQueue: string; agents: AgentDefinition[] }[] {
  const byQueue = new Map<string, AgentDefinition[]>();
  for (const agent of options.agents) {
    const queue = options.taskQueue ?? agentQueue(agent);
    byQueue.set(queue, [...(byQueue.get(queue) ?? []), agent]);
  }
  const legacy = options.legacyTaskQueue ?? options.taskQueue === undefined;
  if (legacy && !byQueue.has(DEFAULT_TASK_QUEUE)) byQueue.set(DEFAULT_TASK_QUEUE, options.agents);
  return [...byQueue].map(([taskQueue, agents]) => ({ taskQueue, agents }));
}

export async function createAgentWorker(options: AgentWorkerOptions): Promise<AgentWorker> {
  if (options.agents.length === 0) throw new TypeError('createAgentWorker needs at least one agent');
  // Before connecting: an agent that names its approvers must not run with identities unchecked.
  const approverKeys = options.approverKeys ?? trustedKeysFromEnvironment();
  requireTrustedKeysFor(options.agents, approverKeys);
  const config = loadConnectionConfig(options.namespace ? { namespace: options.namespace } : {});
  const connection = options.connection ?? (await NativeConnection.connect(config.connectionOptions));
  const dataConverter = createDataConverter(options.codec);
  const mcp = options.mcp ?? new McpClientPool();
  const tracing = workerTracing(options.telemetry, (agent, tool) => options.agents.find((a) => a.name === agent)?.tool(tool)?.effect);
  const workflowCode = options.workflowBundle
    ? { workflowBundle: options.workflowBundle }
    : await defaultWorkflowCode(dataConverter.failureConverterPath, tracing?.interceptors.workflowModules);
  // The codec's keys encrypt blobs at rest too: one key configuration for history and store.
  const blobStore = options.blobStore ?? openBlobStore(undefined, options.codec ? { codec: options.codec } : {});
  const queues: QueueWorker[] = [];
  for (const { taskQueue, agents } of queuesOf(options)) {
    // Only the legacy queue carries other workers' agents by design; an explicit queue is the user's routing.
    const shared = taskQueue === DEFAULT_TASK_QUEUE && options.taskQueue === undefined;
    const worker = await Worker.create({
      connection,
      namespace: options.namespace ?? config.namespace,
      taskQueue,
      ...workflowCode,
      dataConverter,
      activities: createActivities({
        agents,
        blobStore,
        ...(options.modelEnv ? { modelEnv: options.modelEnv } : {}),
        ...(options.models ? { models: options.models } : {}),
        ...(options.webhookUrl ? { webhookUrl: options.webhookUrl } : {}),
        ...(options.prices ? { prices: options.prices } : {}),
        ...(options.maxToolResultChars ? { maxToolResultChars: options.maxToolResultChars } : {}),
        approverKeys,
        mcp,
        ...(shared ? { sharedQueue: true } : {}),
      }),
      shutdownGraceTime: '10s',
      // Tasks can wait days for a person: bound the cache so waiting tasks leave memory (they are
      // replayed from history when a decision arrives) instead of growing the worker with their number.
      maxCachedWorkflows: Number(process.env.DURABLE_AGENT_MAX_CACHED_WORKFLOWS ?? DEFAULT_MAX_CACHED_WORKFLOWS),
      stickyQueueScheduleToStartTimeout: Number(process.env.DURABLE_AGENT_STICKY_TIMEOUT_MS ?? DEFAULT_STICKY_TIMEOUT_MS),
      ...(tracing ? { interceptors: tracing.interceptors, sinks: tracing.sinks } : {}),
      ...options.workerOptions,
    });
    queues.push({ taskQueue, agents: agents.map((a) => a.name), worker });
  }
  return new AgentWorker(queues, async () => {
    // A pool passed in is the caller's to close; ours stops its stdio servers with the worker.
    if (!options.mcp) await mcp.close();
    if (tracing) await flushTracing(tracing);
  });
}
