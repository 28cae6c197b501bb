/**
 * durable-agent as a Temporal plugin, the convention Temporal's own AI integrations follow:
 * `Worker.create({ connection, taskQueue, plugins: [durableAgent({ agents })] })` gets the agent
 * activities, the `agentTask` workflow bundle, the data converter, tracing and the worker defaults;
 * `new Client({ connection, plugins: [durableAgentClient()] })` gets the same data converter.
 * createAgentWorker is the short path: it makes one of these and a Worker per agent queue.
 *
 * Not a SimplePlugin subclass: its configureWorker is synchronous, and the prebuilt bundle is found
 * or built asynchronously. The merging itself is SimplePlugin's (appended activities and
 * interceptors, a data converter laid over the Worker's own), so it behaves like Temporal's plugins.
 */
import { hostname } from 'node:os';
import type { ClientOptions, ClientPlugin } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { SimplePlugin } from '@temporalio/plugin';
import { Runtime, type ReplayWorkerOptions, type Worker, type WorkerOptions, type WorkerPlugin } from '@temporalio/worker';
import { createActivities, type ActivityDependencies } from '../activities';
import { ConversationCopies } from '../activities/conversation-copies';
import { heartbeatIntervalMs } from '../activities/heartbeat';
import { agentQueue, servedSubagentsProblem, type AgentDefinition } from '../agents/define-agent';
import { requireTrustedKeysFor, trustedKeysFromEnvironment } from '../approvers/keys';
import type { BlobStore } from '../blobs/blob-store';
import { openBlobStore } from '../blobs/open-blob-store';
import { createDataConverter, type CodecOptions } from '../codec';
import { McpClientPool } from '../mcp/pool';
import { DEFAULT_TASK_QUEUE } from '../protocol/definitions';
import { flushTracing, workerTracing, type TelemetryOptions, type WorkerTracing } from '../telemetry/worker-tracing';
import { cachedWorkflowBundle } from './workflow-bundle';
import { openDeadWorkerGuard, resolveDeadWorkerOptions, type DeadWorkerGuard, type DeadWorkerOptions } from './dead-workers';
import { HEARTBEAT_TIMEOUT_MS } from '../workflows/base/activity-options';
import { checkModels } from '../models/model-capabilities';
import { openVault } from '../vault/open-vault';
import { CredentialUnavailableError, openedVault, resolveVaultRef } from '../vault/credentials';
import type { Vault } from '../vault/vault';

export const PLUGIN_NAME = 'durable-agent';

/** Workflows kept in the worker's memory between steps (DURABLE_AGENT_MAX_CACHED_WORKFLOWS overrides). */
export const DEFAULT_MAX_CACHED_WORKFLOWS = 200;

/**
 * How long a task's next workflow task may wait on the sticky queue of the worker that ran its last
 * one before the server hands it to any worker (DURABLE_AGENT_STICKY_TIMEOUT_MS overrides; the SDK's
 * own default is 10 s). After a worker is SIGKILLed, its tasks' next steps wait this long on the dead
 * worker's queue (the server calls a sticky worker gone only 10 s after its last poll): with 10 s a
 * task moved again ~16 s after the kill, with 1 s ~7.1 s. A call retried after a heartbeat timeout
 * now skips this wait (activities/sticky-release.ts); it still applies to a step that no retry
 * precedes, such as a signal or a timer that fires after the worker died. The price: a worker whose
 * workflow task slots stay full longer than this sends some tasks to the shared queue, where they are
 * replayed from history (300 tasks at once on 2 cores: 95 such replays at 1 s, none at 10 s; the same
 * wall time). Correct either way, only more CPU: raise it for workers that run saturated on purpose.
 */
export const DEFAULT_STICKY_TIMEOUT_MS = 1_000;

/**
 * The longest the SDK holds a heartbeat back before sending it (the SDK's default is 80% of the
 * heartbeat timeout, at most 60 s): the activities' own timer interval for HEARTBEAT_TIMEOUT_MS
 * (1 s), so every timer beat reaches the server and the timeout has three chances, not one
 * beat every 2.4 s. A tool that beats in a tight loop is still held to one call per interval.
 */
export const DEFAULT_MAX_HEARTBEAT_THROTTLE_MS = heartbeatIntervalMs(HEARTBEAT_TIMEOUT_MS);

