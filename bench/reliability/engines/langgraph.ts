/**
 * LangGraph.js with its SQLite checkpointer, as an engine of the reliability suite. Each run is a
 * thread in a SQLite file of its own; every worker is a separate process
 * (bench/peer/reliability/langgraph-worker.ts) that the harness may SIGKILL. After a kill, a new
 * process resumes the thread from its last checkpoint by thread id. A person's decision is a new
 * process that resumes the thread with `Command({ resume })`, as LangGraph's users send one: LangGraph
 * keeps no inbox, so the decision exists only once that process has run the graph.
 *
 * A run the harness will not kill runs the same worker code in the harness's process instead.
 * LangGraph has no server: restarting one does not apply. Its packages live in bench/peer (installed
 * by the bench on first use), which is why only the worker process loads them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, openSync, closeSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ensurePeerInstalled } from '../../peer/ensure-peer';
import type { Engine, EngineRun, PendingApproval, RunEnv, RunOutcome, StartOptions } from '../engine';

const ROOT = path.resolve(__dirname, '../../..');
const WORKER = path.join(ROOT, 'bench/peer/reliability/langgraph-worker.ts');
const loadWorker = () => require(WORKER) as { runLangGraphWorker(config: unknown, signal?: AbortSignal): Promise<void> };

export interface LangGraphEngineOptions {
  /** Send an Idempotency-Key with each write (default true, as LangGraph's durable-execution guide asks for idempotent side effects). */
  idempotencyKeys?: boolean;
}

export class LangGraphEngine implements Engine {
  readonly name: string;
  readonly description: string;
  constructor(private readonly options: LangGraphEngineOptions = {}) {
    const keys = options.idempotencyKeys !== false;
    this.name = keys ? 'langgraph-sqlite' : 'langgraph-sqlite-no-keys';
    this.description = `LangGraph.js StateGraph (model, review-by-interrupt, tools with a RetryPolicy) checkpointed to SQLite with durability 'sync'; resumed from the thread's last checkpoint by a new process${keys ? '; writes carry an idempotency key' : ''}`;
  }

  async open(): Promise<void> {
    const installed = ensurePeerInstalled();
    if (!installed.ok) throw new Error(installed.reason);
  }

  async close(): Promise<void> {}

  async start(env: RunEnv, options: StartOptions): Promise<EngineRun> {
    const files = { dbFile: path.join(env.workDir, 'checkpoints.sqlite'), pendingFile: path.join(env.workDir, 'pending.json'), outcomeFile: path.join(env.workDir, 'outcome.json') };
    const base = {
      threadId: env.runId,
      prompt: env.task.trajectory.prompt,
      agent: env.task.agent,
      storeUrl: env.storeUrl,
      apiUrl: env.apiUrl,
      model: env.model,
      idempotencyKeys: this.options.idempotencyKeys !== false,
      ...files,
    };
    let worker: ChildProcess | undefined;
    // A run that will not be killed runs its worker's work in this process (no process start per run).
    let inProcess: Promise<void> | undefined;
    let inProcessDone = true;
    const stopInProcess = new AbortController();
    let launches = 0;
    const alive = () => (options.killable ? worker !== undefined && worker.exitCode === null && worker.signalCode === null : !inProcessDone);
    const launch = (extra: { mode: 'run' | 'decide'; decision?: { approve: boolean } }) => {
      launches += 1;
      if (!options.killable) {
        inProcessDone = false;
        inProcess = loadWorker()
          .runLangGraphWorker({ ...base, ...extra }, stopInProcess.signal)
          .finally(() => (inProcessDone = true));
        return;
      }
      const configFile = path.join(env.workDir, `worker-${launches}.json`);
      writeFileSync(configFile, JSON.stringify({ ...base, ...extra }));
      const log = openSync(path.join(env.workDir, `worker-${launches}.log`), 'a');
      worker = spawn(process.execPath, ['--require', 'tsx/cjs', WORKER, configFile], { cwd: ROOT, stdio: ['ignore', log, log] });
      closeSync(log);
    };
    const exited = (child: ChildProcess) => new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));
    const readJson = <T>(file: string): T | undefined => (existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as T) : undefined);

    launch({ mode: 'run' });
    return {
      async outcome(timeoutMs) {
        const deadline = Date.now() + timeoutMs;
        for (;;) {
          const outcome = readJson<RunOutcome>(files.outcomeFile);
          if (outcome) return outcome;
          if (Date.now() > deadline) throw new Error(`langgraph run ${env.runId}: no outcome in ${timeoutMs} ms`);
          await new Promise((r) => setTimeout(r, 100));
        }
      },
      async pendingApproval() {
        // The request a stopped worker left; a worker still running has not stopped at it yet.
        if (alive()) return undefined;
        const request = readJson<PendingApproval>(files.pendingFile);
        return request ? { id: request.id, tool: request.tool, input: request.input } : undefined;
      },
      async decide(_approval, approve) {
        if (alive()) await (options.killable ? exited(worker!) : inProcess);
        rmSync(files.pendingFile, { force: true });
        launch({ mode: 'decide', decision: { approve } });
        return { delivered: true, detail: 'a new process resumed the thread with Command({ resume })' };
      },
      async kill() {
        if (!options.killable) throw new Error('kill() on a run started with killable: false');
        if (!alive()) return;
        const child = worker!;
        child.kill('SIGKILL');
        await exited(child);
      },
      async resume() {
        if (!alive()) launch({ mode: 'run' });
      },
      async dispose() {
        if (!options.killable) {
          // A run still going when the harness gives up on it is aborted (LangGraph's config.signal).
          stopInProcess.abort();
          await inProcess?.catch(() => undefined);
          return;
        }
        if (alive()) {
          const child = worker!;
          child.kill('SIGKILL');
          await exited(child);
        }
      },
    };
  }
}
