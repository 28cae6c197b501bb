/**
 * DBOS Transact on PostgreSQL, as an engine of the reliability suite. One PostgreSQL server for the
 * benchmark, one system database per run. Each worker is a separate process
 * (bench/peer/reliability/dbos-worker.ts) that the harness may SIGKILL; a new process launches DBOS,
 * whose recovery resumes the pending workflow from its last checkpointed step. The outcome, the
 * pending approval and a person's decision go through DBOSClient (bench/peer/reliability/dbos-client.ts),
 * from this process: a decision is a message stored in PostgreSQL, so it is kept while every worker
 * is down. Restarting the server restarts PostgreSQL under the running worker. A run the harness
 * will not kill runs the same worker code in the harness's process instead.
 *
 * DBOS's packages live in bench/peer (installed by the bench on first use), so this file loads the
 * peer's modules by path.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DBOS_POSTGRES_SETTINGS } from '../../dbos-peer';
import { ensurePeerInstalled } from '../../peer/ensure-peer';
import { startPostgres, type PostgresServer } from '../../../test/support/postgres';
import type { Engine, EngineRun, RunEnv, StartOptions } from '../engine';

const ROOT = path.resolve(__dirname, '../../..');
const WORKER = path.join(ROOT, 'bench/peer/reliability/dbos-worker.ts');
const CLIENT_MODULE = '../../peer/reliability/dbos-client';
const loadWorker = () => require(WORKER) as { runDbosWorker(config: unknown, stop?: Promise<void>): Promise<void> };

interface DbosRunClient {
  outcome(): Promise<{ status: 'answered'; text: string } | { status: 'failed'; error: string } | undefined>;
  pendingApproval(): Promise<{ id: string; tool: string; input: unknown } | undefined>;
  decide(toolUseId: string, approve: boolean): Promise<void>;
  close(): Promise<void>;
}
const loadClient = () => require(CLIENT_MODULE) as { openDbosRunClient(url: string, workflowId: string): Promise<DbosRunClient> };

export interface DbosEngineOptions {
  /** Send an Idempotency-Key with each write (default true: DBOS steps run at least once). */
  idempotencyKeys?: boolean;
}

export class DbosEngine implements Engine {
  readonly name: string;
  readonly description: string;
  private postgres?: PostgresServer;
  private runs = 0;

  constructor(private readonly options: DbosEngineOptions = {}) {
    const keys = options.idempotencyKeys !== false;
    this.name = keys ? 'dbos-postgres' : 'dbos-postgres-no-keys';
    this.description = `DBOS Transact workflow (a step per model call and per store call, approvals by setEvent/recv/send, the clerk as a child workflow) on PostgreSQL; a new process's launch recovers the workflow${keys ? '; writes carry an idempotency key' : ''}`;
  }

  async open(): Promise<void> {
    const installed = ensurePeerInstalled();
    if (!installed.ok) throw new Error(installed.reason);
    this.postgres = await startPostgres({ database: 'dbos_reliability', settings: { ...DBOS_POSTGRES_SETTINGS, max_connections: '100' } });
  }

  async close(): Promise<void> {
    await this.postgres?.stop();
    this.postgres = undefined;
  }

  async restartServer(): Promise<void> {
    await this.postgres!.restart();
  }

  async start(env: RunEnv, options: StartOptions): Promise<EngineRun> {
    this.runs += 1;
    // A system database per run: recovery in a new process takes over every pending workflow of its database.
    const systemDatabaseUrl = await this.postgres!.createDatabase(`dbos_run_${this.runs}`);
    const workflowId = env.runId;
    const config = {
      systemDatabaseUrl,
      workflowId,
      input: { prompt: env.task.trajectory.prompt, agent: env.task.agent, storeUrl: env.storeUrl, apiUrl: env.apiUrl, model: env.model, idempotencyKeys: this.options.idempotencyKeys !== false },
    };
    const configFile = path.join(env.workDir, 'dbos-worker.json');
    writeFileSync(configFile, JSON.stringify(config));
    let worker: ChildProcess | undefined;
    // A run that will not be killed runs its worker's work in this process (no process start per run).
    let inProcess: Promise<void> | undefined;
    let stopInProcess!: () => void;
    const stopped = new Promise<void>((resolve) => (stopInProcess = resolve));
    let launches = 0;
    const alive = () => worker !== undefined && worker.exitCode === null && worker.signalCode === null;
    const launch = () => {
      launches += 1;
      if (!options.killable) {
        inProcess = loadWorker().runDbosWorker(config, stopped);
        return;
      }
      const log = openSync(path.join(env.workDir, `worker-${launches}.log`), 'a');
      worker = spawn(process.execPath, ['--require', 'tsx/cjs', WORKER, configFile], { cwd: ROOT, stdio: ['ignore', log, log] });
      closeSync(log);
    };
    const exited = (child: ChildProcess) => new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));
    const stopWorker = async () => {
      if (!alive()) return;
      const child = worker!;
      child.kill('SIGKILL');
      await exited(child);
    };
    // The client reconnects per query (its pool), so it outlives a PostgreSQL restart.
    const client = await loadClient().openDbosRunClient(systemDatabaseUrl, workflowId);
    const decided = new Set<string>();

    launch();
    return {
      async outcome(timeoutMs) {
        const deadline = Date.now() + timeoutMs;
        for (;;) {
          const outcome = await client.outcome().catch(() => undefined);
          if (outcome) return outcome;
          if (Date.now() > deadline) throw new Error(`dbos run ${workflowId}: no outcome in ${timeoutMs} ms`);
          await new Promise((r) => setTimeout(r, 100));
        }
      },
      async pendingApproval() {
        const request = await client.pendingApproval().catch(() => undefined);
        // The request stays published until the workflow takes the decision: once decided, it is not pending.
        return request && !decided.has(request.id) ? { id: request.id, tool: request.tool, input: request.input } : undefined;
      },
      async decide(approval, approve) {
        try {
          await client.decide(approval.id, approve);
          decided.add(approval.id);
          return { delivered: true, detail: 'DBOSClient.send: stored in PostgreSQL for the workflow to recv' };
        } catch (err) {
          return { delivered: false, detail: (err as Error).message };
        }
      },
      async kill() {
        if (!options.killable) throw new Error('kill() on a run started with killable: false');
        await stopWorker();
      },
      async resume() {
        if (options.killable && !alive()) launch();
      },
      async dispose() {
        await stopWorker();
        // An in-process worker still running (the harness gave up on the run) stops and shuts DBOS down.
        stopInProcess();
        await inProcess?.catch(() => undefined);
        await client.close();
      },
    };
  }
}