export interface DurableAgentPluginOptions {
  agents: AgentDefinition[];
  /**
   * The one queue all of `agents` are served on (createAgentWorker's `taskQueue`); a Worker on any
   * other queue but the legacy `durable-agent` one (also all of them, not shared) is refused. Default: a Worker serves the agents routed to its queue
   * (`durable-agent.<agent>` or their declared taskQueue); on the legacy `durable-agent` queue, or a
   * queue no agent is routed to (a queue of your own), all of them.
   */
  taskQueue?: string;
  /** A prebuilt bundle (bundleWorkflowCode). Default: a Worker's own workflowsPath/workflowBundle if it has one, else cachedWorkflowBundle(). */
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
   * How many tasks' conversations each Temporal Worker keeps, so a model call's input carries only
   * what changed since the task's previous call (docs/performance.md). A call whose task is not kept
   * asks the task for its conversation (a query). Default: the Worker's maxCachedWorkflows (200
   * unless set); 0 keeps none. A ConversationCopies
   * instance is used as it is, so whoever made it can read its hits and asks (`stats`).
   */
  conversationCopies?: number | ConversationCopies;
  /**
   * Model calls of the runs this worker describes carry the whole conversation, as releases before
   * conversation changes did: for a rolling upgrade while older workers still poll the queue (they
   * fail a call that carries only a change, and it is retried until a newer worker takes it).
   * Default false.
   */
  wholeConversations?: boolean;
  /** The claim check's store. Default: openBlobStore() (DURABLE_AGENT_BLOB_STORE, encrypted with `codec`'s keys). */
  blobStore?: BlobStore;
  /** Where agents' memory versions are kept (docs/memory.md). Default: beside the blob store (see ActivityDependencies.memoryLog). */
  memoryLog?: ActivityDependencies['memoryLog'];
  /** Front ends trusted to vouch for approvers. Default: DURABLE_AGENT_APPROVER_KEYS (docs/approvers.md). */
  approverKeys?: ActivityDependencies['approverKeys'];
  /** Payload codecs; clients need the same (durableAgentClient({ codec })). */
  codec?: CodecOptions;
  /** Where agents' credentials are resolved at each tool call. Default: openVault() with `codec`'s keys, at first use (docs/credentials.md). */
  vault?: Vault;
  /** MCP connections. Default: the plugin's own pool, closed when the last of its running Workers stops; a pool you pass is yours to close. */
  mcp?: McpClientPool;
  /** Traces (docs/observability.md). Default: from OTEL_*; `false`: off. A bundle you pass must include TRACING_WORKFLOW_MODULE when on. */
  telemetry?: TelemetryOptions | false;
  /**
   * The dead-worker watch (docs/performance.md, "Recovery after SIGKILL"): each worker records its running
   * calls on this machine, and fails those of a worker whose process is gone, so they are retried at
   * once instead of after the heartbeat timeout. Default: on (DURABLE_AGENT_DEAD_WORKERS=0 turns it
   * off); `false`: off.
   */
  deadWorkers?: boolean | DeadWorkerOptions;
}

/** What a Worker on `taskQueue` serves, by the rules of DurableAgentPluginOptions.taskQueue. */
export function agentsForQueue(agents: AgentDefinition[], taskQueue: string, explicitQueue?: string): { agents: AgentDefinition[]; sharedQueue: boolean } {
  if (explicitQueue !== undefined) {
    // A Worker elsewhere would take tasks of agents the user routed to explicitQueue alone; the
    // legacy queue is allowed (createAgentWorker's legacyTaskQueue: true beside an explicit queue).
    if (taskQueue !== explicitQueue && taskQueue !== DEFAULT_TASK_QUEUE) throw new TypeError(`This durable-agent plugin serves task queue "${explicitQueue}"; the Worker polls "${taskQueue}"`);
    return { agents, sharedQueue: false };
  }
  const routed = agents.filter((a) => agentQueue(a) === taskQueue);
  return { agents: routed.length > 0 ? routed : agents, sharedQueue: taskQueue === DEFAULT_TASK_QUEUE };
}

/** The cached bundle; where it cannot be written (a read-only folder), bundling in the Worker as before. */
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

/** What the Workers of one plugin share while they run: made with the first, released after the last. */
interface Shared {
  mcp: McpClientPool;
  tracing: WorkerTracing | undefined;
  /** One dead-worker guard per namespace the Workers run in. */
  deadWorkers: Map<string, Promise<DeadWorkerGuard | undefined>>;
}

export class DurableAgentPlugin implements WorkerPlugin, ClientPlugin {
  readonly name = PLUGIN_NAME;
  readonly dataConverter: DataConverter;
  private readonly approverKeys: NonNullable<ActivityDependencies['approverKeys']>;
  private shared: Shared | undefined;
  private blobStore: BlobStore | undefined;
  private vault: Vault | undefined;
  private running = 0;
  private readonly deadWorkerOptions: ReturnType<typeof resolveDeadWorkerOptions>;

