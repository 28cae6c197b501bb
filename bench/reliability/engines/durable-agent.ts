/**
 * durable-agent as the reliability harness runs it: one embedded Temporal dev server (its state in a
 * SQLite file, so it can be restarted mid-task) for the whole benchmark; per run, a task queue of
 * its own and a worker for the run's store and fake API. A killable run's worker is a
 * `durable-agent worker --agents` process (SIGKILLed by the harness); after the kill a worker in
 * this process takes over, as a standby worker would. Decisions go through TaskClient.decide, which
 * records a decision in the task's history even when no worker runs. The workers are unversioned:
 * every run has a task queue of its own, and the server registers at most 100 task queues in one
 * deployment version (matching.maxTaskQueuesInDeploymentVersion); a versioned worker on the 101st
 * never gets its tasks, which wait in the queue's unversioned backlog.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { connectClient } from '../../../src/client/client-connection';
import { TaskClient } from '../../../src/client/task-client';
import { createDataConverter } from '../../../src/codec';
import { startDevServer, freePort, type DevServer } from '../../../src/server/dev-server';
import { createAgentWorker, type AgentWorker } from '../../../src/worker/create-worker';
import { spawnCli, sigkill } from '../../../test/support/processes';
import { testWorkflowBundle } from '../../../test/support/test-bundle';
import type { Engine, EngineRun, PendingApproval, PersonAsk, RunEnv, RunOutcome, StartOptions } from '../engine';
import { durableStoreAgents, LEAD_AGENT, STORE_AGENT } from './durable-agents';

const AGENTS_MODULE = path.join(__dirname, 'durable-agents.ts');

export class DurableAgentEngine implements Engine {
  readonly name = 'durable-agent';
  readonly description = 'this project: the agent loop as a Temporal workflow (embedded dev server, SQLite file), model and tool calls as activities';
  private server?: DevServer;
  private dbDir?: string;
  private port?: number;
  private connection?: NativeConnection;
  private client?: TaskClient;
  private closeClient?: () => Promise<void>;
  private bundle?: { codePath: string };
  /**
   * A worker process started ahead for the next killable run (its start takes seconds): it serves a
   * queue of its own, idle until a run starts its task there. Only for the same store and API URLs
   * (the harness keeps them for a whole suite).
   */
  private spare?: { child: ChildProcess; taskQueue: string; urls: string };
  private spares = 0;
  /** The in-process worker of runs that will not be killed, kept while the store and API URLs stay the same. */
  private resident?: { taskQueue: string; urls: string; stop(): Promise<void> };
  /** Standby workers of past runs, shutting down in the background (a worker's shutdown takes up to ~30 s: its polls end). */
  private readonly stopping: Promise<void>[] = [];

  async open(): Promise<void> {
    // Errors only, the core's own lines too: a server restart makes every poller warn while it is down.
    try {
      Runtime.install({ logger: new DefaultLogger('ERROR'), telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' }, forward: {} } } });
    } catch {
      // A runtime was installed already in this process: keep it.
    }
    process.env.DURABLE_AGENT_SCRIPT_DIRS ??= os.tmpdir();
    this.dbDir = path.join(os.tmpdir(), `reliability-durable-${process.pid}-${Date.now()}`);
    mkdirSync(this.dbDir, { recursive: true });
    this.port = await freePort();
    await this.startServer();
    const [bundle, connection, clientConnection] = await Promise.all([
      testWorkflowBundle(),
      NativeConnection.connect({ address: this.server!.address }),
      connectClient({ address: this.server!.address }),
    ]);
    this.bundle = bundle;
    this.connection = connection;
    this.client = new TaskClient(new Client({ connection: clientConnection, dataConverter: createDataConverter() }));
    this.closeClient = () => clientConnection.close();
  }

  private async startServer(): Promise<void> {
    this.server = await startDevServer({ dbFile: path.join(this.dbDir!, 'temporal.db'), port: this.port!, logFile: path.join(this.dbDir!, 'server.log') });
  }

  /** Stops the server (at once, as a crash would) and starts it again on the same file and port; workers reconnect. */
  async restartServer(): Promise<void> {
    await this.server!.kill();
    await this.startServer();
  }

  async close(): Promise<void> {
    if (this.spare) await sigkill(this.spare.child);
    this.spare = undefined;
    await this.resident?.stop();
    this.resident = undefined;
    await Promise.all(this.stopping);
    await this.closeClient?.();
    await this.connection?.close();
    await this.server?.stop();
    if (this.dbDir) rmSync(this.dbDir, { recursive: true, force: true });
  }

  /** `durable-agent worker --agents` for this run's store and API, serving `taskQueue`. */
  private workerProcess(taskQueue: string, env: RunEnv): ChildProcess {
    const child = spawnCli(
      ['worker', '--agents', AGENTS_MODULE, '--address', this.server!.address, '--task-queue', taskQueue, '--workspace', this.dbDir!, '--bundle', this.bundle!.codePath, '--unversioned'],
      {
        STORE_URL: env.storeUrl,
        ANTHROPIC_API_KEY: 'sk-ant-bench',
        ANTHROPIC_BASE_URL: env.apiUrl,
      },
    );
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr = (stderr + d).slice(-4_000)));
    child.on('exit', (code) => {
      if (code) process.stderr.write(`durable-agent worker on ${taskQueue} exited by itself (${code}):\n${stderr}\n`);
    });
    return child;
  }

  async start(env: RunEnv, options: StartOptions): Promise<EngineRun> {
    const client = this.client!;
    const urls = `${env.storeUrl} ${env.apiUrl}`;
    let taskQueue = `rel-${env.runId}`;
    const taskId = env.runId;
    const workers: { stop(): Promise<void> }[] = [];
    let child: ChildProcess | undefined;
    const inProcessWorker = async (queue: string) => {
      const worker: AgentWorker = await createAgentWorker({
        agents: durableStoreAgents(env.storeUrl),
        connection: this.connection!,
        namespace: 'default',
        taskQueue: queue,
        workflowBundle: this.bundle!,
        modelEnv: { anthropicApiKey: 'sk-ant-bench', anthropicBaseURL: env.apiUrl },
        versioning: false,
      });
      const running = worker.run();
      return {
        stop: async () => {
          worker.shutdown();
          await running.catch(() => undefined);
        },
      };
    };
    if (options.killable) {
      if (this.spare?.urls === urls && this.spare.child.exitCode === null && this.spare.child.signalCode === null) {
        ({ child, taskQueue } = this.spare);
      } else {
        if (this.spare) await sigkill(this.spare.child);
        child = this.workerProcess(taskQueue, env);
      }
      // The next killable run's worker, started while this one runs.
      const spareQueue = `rel-spare-${process.pid}-${++this.spares}`;
      this.spare = { child: this.workerProcess(spareQueue, env), taskQueue: spareQueue, urls };
    } else {
      if (this.resident?.urls !== urls) {
        await this.resident?.stop();
        const queue = `rel-resident-${process.pid}-${++this.spares}`;
        this.resident = { taskQueue: queue, urls, ...(await inProcessWorker(queue)) };
      }
      taskQueue = this.resident.taskQueue;
    }

    await client.start(
      { agent: env.task.agent === 'lead' ? LEAD_AGENT : STORE_AGENT, prompt: env.task.trajectory.prompt, model: { provider: 'anthropic', model: env.model }, startedBy: 'bench' },
      { taskId, taskQueue },
    );

    // What the run's outcome() still waits on: settled before the engine closes its connections. A
    // status query on a closed task with no worker left can take a while to fail: close() waits for it.
    const inFlight: Promise<unknown>[] = [];
    const polls: Promise<unknown>[] = [];
    let over = false;
    const run: EngineRun = {
      outcome: async (timeoutMs) => {
        const result = client.result(taskId).then(
          (r): RunOutcome => (r.outcome === 'answered' ? { status: 'answered', text: r.text } : { status: 'failed', text: r.text, error: r.outcome }),
          (err: Error): RunOutcome => ({ status: 'failed', error: err.message }),
        );
        // A task blocked for a person (the engine's escalation) waits for one: here that ends the run.
        const blockedOrTimeout = (async (): Promise<RunOutcome> => {
          const deadline = Date.now() + timeoutMs;
          while (!over && Date.now() < deadline) {
            await new Promise((r) => setTimeout(r, 500));
            const blocked = await blockedIn(client, taskId);
            if (blocked) return { status: 'failed', error: `blocked for a person: ${blocked}` };
          }
          return { status: 'failed', error: `no outcome in ${timeoutMs} ms` };
        })();
        inFlight.push(result);
        polls.push(blockedOrTimeout);
        return Promise.race([result, blockedOrTimeout]).finally(() => (over = true));
      },
      pendingApproval: async () => {
        const status = await client.status(taskId).catch(() => undefined);
        const pending = status?.pendingApprovals[0];
        return pending ? { id: pending.id, tool: pending.tool, input: pending.input } : undefined;
      },
      decide: async (approval: PendingApproval, approve: boolean) => {
        const outcome = await client.decide(
          taskId,
          approve ? { kind: 'approve', input: { approvalId: approval.id, by: 'bench' } } : { kind: 'deny', input: { approvalId: approval.id, by: 'bench', reason: 'no' } },
        );
        return { delivered: true, detail: outcome.applied ? 'applied' : 'recorded' };
      },
      kill: async () => {
        if (child) await sigkill(child);
        child = undefined;
      },
      personAsks: () => asksIn(client, taskId),
      resume: async () => {
        // A worker in this process takes over: a standby worker, as deployments run one.
        workers.push(await inProcessWorker(taskQueue));
      },
      dispose: async () => {
        if (child) await sigkill(child);
        over = true;
        await client
          .handle(taskId)
          .terminate('reliability bench: run over')
          .catch(() => undefined);
        // The next run does not wait for this run's standby worker to finish shutting down; close() does.
        this.stopping.push(...workers.map((w) => w.stop()), ...polls.map((p) => p.then(() => undefined)));
        await Promise.all(inFlight);
      },
    };
    return run;
  }
}

