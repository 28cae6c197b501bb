/**
 * A worker that runs `agentTask` workflows and the agent activities for the given agents.
 */
import { NativeConnection, Worker, type State, type WorkerOptions } from '@temporalio/worker';
import { agentQueue, type AgentDefinition } from '../agents/define-agent';
import { DEFAULT_TASK_QUEUE } from '../protocol/definitions';
import { loadConnectionConfig } from '../client/connection-config';
import { durableAgent, type DurableAgentPluginOptions } from './plugin';
import { agentsFingerprint } from './agents-fingerprint';
import { checkBuildAgents, recordBuildAgents, type QueueAgents } from './build-agents';
import { bootstrapCurrentVersion, deploymentOptionsOf, resolveVersioning, versioningFromEnvironment, type ResolvedVersioning, type VersioningOptions } from './versioning';

export { DEFAULT_MAX_CACHED_WORKFLOWS, DEFAULT_STICKY_TIMEOUT_MS } from './plugin';

/** The server's default matching.maxTaskQueuesInDeploymentVersion. */
export const MAX_QUEUES_PER_BUILD = 100;

/** The plugin's options (what the engine serves, and how), plus where and on which queues the Workers run. */
export interface AgentWorkerOptions extends Omit<DurableAgentPluginOptions, 'taskQueue'> {
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
  /** Passed through to Worker.create (concurrency, cache size, shutdown grace time...). */
  workerOptions?: Partial<WorkerOptions>;
  /**
   * Worker Deployment Versioning (docs/deploy.md): the Workers join a deployment as one build, and
   * `agentTask` runs Pinned to the build it started on, so no running task meets a code change
   * mid-run. Default: on, with the default deployment and build id (package version + workflow code
   * hash + the served agents' fingerprint). `false` (or DURABLE_AGENT_VERSIONING=0 where the option is not given): unversioned, every
   * worker takes every task, and a change to workflow code is safe only once older tasks have finished.
   */
  versioning?: boolean | VersioningOptions;
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
    /** Runs once after every Worker has stopped. The plugin's own MCP servers and spans are released by the plugin itself. */
    private readonly afterStop: () => Promise<void> = async () => undefined,
    /** The deployment and build these Workers run as, when versioned. */
    readonly version?: ResolvedVersioning,
    /** Runs once when the Workers start (a first build making itself current, the build's agents recorded). */
    private readonly onStart: (stopped: AbortSignal) => Promise<void> = async () => undefined,
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
    const stopped = new AbortController();
    try {
      // Never fails the Workers: a build that could not make itself current waits for `deploy promote`,
      // and one whose agents are not recorded is only checked less (build-agents.ts).
      this.onStart(stopped.signal).catch((err: unknown) => {
        // A request cut off by this worker's own stop is not a failure to report.
        if (!stopped.signal.aborted) console.error(`worker: could not make the build current or record its agents: ${(err as Error).message}`);
      });
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
      stopped.abort();
      await this.afterStop();
    }
  }

  /** Runs until `fnOrPromise` settles, then shuts down and waits for the Workers; its result, or the Workers' failure. */
  async runUntil<R>(fnOrPromise: Promise<R> | (() => Promise<R>)): Promise<R> {
    const running = this.run();
    const stoppedFirst = running.then(() => {
      throw new Error("The worker stopped before runUntil's work was done");
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

/**
 * The short path: a durableAgent plugin (plugin.ts) and one Temporal Worker per queue it serves,
 * run and stopped together. The plugin releases its MCP pool and tracing after the last one stops.
 */
export async function createAgentWorker(options: AgentWorkerOptions): Promise<AgentWorker> {
  if (options.agents.length === 0) throw new TypeError('createAgentWorker needs at least one agent');
  const { connection: givenConnection, namespace, legacyTaskQueue: _legacy, workerOptions, versioning, ...pluginOptions } = options;
  const wanted = versioning ?? versioningFromEnvironment();
  const bundle = options.workflowBundle ?? workerOptions?.workflowBundle;
  const version = wanted ? resolveVersioning(wanted, bundle && 'codePath' in bundle ? bundle.codePath : undefined, agentsFingerprint(options.agents)) : undefined;
  const planned = queuesOf(options);
  const served: QueueAgents[] = planned.map(({ taskQueue, agents }) => ({ taskQueue, fingerprint: agentsFingerprint(agents), agents: agents.map((a) => a.name).sort() }));
  // The server registers at most this many task queues in one deployment version; a versioned
  // Worker on one more never receives its tasks (they wait in the queue's unversioned backlog).
  if (version && planned.length > MAX_QUEUES_PER_BUILD) {
    throw new TypeError(
      `createAgentWorker: ${planned.length} task queues (one per agent, and the legacy one) in one versioned build; the server registers at most ${MAX_QUEUES_PER_BUILD} queues in a deployment version (matching.maxTaskQueuesInDeploymentVersion). Route agents to shared queues (an agent's taskQueue, or the taskQueue option), or split them across deployments`,
    );
  }
  // Made before connecting: it refuses agents that name approvers without trusted keys.
  const plugin = durableAgent(pluginOptions);
  const config = loadConnectionConfig(namespace ? { namespace } : {});
  const connection = givenConnection ?? (await NativeConnection.connect(config.connectionOptions));
  const ns = namespace ?? config.namespace;
  if (version) {
    try {
      await checkBuildAgents(connection.workflowService, ns, version, served);
    } catch (err) {
      if (!givenConnection) await connection.close();
      throw err;
    }
  }
  const queues: QueueWorker[] = [];
  for (const { taskQueue } of planned) {
    const worker = await Worker.create({
      connection,
      namespace: ns,
      taskQueue,
      ...(version ? { workerDeploymentOptions: deploymentOptionsOf(version) } : {}),
      ...workerOptions,
      plugins: [plugin, ...(workerOptions?.plugins ?? [])],
    });
    queues.push({ taskQueue, agents: plugin.agentsFor(taskQueue).map((a) => a.name), worker });
  }
  if (!version) return new AgentWorker(queues);
  const service = connection.workflowService;
  return new AgentWorker(queues, undefined, version, async (stopped) => {
    await Promise.all([version.bootstrap ? bootstrapCurrentVersion(service, ns, version, { signal: stopped }) : undefined, recordBuildAgents(service, ns, version, served, { signal: stopped })]);
  });
}