  constructor(readonly options: DurableAgentPluginOptions) {
    if (options.agents.length === 0) throw new TypeError('durableAgent needs at least one agent');
    // A delegation to an agent nobody serves would leave its child task waiting for ever.
    const subagents = servedSubagentsProblem(options.agents);
    if (subagents) throw new TypeError(`durableAgent cannot start: ${subagents}`);
    // At construction, before any connection: an agent that names its approvers must not run with identities unchecked.
    this.approverKeys = options.approverKeys ?? trustedKeysFromEnvironment();
    requireTrustedKeysFor(options.agents, this.approverKeys);
    // Your own models, checked now: a capability that is not allowed is a TypeError naming the model and the field.
    checkModels(options.models);
    this.dataConverter = createDataConverter(options.codec);
    this.deadWorkerOptions = resolveDeadWorkerOptions(options.deadWorkers);
  }

  /** The agents a Worker on `taskQueue` serves (see DurableAgentPluginOptions.taskQueue). */
  agentsFor(taskQueue: string): AgentDefinition[] {
    return agentsForQueue(this.options.agents, taskQueue, this.options.taskQueue).agents;
  }

  configureClient(options: Omit<ClientOptions, 'plugins'>): Omit<ClientOptions, 'plugins'> {
    return new SimplePlugin({ name: PLUGIN_NAME, dataConverter: this.dataConverter }).configureClient(options);
  }

  async configureWorker(options: WorkerOptions): Promise<WorkerOptions> {
    const o = this.options;
    const { agents, sharedQueue } = agentsForQueue(o.agents, options.taskQueue, o.taskQueue);
    const shared = this.acquire();
    // MCP servers' `authorization` references are read from the same vault, at each request.
    shared.mcp.useCredentials((ref, label) => {
      const opened = openedVault(() => this.vaultOf());
      if ('error' in opened) throw new CredentialUnavailableError(opened.error);
      return resolveVaultRef(opened.vault, ref, label);
    });
    const tracing = shared.tracing;
    const maxCachedWorkflows = options.maxCachedWorkflows ?? Number(process.env.DURABLE_AGENT_MAX_CACHED_WORKFLOWS ?? DEFAULT_MAX_CACHED_WORKFLOWS);
    const ownCode = options.workflowBundle !== undefined || options.workflowsPath !== undefined;
    const code = ownCode
      ? {}
      : this.options.workflowBundle
        ? { workflowBundle: this.options.workflowBundle }
        : await defaultWorkflowCode(this.dataConverter.failureConverterPath, tracing?.interceptors.workflowModules);
    const deadWorkers = await this.deadWorkerGuard(shared, options);
    const activityInterceptors = [...(tracing?.interceptors.activity ?? []), ...(deadWorkers ? [deadWorkers.interceptor] : [])];
    const activities = createActivities({
      agents,
      // The codec's keys encrypt blobs at rest too: one key configuration for history and store.
      blobStore: (this.blobStore ??= o.blobStore ?? openBlobStore(undefined, o.codec ? { codec: o.codec } : {})),
      ...(o.modelEnv ? { modelEnv: o.modelEnv } : {}),
      ...(o.models ? { models: o.models } : {}),
      ...(o.webhookUrl ? { webhookUrl: o.webhookUrl } : {}),
      ...(o.prices ? { prices: o.prices } : {}),
      ...(o.maxToolResultChars ? { maxToolResultChars: o.maxToolResultChars } : {}),
      ...(o.wholeConversations ? { wholeConversations: true } : {}),
      // As many runs as the workflow cache holds: a run the cache keeps is one whose model calls come
      // here, and a copy dropped before its run finishes costs each later call a query to the workflow
      // (with 1,000 tasks at once and 100 copies, most of them: issue 39).
      conversations: o.conversationCopies instanceof ConversationCopies ? o.conversationCopies : new ConversationCopies(o.conversationCopies ?? maxCachedWorkflows),
      ...(o.memoryLog ? { memoryLog: o.memoryLog } : {}),
      // Opened when a tool of an agent with credentials first runs: a worker without credentials never touches it.
      vault: () => this.vaultOf(),
      approverKeys: this.approverKeys,
      mcp: shared.mcp,
      // Only the legacy queue carries other workers' agents by design; an explicit queue is the user's routing.
      ...(sharedQueue ? { sharedQueue: true } : {}),
    });
    const merged = new SimplePlugin({
      name: PLUGIN_NAME,
      dataConverter: this.dataConverter,
      activities,
      ...code,
      ...(activityInterceptors.length > 0 ? { workerInterceptors: { activity: activityInterceptors, ...(tracing ? { workflowModules: tracing.interceptors.workflowModules } : {}) } } : {}),
    }).configureWorker(options);
    return {
      ...merged,
      // Defaults only: what the Worker's own options say wins.
      shutdownGraceTime: options.shutdownGraceTime ?? '10s',
      // Tasks can wait days for a person: bound the cache so waiting tasks leave memory (they are
      // replayed from history when a decision arrives) instead of growing the worker with their number.
      maxCachedWorkflows,
      stickyQueueScheduleToStartTimeout: options.stickyQueueScheduleToStartTimeout ?? Number(process.env.DURABLE_AGENT_STICKY_TIMEOUT_MS ?? DEFAULT_STICKY_TIMEOUT_MS),
      maxHeartbeatThrottleInterval: options.maxHeartbeatThrottleInterval ?? DEFAULT_MAX_HEARTBEAT_THROTTLE_MS,
      ...(tracing ? { sinks: { ...tracing.sinks, ...options.sinks } } : {}),
    };
  }

