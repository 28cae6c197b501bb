/**
 * The fault classes and the plans that make them happen, the same for every engine. A plan is
 * chosen by arrival number (the n-th request to the store, the n-th to the fake API, the k-th
 * external call of either), never by time, so a plan means the same thing on a loaded machine.
 */
import type { FakeReply } from '../../src/testing/fake-messages-api';
import { fakeErrors } from '../../src/testing/fake-messages-api';
import type { GateRequest, OrdersFault } from '../../src/testing/orders-service';

/** The size cap of `tool-capped` (a full page of search results is 473-477 bytes, one filtered by status at most 333). */
export const CAP_BYTES = 400;

export const FAULT_CLASSES = ['clean', 'tool-transient', 'tool-garbled', 'tool-capped', 'tool-reset', 'model-faults', 'kill', 'server-restart', 'decision-while-down'] as const;
export type FaultClass = (typeof FAULT_CLASSES)[number];
/**
 * The classes a run without `--faults` measures. `tool-capped` only on request: a fault that never
 * passes, which no model that repeats its call can get past on any engine; it is there to show what
 * a model that follows the engine's hints does (hint-model.ts).
 */
export const DEFAULT_FAULT_CLASSES: FaultClass[] = FAULT_CLASSES.filter((c) => c !== 'tool-capped');
/** The classes whose every fault passes: the store answers right the next time it is asked. */
export const ONE_OFF_FAULT_CLASSES: FaultClass[] = FAULT_CLASSES.filter((c) => c !== 'tool-capped');

export const FAULT_CLASS_LABELS: Record<FaultClass, string> = {
  clean: 'clean',
  'tool-transient': 'tool faults, transient: a timeout, 429 and 529 with retry-after',
  'tool-garbled': 'tool faults, garbled answers: truncated JSON, schema drift, an empty first page',
  'tool-capped': `tool faults, a size cap: every search_orders answer cut at ${CAP_BYTES} bytes, as the first seed's gateway cuts (a full page of 3 orders is cut, a page filtered by status fits)`,
  'tool-reset': 'tool faults: the connection reset after the store committed a write',
  'model-faults': 'model API faults through the strict fake: 429, 529 (overloaded), 500',
  kill: 'worker SIGKILL at each boundary (the k-th external call), then a worker again',
  'server-restart': "the engine's server killed and started again mid-task",
  'decision-while-down': 'an approval decided while every worker is down',
};

/** A request held this long ends when its caller hangs up (a killed worker) or the harness lets it go. */
export const HELD_MS = 600_000;
/** Held past every engine's per-call timeout (TOOL_TIMEOUT_MS, 3 s). */
const PAST_TIMEOUT_MS = 4_000;

/**
 * The tool faults of each class, by kind of request: the 1st, 3rd, 5th... read (or write) gets the
 * next fault of its list, so the call retried after it (by the engine or by the model) gets through;
 * later requests are clean.
 */
const TOOL_FAULTS: Record<'tool-transient' | 'tool-garbled' | 'tool-reset', { read: OrdersFault[]; write: OrdersFault[] }> = {
  'tool-transient': {
    read: [
      { kind: 'slow', delayMs: PAST_TIMEOUT_MS },
      { kind: 'rate_limited', retryAfterSeconds: 1 },
      { kind: 'overloaded', retryAfterSeconds: 1 },
    ],
    write: [
      { kind: 'overloaded', retryAfterSeconds: 1 },
      { kind: 'rate_limited', retryAfterSeconds: 1 },
    ],
  },
  'tool-garbled': {
    read: [{ kind: 'truncate' }, { kind: 'schema_drift' }, { kind: 'empty_first_page' }],
    write: [{ kind: 'schema_drift' }, { kind: 'truncate' }],
  },
  'tool-reset': { read: [], write: [{ kind: 'reset_after_commit' }, { kind: 'reset_after_commit' }] },
};

export function isToolFaultClass(c: FaultClass): c is keyof typeof TOOL_FAULTS | 'tool-capped' {
  return c in TOOL_FAULTS || c === 'tool-capped';
}

export function toolFaultGate(faultClass: keyof typeof TOOL_FAULTS | 'tool-capped'): (request: GateRequest) => OrdersFault | undefined {
  // Every search answer, every time: a body longer than the cap is cut there (a shorter one passes whole).
  if (faultClass === 'tool-capped') return (request) => (request.route === 'live' ? { kind: 'truncate', keepBytes: CAP_BYTES } : undefined);
  const seen = { read: 0, write: 0 };
  const plan = TOOL_FAULTS[faultClass];
  return (request) => {
    const n = ++seen[request.kind];
    if (n % 2 === 0) return undefined;
    const fault = plan[request.kind][(n - 1) / 2];
    // An empty first page only means something for a first page of search results.
    if (fault?.kind === 'empty_first_page' && request.route !== 'live') return undefined;
    return fault;
  };
}

/** Model API faults by the API request's arrival number: 429 with retry-after, 529, 500, 429 again. */
export function modelFaultFor(n: number): FakeReply | undefined {
  switch (n) {
    case 2:
      return fakeErrors.rateLimited(1);
    case 4:
      return fakeErrors.overloaded();
    case 6:
      return fakeErrors.internal();
    case 8:
      return fakeErrors.rateLimited(2);
    default:
      return undefined;
  }
}

/**
 * Boundaries to kill at in repetition `rep` of `reps`: all of 1..n, or (sampled) `sample` of them.
 * Sampled, the repetitions take turns over sample x reps points spread evenly over the task, so
 * together they cover that many different boundaries, and pass^k asks that a task survive a kill at
 * each of k of them.
 */
export function killBoundaries(n: number, sample: number | undefined, rep = 1, reps = 1): number[] {
  if (!sample || sample >= n) return Array.from({ length: n }, (_, i) => i + 1);
  const slots = sample * reps;
  const points = Array.from({ length: sample }, (_, i) => i * reps + (rep - 1)).map((slot) => Math.min(n, Math.max(1, Math.round(((slot + 0.5) * n) / slots))));
  return [...new Set(points)];
}
