/**
 * The fault classes and the plans that make them happen, the same for every engine. A plan is
 * chosen by arrival number (the n-th request to the store, the n-th to the fake API, the k-th
 * external call of either), never by time, so a plan means the same thing on a loaded machine.
 */
import type { FakeReply } from '../../src/testing/fake-messages-api';
import { fakeErrors } from '../../src/testing/fake-messages-api';
import type { GateRequest, OrdersFault } from '../../src/testing/orders-service';

export const FAULT_CLASSES = ['clean', 'tool-faults', 'model-faults', 'kill', 'server-restart', 'decision-while-down'] as const;
export type FaultClass = (typeof FAULT_CLASSES)[number];

export const FAULT_CLASS_LABELS: Record<FaultClass, string> = {
  clean: 'clean',
  'tool-faults': 'tool faults (timeout, 429/529, truncated JSON, schema drift, empty first page, reset after commit)',
  'model-faults': 'model API faults (429, 529, 500)',
  kill: 'worker SIGKILL at each boundary',
  'server-restart': 'server restart mid-task',
  'decision-while-down': 'decision made while every worker is down',
};

/** A request held this long ends when its caller hangs up (a killed worker) or the harness lets it go. */
export const HELD_MS = 600_000;
/** The tool faults' timeout: held past every engine's per-call timeout (TOOL_TIMEOUT_MS). */
const PAST_TIMEOUT_MS = 4_000;

/**
 * Tool faults, by kind of request. Odd-numbered reads and writes get the next fault of their list
 * (every other request, so a retried call can get through); later ones are clean.
 */
const READ_FAULTS: OrdersFault[] = [
  { kind: 'truncate' },
  { kind: 'rate_limited', retryAfterSeconds: 1 },
  { kind: 'schema_drift' },
  { kind: 'slow', delayMs: PAST_TIMEOUT_MS },
  { kind: 'overloaded', retryAfterSeconds: 1 },
  { kind: 'empty_first_page' },
];
const WRITE_FAULTS: OrdersFault[] = [
  { kind: 'reset_after_commit' },
  { kind: 'schema_drift' },
  { kind: 'overloaded', retryAfterSeconds: 1 },
  { kind: 'truncate' },
  { kind: 'rate_limited', retryAfterSeconds: 1 },
];

export function toolFaultGate(): (request: GateRequest) => OrdersFault | undefined {
  const seen = { read: 0, write: 0 };
  return (request) => {
    const n = ++seen[request.kind];
    if (n % 2 === 0) return undefined;
    const list = request.kind === 'read' ? READ_FAULTS : WRITE_FAULTS;
    const fault = list[(n - 1) / 2];
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

/** Boundaries to kill at: all of 1..n, or `sample` of them spread evenly (the quick variant). */
export function killBoundaries(n: number, sample?: number): number[] {
  if (!sample || sample >= n) return Array.from({ length: n }, (_, i) => i + 1);
  return [...new Set(Array.from({ length: sample }, (_, i) => Math.min(n, Math.max(1, Math.round(((i + 0.5) * n) / sample)))))];
}
