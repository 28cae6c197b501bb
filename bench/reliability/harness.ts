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
import type { Engine, EngineRun, PendingApproval, PersonAsk, RunOutcome } from './engine';
import { type FaultClass, HELD_MS, isToolFaultClass, killBoundaries, modelFaultFor, ONE_OFF_FAULT_CLASSES, toolFaultGate } from './faults';
import { storeOrders } from './store-tools';
import { expectedSnapshot, type ReliabilityTask } from './tasks';
import { HintFollowingModel, type HintModelStats } from './hint-model';
import { APPROVAL_TOOLS } from './store-tools';
import { TrajectoryModel, type TrajectoryModelStats } from './trajectory-model';

/**
 * The scripted models a task runs with: `trajectory` repeats a call whose answer it cannot use
 * (trajectory-model.ts); `hint-following` reads the engine's structured errors and hints instead
 * (hint-model.ts). Both follow the same trajectories to the same expected final state.
 */
export const MODEL_KINDS = ['trajectory', 'hint-following'] as const;
export type ModelKind = (typeof MODEL_KINDS)[number];

/** A person's ask, judged: `evidence` says what could have settled it without a person (then it counts against the engine). */
export interface JudgedAsk extends PersonAsk {
  /** `policy`: an approval the agent's policy requires (the first for its action); else why it was asked beyond that. */
  why: 'policy' | 'asked_again' | 'write_put_to_person' | 'outcome_unknown' | 'guard' | 'budget' | 'other_block';
  evidence?: string;
}

export interface RunRecord {
  engine: string;
  /** The scripted model the run talked to (absent in records of before 2026-11-29: trajectory). */
  model?: ModelKind;
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
  /**
   * Times a person was asked (issue 49, item 7): from the engine's own record when it keeps one
   * (personAsks), else the decisions the harness was asked for. A block that ended the run counts.
   */
  personAsks?: number;
  /** Of those, asks that evidence could have settled (JudgedAsk.evidence): they count against the engine. */
  personAsksAvoidable?: number;
  /** Each ask, judged (its arguments left out). */
  asks?: JudgedAsk[];
  /** The decisions the harness itself was asked for (each pending request once). */
  decisionsAsked?: number;
  /** What the scripted model did: repeats, give-ups, and for the hint-following model what it made of the hints. */
  modelStats?: TrajectoryModelStats & Partial<HintModelStats>;
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
  /** The scripted model. Default `trajectory`. */
  model?: ModelKind;
}

const SHORT_TIMEOUT_MS = Number(process.env.REL_TIMEOUT_MS ?? 180_000);
const LONG_TIMEOUT_MS = 900_000;