  /** Replay (Worker.runReplayHistories) needs the same workflow code and data converter, nothing else. */
  async configureReplayWorker(options: ReplayWorkerOptions): Promise<ReplayWorkerOptions> {
    const ownCode = options.workflowBundle !== undefined || options.workflowsPath !== undefined;
    const code = ownCode ? {} : this.options.workflowBundle ? { workflowBundle: this.options.workflowBundle } : await defaultWorkflowCode(this.dataConverter.failureConverterPath);
    return new SimplePlugin({ name: PLUGIN_NAME, dataConverter: this.dataConverter, ...code }).configureReplayWorker(options);
  }

  async runWorker(worker: Worker, next: (w: Worker) => Promise<void>): Promise<void> {
    this.running++;
    try {
      for (const guard of this.shared?.deadWorkers.values() ?? []) (await guard)?.start();
      await next(worker);
    } finally {
      // The last of this plugin's Workers to stop takes the MCP servers and the last spans with it.
      if (--this.running === 0) await this.release();
    }
  }

  private vaultOf(): Vault {
    this.vault ??= this.options.vault ?? openVault(this.options.codec ? { codec: this.options.codec } : {});
    return this.vault;
  }

  private acquire(): Shared {
    const o = this.options;
    this.shared ??= {
      mcp: o.mcp ?? new McpClientPool(),
      tracing: workerTracing(o.telemetry, (agent, tool) => o.agents.find((a) => a.name === agent)?.tool(tool)?.effect),
      deadWorkers: new Map(),
    };
    return this.shared;
  }

  /** The namespace's dead-worker guard, opened once per namespace by the first Worker configured in it. */
  private deadWorkerGuard(shared: Shared, options: WorkerOptions): Promise<DeadWorkerGuard | undefined> {
    const connection = options.connection;
    if (!this.deadWorkerOptions || !connection) return Promise.resolve(undefined);
    const namespace = options.namespace ?? 'default';
    let guard = shared.deadWorkers.get(namespace);
    if (!guard) {
      const logger = Runtime.instance().logger;
      guard = openDeadWorkerGuard(this.deadWorkerOptions, {
        connection,
        dataConverter: this.dataConverter,
        namespace,
        identity: options.identity ?? `${process.pid}@${hostname()}`,
        warn: (message) => logger.warn(message),
        log: (message) => logger.info(message),
      });
      shared.deadWorkers.set(namespace, guard);
    }
    return guard;
  }

  private async release(): Promise<void> {
    const shared = this.shared;
    if (!shared) return;
    // Workers configured later get fresh ones: a closed pool refuses every call.
    this.shared = undefined;
    await Promise.all([...shared.deadWorkers.values()].map(async (guard) => (await guard)?.stop()));
    if (!this.options.mcp) await shared.mcp.close();
    // The vault this plugin opened (a PostgreSQL pool); one you passed is yours to close.
    const vault = this.options.vault ? undefined : this.vault;
    this.vault = undefined;
    await vault?.close().catch(() => undefined);
    if (shared.tracing) await flushTracing(shared.tracing);
  }
}

/** The engine for `Worker.create({ plugins: [durableAgent({ agents })] })` (and a Client: it sets the data converter). */
export function durableAgent(options: DurableAgentPluginOptions): DurableAgentPlugin {
  return new DurableAgentPlugin(options);
}

/** For clients without agent modules: `new Client({ connection, plugins: [durableAgentClient()] })` decodes what the workers encode. */
export function durableAgentClient(options: { codec?: CodecOptions } = {}): ClientPlugin {
  return new SimplePlugin({ name: PLUGIN_NAME, dataConverter: createDataConverter(options.codec) });
}