/**
 * Every time the task or one of its sub-agent tasks (at any depth) asked a person, from `status`:
 * each approval (decided or pending, by id) and each block escalation. The approvals' own `confirm`
 * escalations are the same asks, so they are not counted again.
 */
async function asksIn(client: TaskClient, taskId: string, depth = 0): Promise<PersonAsk[]> {
  const status = await Promise.race([client.status(taskId), new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 15_000))]).catch(() => undefined);
  // The task's own status unreadable: the harness counts the decisions it was asked for instead (a child's: left out).
  if (!status) {
    if (depth === 0) throw new Error(`status of ${taskId} unavailable`);
    return [];
  }
  const approvals = new Map<string, PersonAsk>();
  for (const a of [...status.approvals, ...status.pendingApprovals]) approvals.set(a.id, { kind: 'approval', task: taskId, tool: a.tool, input: a.input, reason: a.reason });
  const blocks = status.escalations.filter((e) => e.level === 'block').map((e): PersonAsk => ({ kind: 'block', task: taskId, code: e.code, reason: e.reason }));
  const children = depth > 3 ? [] : await Promise.all((status.children ?? []).map((c) => asksIn(client, c.taskId, depth + 1)));
  return [...approvals.values(), ...blocks, ...children.flat()];
}

/** Why the task or one of its running sub-agent tasks (at any depth) is blocked for a person, if one is. */
async function blockedIn(client: TaskClient, taskId: string, depth = 0): Promise<string | undefined> {
  const status = await client.status(taskId).catch(() => undefined);
  if (!status) return undefined;
  if (status.agentStatus === 'blocked') return `${taskId}: ${status.blocked?.code ?? ''} ${status.blocked?.reason ?? ''}`.trim();
  if (depth > 3) return undefined;
  for (const child of status.children ?? []) {
    if (child.state !== 'running' && child.state !== 'waiting') continue;
    const why = await blockedIn(client, child.taskId, depth + 1);
    if (why) return why;
  }
  return undefined;
}
