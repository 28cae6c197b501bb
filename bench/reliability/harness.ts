/**
 * The reliability harness: runs each task on each engine under each fault class, k times, on a
 * fresh store and a fresh strict fake Messages API per run, and judges every run by the store's own
 * data: the final state against the task's expected one, the effects log for duplicates. It plays
 * the person (approves what an engine asks, counting a decision asked for again as lost) and the
 * fault injector (tool faults, model API faults, SIGKILL of the worker at the k-th external call,
 * a server restart, a decision made while every worker is down).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { canonicalJson } from '../../src/protocol/canonical-json';
import { freePort } from '../../src/server/dev-server';
import { DEFAULT_ANTHROPIC_MODEL } from '../../src/models/anthropic-model';
import { FakeMessagesApi, type FakeReply, type RecordedRequest } from '../../src/testing/fake-messages-api';
import { type Effect, type GateRequest, type OrdersFault, OrdersService } from '../../src/testing/orders-service';
import type { Engine, EngineRun, PendingApproval, RunOutcome } from './engine';
import { type FaultClass, HELD_MS, isToolFaultClass, killBoundaries, modelFaultFor, toolFaultGate } from './faults';
import { storeOrders } from './store-tools';
import { expectedSnapshot, type ReliabilityTask } from './tasks';
import { TrajectoryModel } from './trajectory-model';

export interface RunRecord {
  engine: string;
  faultClass: FaultClass;
  task: string;
  rep: number;
  /** The external call the kill or restart was placed at (kill and server-restart classes). */
  boundary?: number;
  passed: boolean;
  outcome: RunOutcome;
  /** Effects in the store's log that repeat an earlier one (same kind, order and amount or address). */
  duplicateEffects: number;
  /** Decisions the person had to make again: actions (tool and arguments) asked for again after the person had decided them, each counted once. */
  decisionsLost: number;
  /** Decisions sent while no worker ran that the engine said it could not take. */
  decisionsUndelivered: number;
  /** input + output + cache write + cache read tokens the fake API billed. */
  tokens: number;
  /** External calls (store requests + model API requests) the run made. */
  externalCalls: number;
  durationMs: number;
  /** What differs from the expected final state, when the run failed. */
  diff?: string;
}

export interface PlanOptions {
  /** Kill or restart at this external call. */
  boundary?: number;
  /** Ports for the run's store and fake API (a suite keeps the same ones). Default: any free ones. */
  ports?: { store: number; api: number };
}

const SHORT_TIMEOUT_MS = Number(process.env.REL_TIMEOUT_MS ?? 180_000);
const LONG_TIMEOUT_MS = 900_000;