/** One run of one task on one engine under one fault class. */
export async function runOnce(engine: Engine, task: ReliabilityTask, faultClass: FaultClass, rep: number, plan: PlanOptions = {}): Promise<RunRecord> {
  const started = Date.now();
  const store = new OrdersService({ orders: storeOrders(), pageSize: 3 });
  const api = new FakeMessagesApi();
  const modelKind: ModelKind = plan.model ?? 'trajectory';
  const model = modelKind === 'hint-following' ? new HintFollowingModel() : new TrajectoryModel();
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
  const runId = `${task.id}-${faultClass}-${rep}${at ? `-b${at}` : ''}${modelKind === 'trajectory' ? '' : '-hints'}-${Math.random().toString(36).slice(2, 8)}`;
  let run: EngineRun | undefined;
  let outcome: RunOutcome;
  const decided = new Map<string, number>();
  const decidedIds = new Set<string>();
  /** The decisions the harness was asked for, in order: the peers' person asks. */
  const seen: PersonAsk[] = [];
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
      seen.push({ kind: 'approval', tool: pending.tool, input: pending.input });
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
  const told = run?.personAsks ? await run.personAsks().catch(() => undefined) : undefined;
  const asks = judgeAsks(told ?? seen, ONE_OFF_FAULT_CLASSES.includes(faultClass));
  const final = store.snapshot();
  const expected = expectedSnapshot(initial, task);
  const passed = canonicalJson(final) === canonicalJson(expected);
  const tokens = api.billed.reduce((sum, b) => sum + b.input_tokens + b.output_tokens + b.cache_creation_input_tokens + b.cache_read_input_tokens, 0);
  const record: RunRecord = {
    engine: engine.name,
    model: modelKind,
    faultClass,
    task: task.id,
    rep,
    ...(at ? { boundary: at } : {}),
    passed,
    outcome: { ...outcome, ...(outcome.text ? { text: outcome.text.slice(0, 200) } : {}) },
    duplicateEffects: duplicates(store.effects),
    decisionsLost,
    decisionsUndelivered,
    personAsks: asks.length,
    personAsksAvoidable: asks.filter((a) => a.evidence).length,
    asks: asks.map(({ input: _input, ...a }) => ({ ...a, ...(a.reason ? { reason: a.reason.slice(0, 200) } : {}) })),
    decisionsAsked: decidedIds.size,
    modelStats: { ...model.stats, ...(model instanceof HintFollowingModel ? model.hints : {}) },
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

function approvalKey(p: Pick<PendingApproval, 'tool' | 'input'>): string {
  return `${p.tool}:${canonicalJson(p.input ?? null, { strict: false })}`;
}

const BUDGET_CODES = /budget/;

/**
 * Each ask, judged. An approval the agent's policy requires (a call of an APPROVAL_TOOLS tool, the
 * first time for its exact arguments) is the person's job. Everything else could have been settled
 * without them in this suite, where every fault is one-off (the store answers right the next time
 * it is asked, and it can always be read): an approval asked again for an action already decided
 * (the decision is on record), a write the policy lets run alone put to a person (the engine's own
 * record says it ran: a repeat), an unknown outcome (one read of the order tells), a guard's block
 * after broken answers (a read again tells). A budget block is counted but not held against the engine.
 * An ask the engine gave no details of (the harness saw a pending decision) is judged by nothing: policy.
 * `oneOff` false (tool-capped, a fault that never passes): a guard's block or another block is not
 * held against the engine (reading again cannot help; the engine's error named a narrower query,
 * and a model that does not take it needs a person).
 */
export function judgeAsks(asks: PersonAsk[], oneOff = true): JudgedAsk[] {
  const decided = new Set<string>();
  return asks.map((ask): JudgedAsk => {
    if (ask.kind === 'approval') {
      if (!ask.tool) return { ...ask, why: 'policy' };
      const key = approvalKey({ tool: ask.tool, input: ask.input });
      const again = decided.has(key);
      decided.add(key);
      if (again) return { ...ask, why: 'asked_again', evidence: 'the same action was decided earlier in the run' };
      if (!(APPROVAL_TOOLS as readonly string[]).includes(ask.tool))
        return { ...ask, why: 'write_put_to_person', evidence: `${ask.tool} needs no approval; the engine's record of its earlier run (or one read of the store) says whether it ran` };
      return { ...ask, why: 'policy' };
    }
    const code = ask.code ?? '';
    if (code === 'outcome_unknown' || code === 'unreconciled') return { ...ask, why: 'outcome_unknown', evidence: 'one read of the order (get_order) says whether the write took effect' };
    if (BUDGET_CODES.test(code)) return { ...ask, why: 'budget' };
    const guard = code === 'loop_detected' || /_error$/.test(code);
    if (!oneOff) return { ...ask, why: guard ? 'guard' : 'other_block' };
    if (guard) return { ...ask, why: 'guard', evidence: "every fault of this class is one-off: the tool's next answer is right" };
    return { ...ask, why: 'other_block', evidence: "every fault of this class is one-off: the engine's next attempt succeeds" };
  });
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
  /** The scripted models every task runs with, each in turn. Default: the trajectory model alone. */
  models?: ModelKind[];
  log?: (line: string) => void;
}

/** Runs the whole matrix; the clean runs go first (they give each task's boundaries and the token baseline). */
export async function runSuite(options: SuiteOptions): Promise<RunRecord[]> {
  const log = options.log ?? ((line: string) => console.log(line));
  const records: RunRecord[] = [];
  const note = (r: RunRecord) => {
    records.push(r);
    log(
      `  ${r.engine}${r.model && r.model !== 'trajectory' ? ` (${r.model})` : ''} | ${r.faultClass}${r.boundary ? `@${r.boundary}` : ''} | ${r.task} #${r.rep}: ${r.passed ? 'pass' : 'FAIL'} (${r.outcome.status}; dup ${r.duplicateEffects}, lost ${r.decisionsLost}, asks ${r.personAsks ?? 0}${r.personAsksAvoidable ? ` (${r.personAsksAvoidable} avoidable)` : ''}, ${r.tokens} tokens, ${r.externalCalls} calls, ${(r.durationMs / 1000).toFixed(1)} s)${r.passed ? '' : ` ${r.diff || r.outcome.error || r.outcome.text || ''}`.slice(0, 300)}`,
    );
  };
  const runEngine = async (engine: Engine) => {
    log(`\n${engine.name}: ${engine.description}`);
    await engine.open();
    const ports = { store: await freePort(), api: await freePort() };
    try {
      for (const model of options.models ?? ['trajectory']) {
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
                const n = boundaries.get(task.id) ?? (await cleanCalls(engine, task, records, note, ports, model));
                boundaries.set(task.id, n);
                for (const boundary of killBoundaries(n, options.killSample, rep, options.reps)) note(await runOnce(engine, task, faultClass, rep, { boundary, ports, model }));
              } else if (faultClass === 'server-restart') {
                const n = boundaries.get(task.id) ?? (await cleanCalls(engine, task, records, note, ports, model));
                boundaries.set(task.id, n);
                note(await runOnce(engine, task, faultClass, rep, { boundary: Math.max(1, Math.ceil(n / 2)), ports, model }));
              } else {
                const r = await runOnce(engine, task, faultClass, rep, { ports, model });
                note(r);
                if (faultClass === 'clean' && rep === 1) boundaries.set(task.id, r.externalCalls);
              }
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

/** The external calls of a clean run of the task with `model` (from the records, else a clean run now). */
async function cleanCalls(engine: Engine, task: ReliabilityTask, records: RunRecord[], note: (r: RunRecord) => void, ports: PlanOptions['ports'], model: ModelKind): Promise<number> {
  const clean = records.find((r) => r.engine === engine.name && (r.model ?? 'trajectory') === model && r.task === task.id && r.faultClass === 'clean' && r.passed);
  if (clean) return clean.externalCalls;
  const r = await runOnce(engine, task, 'clean', 1, { ports, model });
  note(r);
  return r.externalCalls;
}
