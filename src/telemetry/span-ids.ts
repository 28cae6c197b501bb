/**
 * Trace and span ids for the workflow's spans, derived from the run and a counter instead of
 * Math.random. Two reasons:
 * - Replay must give a span the id it had the first time: a tool call scheduled before a worker
 *   crash carries its span id in the activity's headers (recorded in history), and the worker that
 *   replays the task and later ends the span must export it under that id, or the tree breaks.
 * - Math.random in the sandbox is the workflow's seeded generator, which uuid4() also draws from
 *   (approval and escalation ids): spans that drew from it would change those ids, so switching
 *   tracing on or off would change what a replayed task computes.
 * Sandbox-safe: no imports.
 */

/** A 32-bit FNV-1a hash finished with murmur3's mixer, so close inputs give unrelated outputs. */
function hash32(text: string, salt: number): number {
  let h = (0x811c9dc5 ^ salt) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

function hex(text: string, words: number): string {
  let out = '';
  for (let i = 0; i < words; i++)
    out += hash32(text, i * 0x9e3779b9)
      .toString(16)
      .padStart(8, '0');
  // An all-zero id is invalid in OpenTelemetry; one in 2^64 is still worth a guard.
  return /^0+$/.test(out) ? `${out.slice(0, -1)}1` : out;
}

/** An IdGenerator (sdk-trace-base's interface) seeded by the run: the n-th id of a run is always the same. */
export class RunIdGenerator {
  private next = 0;
  constructor(private readonly seed: string) {}

  generateTraceId(): string {
    return hex(`${this.seed}|trace|${this.next++}`, 4);
  }

  generateSpanId(): string {
    return hex(`${this.seed}|span|${this.next++}`, 2);
  }
}
