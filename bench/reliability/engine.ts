/**
 * What an engine under test gives the reliability harness (bench/reliability/harness.ts). An engine
 * runs one task at a time: the harness makes a fresh store (the orders service) and a fresh strict
 * fake Messages API for each run, hands their URLs to `start`, and drives the run from outside:
 * it answers approvals as a person would, kills the engine's worker process at a request it held
 * (`kill`, then `resume`), restarts the engine's server, and reads the outcome. What counts is never
 * what the engine says but the store's own final state and effects log, and the fake API's bill.
 *
 * To add an engine (LangGraph, DBOS, ...): implement `Engine` in bench/reliability/engines/NAME.ts,
 * run the model through the real Anthropic SDK against `env.apiUrl`, call the store's tools over
 * HTTP (store-tools.ts has the requests, the JSON schemas and the descriptions every engine shares),
 * ask for approval before every `approvalTools` call, give sub-agent tasks to a nested agent run
 * through the `delegate_to_store_clerk` tool, and register it in engines/index.ts.
 */
import type { ReliabilityTask } from './tasks';

/** Everything one run of one task needs; fresh for every run. */
export interface RunEnv {
  /** The task: its prompt is the first user message; `agent` says whether it may delegate. */
  task: ReliabilityTask;
  /**
   * Base URL of this run's store (the orders service). A new store for every run, on the same port
   * for every run of a suite: an engine may start a worker for the next run ahead of it.
   */
  storeUrl: string;
  /** Base URL of this run's fake Messages API (give it to the SDK as baseURL, any API key); the same port for a whole suite too. */
  apiUrl: string;
  /** The model id to ask for (one the strict fake knows). */
  model: string;
  /** Unique per run: a task id, a thread id, a workflow id. */
  runId: string;
  /** A temporary folder this run may use (checkpoint files, scripts, logs). */
  workDir: string;
}

export interface StartOptions {
  /**
   * The run's worker must be a separate process that `kill()` can SIGKILL: the harness will kill it.
   * When false the engine may run the task in-process (faster), and kill() is never called.
   */
  killable: boolean;
}

export interface PendingApproval {
  /** The engine's id of this request for a decision. */
  id: string;
  tool: string;
  input: unknown;
}

/**
 * One time the engine asked a person (issue 49, item 7): an approval requested, or the task blocked
 * until a person acts. What the harness counts as the person's time.
 */
export interface PersonAsk {
  kind: 'approval' | 'block';
  /** The task that asked, when the engine says (a sub-agent's own task id). */
  task?: string;
  /** An approval's tool and exact arguments. */
  tool?: string;
  input?: unknown;
  /** A block's code (`loop_detected`, `outcome_unknown`, ...). */
  code?: string;
  /** Why, as the engine told the person. */
  reason?: string;
}

export interface RunOutcome {
  /** `answered`: the task ended with the model's final answer; `failed`: the engine gave up. */
  status: 'answered' | 'failed';
  text?: string;
  error?: string;
}

export interface EngineRun {
  /** Resolves when the task ended (whichever worker ended it); rejects after `timeoutMs`. */
  outcome(timeoutMs: number): Promise<RunOutcome>;
  /** The decision the task waits for now, if any (polled by the harness). */
  pendingApproval(): Promise<PendingApproval | undefined>;
  /**
   * A person's decision, sent the way the engine's users send one (a client call, a resume
   * command, an HTTP request). May be called while every worker is down: `delivered` says whether
   * the engine accepted it (it may still be lost if the engine keeps it nowhere).
   */
  decide(approval: PendingApproval, approve: boolean): Promise<{ delivered: boolean; detail?: string }>;
  /** SIGKILL every worker process of this run; resolves once they are dead. */
  kill(): Promise<void>;
  /** Starts a worker again after kill(): it resumes the task (from a checkpoint, or from scratch). */
  resume(): Promise<void>;
  /**
   * Every time the run asked a person, from the engine's own record (durable-agent: the task's and
   * its sub-agents' approvals and blocks in `status`). Read once the run is over, before dispose.
   * Absent: the harness counts the decisions it was asked for (pendingApproval), which is every ask
   * an engine without blocks makes.
   */
  personAsks?(): Promise<PersonAsk[]>;
  /** Stops whatever this run left running. */
  dispose(): Promise<void>;
}

export interface Engine {
  /** Shown in the report, e.g. `durable-agent`, `bare-sdk-loop`, `langgraph-sqlite`. */
  readonly name: string;
  /** One line for the report: what the engine is and how it keeps state. */
  readonly description: string;
  /**
   * Restarts the server the engine keeps its state on (Temporal, PostgreSQL) while a task runs;
   * every worker reconnects or is restarted by the engine. Absent: the engine has no server, and
   * the fault class is reported as not applicable.
   */
  restartServer?(): Promise<void>;
  /** Once per benchmark, before the first run (start servers, build bundles). */
  open(): Promise<void>;
  close(): Promise<void>;
  start(env: RunEnv, options: StartOptions): Promise<EngineRun>;
}