/** One run of one task on one engine under one fault class. */
export async function runOnce(engine: Engine, task: ReliabilityTask, faultClass: FaultClass, rep: number, plan: PlanOptions = {}): Promise<RunRecord> {
  const started = Date.now();
  const store = new OrdersService({ orders: storeOrders(), pageSize: 3 });
  const api = new FakeMessagesApi();
  const model = new TrajectoryModel();
  const workDir = mkdtempSync(path.join(os.tmpdir(), 'reliability-run-'));
  await Promise.all([store.start(plan.ports?.store ?? 0), api.start(plan.ports?.api ?? 0)]);
  const initial = store.snapshot();

  // Every external call, store and model API alike, counted in arrival order: the boundaries.
  let externalCalls = 0;
  let apiRequests = 0;
  let trigger!: () => void;
  const triggered = new Promise<void>((resolve) => (trigger = resolve));
  const at = plan.boundary;
  const disruptive = faultClass === 'kill' || faultClass === 'server-restart';
  const toolFaults = isToolFaultClass(faultClass) ? toolFaultGate(faultClass) : undefined;
  // A kill holds the call until its caller dies; a restart holds it a moment while the server goes down and up.
  const holdMs = faultClass === 'kill' ? HELD_MS : 1_500;
  store.gate = (request: GateRequest): OrdersFault | undefined => {
    const k = ++externalCalls;
    if (disruptive && k === at) {
      trigger();
      return request.kind === 'write' ? { kind: 'slow_reply', delayMs: holdMs } : { kind: 'slow', delayMs: holdMs };
    }
    return toolFaults?.(request);
  };
  api.responder = (request: RecordedRequest): FakeReply => {
    const k = ++externalCalls;
    const n = ++apiRequests;
    if (disruptive && k === at) {
      trigger();
      // biome-ignore lint/suspicious/noThenProperty: the fake's slow reply names its follow-up `then`
      return { kind: 'slow', delayMs: holdMs, then: model.respond(request) };
    }
    if (faultClass === 'model-faults') {
      const fault = modelFaultFor(n);
      if (fault) return fault;
    }
    return model.respond(request);
  };

  const killable = faultClass === 'kill' || faultClass === 'decision-while-down';
  const runId = `${task.id}-${faultClass}-${rep}${at ? `-b${at}` : ''}-${Math.random().toString(36).slice(2, 8)}`;
  let run: EngineRun | undefined;
  let outcome: RunOutcome;
  const decided = new Map<string, number>();
  const decidedIds = new Set<string>();
  let decisionsLost = 0;
  let decisionsUndelivered = 0;
  try {
    run = await engine.start({ task, storeUrl: store.url, apiUrl: api.url, model: DEFAULT_ANTHROPIC_MODEL, runId, workDir }, { killable });
    const current = run;
    const outcomePromise = current.outcome(task.long ? LONG_TIMEOUT_MS : SHORT_TIMEOUT_MS);
    let ended: RunOutcome | undefined;
    void outcomePromise.then((o) => (ended = o));
    let disrupted = false;
    let downForDecision = faultClass === 'decision-while-down';
    void triggered.then(() => (disrupted = true));
    let handledDisruption = false;
    while (!ended) {
      await Promise.race([outcomePromise, triggered.then(() => (handledDisruption ? sleep(200) : undefined)), sleep(200)]);
      if (ended) break;
      if (disrupted && !handledDisruption) {
        handledDisruption = true;
        if (faultClass === 'kill') {
          await current.kill();
          store.releaseHeld();
          await current.resume();
        } else {
          await engine.restartServer!();
        }
        continue;
      }
      const pending = await current.pendingApproval().catch(() => undefined);
      if (!pending || decidedIds.has(pending.id)) continue;
      const key = approvalKey(pending);
      if (decided.get(key) === 1) decisionsLost += 1;
      decided.set(key, (decided.get(key) ?? 0) + 1);
      decidedIds.add(pending.id);
      if (downForDecision) {
        // The person decides while every worker is down; a worker comes back afterwards.
        downForDecision = false;
        await current.kill();
        const sent = await current.decide(pending, true);
        if (!sent.delivered) decisionsUndelivered += 1;
        await current.resume();
      } else {
        const sent = await current.decide(pending, true);
        if (!sent.delivered) decisionsUndelivered += 1;
      }
    }
    outcome = ended;
  } catch (err) {
    outcome = { status: 'failed', error: `harness: ${(err as Error).stack ?? err}` };
  }
  const final = store.snapshot();
  const expected = expectedSnapshot(initial, task);
  const passed = canonicalJson(final) === canonicalJson(expected);
  const tokens = api.billed.reduce((sum, b) => sum + b.input_tokens + b.output_tokens + b.cache_creation_input_tokens + b.cache_read_input_tokens, 0);
  const record: RunRecord = {
    engine: engine.name,
    faultClass,
    task: task.id,
    rep,
    ...(at ? { boundary: at } : {}),
    passed,
    outcome: { ...outcome, ...(outcome.text ? { text: outcome.text.slice(0, 200) } : {}) },
    duplicateEffects: duplicates(store.effects),
    decisionsLost,
    decisionsUndelivered,
    tokens,
    externalCalls,
    durationMs: Date.now() - started,
    ...(passed ? {} : { diff: diffOf(final, expected) }),
  };
  await run?.dispose().catch(() => undefined);
  store.releaseHeld();
  await Promise.all([store.stop(), api.stop()]).catch(() => undefined);
  rmSync(workDir, { recursive: true, force: true });
  return record;
}

function approvalKey(p: PendingApproval): string {
  return `${p.tool}:${canonicalJson(p.input ?? null, { strict: false })}`;
}

/** Effects that repeat an earlier one: same kind, order and amount or address. */
export function duplicates(effects: Effect[]): number {
  const seen = new Set<string>();
  let repeats = 0;
  for (const e of effects) {
    const key = `${e.kind}:${e.order_id}:${e.amount_cents ?? ''}:${e.address ? JSON.stringify(e.address) : ''}`;
    if (seen.has(key)) repeats += 1;
    seen.add(key);
  }
  return repeats;
}

function diffOf(final: { orders: object[] }, expected: { orders: object[] }): string {
  const lines: string[] = [];
  final.orders.forEach((o, i) => {
    const e = expected.orders[i]!;
    if (canonicalJson(o) !== canonicalJson(e)) lines.push(`${(o as { id: string }).id}: got ${JSON.stringify(o)}, expected ${JSON.stringify(e)}`);
  });
  return lines.join('; ');
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export interface SuiteOptions {
  tasks: ReliabilityTask[];
  engines: Engine[];
  faultClasses: FaultClass[];
  /** Repetitions per (task, fault class): pass^k is reported for k = 1..reps. */
  reps: number;
  /** Kill boundaries per task per repetition: all when unset; else this many, the repetitions taking turns (killBoundaries). */
  killSample?: number;
  /** Run the engines at the same time (each on its own store and API ports). Default false. */
  parallel?: boolean;
  log?: (line: string) => void;
}

/** Runs the whole matrix; the clean runs go first (they give each task's boundaries and the token baseline). */
export async function runSuite(options: SuiteOptions): Promise<RunRecord[]> {
  const log = options.log ?? ((line: string) => console.log(line));
  const records: RunRecord[] = [];
  const note = (r: RunRecord) => {
    records.push(r);
    log(
      `  ${r.engine} | ${r.faultClass}${r.boundary ? `@${r.boundary}` : ''} | ${r.task} #${r.rep}: ${r.passed ? 'pass' : 'FAIL'} (${r.outcome.status}; dup ${r.duplicateEffects}, lost ${r.decisionsLost}, ${r.tokens} tokens, ${r.externalCalls} calls, ${(r.durationMs / 1000).toFixed(1)} s)${r.passed ? '' : ` ${r.diff || r.outcome.error || r.outcome.text || ''}`.slice(0, 300)}`,
    );
  };
  const runEngine = async (engine: Engine) => {
    log(`\n${engine.name}: ${engine.description}`);
    await engine.open();
    const ports = { store: await freePort(), api: await freePort() };
    try {
      const boundaries = new Map<string, number>();
      for (const faultClass of options.faultClasses) {
        if (faultClass === 'server-restart' && !engine.restartServer) {
          log(`  ${engine.name} | server-restart: not applicable (no server)`);
          continue;
        }
        for (const task of options.tasks) {
          if (faultClass === 'decision-while-down' && !task.approval) continue;
          for (let rep = 1; rep <= options.reps; rep++) {
            if (faultClass === 'kill') {
              const n = boundaries.get(task.id) ?? (await cleanCalls(engine, task, records, note, ports));
              boundaries.set(task.id, n);
              for (const boundary of killBoundaries(n, options.killSample, rep, options.reps)) note(await runOnce(engine, task, faultClass, rep, { boundary, ports }));
            } else if (faultClass === 'server-restart') {
              const n = boundaries.get(task.id) ?? (await cleanCalls(engine, task, records, note, ports));
              boundaries.set(task.id, n);
              note(await runOnce(engine, task, faultClass, rep, { boundary: Math.max(1, Math.ceil(n / 2)), ports }));
            } else {
              const r = await runOnce(engine, task, faultClass, rep, { ports });
              note(r);
              if (faultClass === 'clean' && rep === 1) boundaries.set(task.id, r.externalCalls);
            }
          }
        }
      }
    } finally {
      await engine.close();
    }
  };
  if (options.parallel) await Promise.all(options.engines.map(runEngine));
  else for (const engine of options.engines) await runEngine(engine);
  return records;
}

/** The external calls of a clean run of the task (from the records, else a clean run now). */
async function cleanCalls(engine: Engine, task: ReliabilityTask, records: RunRecord[], note: (r: RunRecord) => void, ports: PlanOptions['ports']): Promise<number> {
  const clean = records.find((r) => r.engine === engine.name && r.task === task.id && r.faultClass === 'clean' && r.passed);
  if (clean) return clean.externalCalls;
  const r = await runOnce(engine, task, 'clean', 1, { ports });
  note(r);
  return r.externalCalls;
}
