/**
 * Fault injection for any tool, for users' own tests: make a tool fail N times with a given error,
 * truncate its output, delay it, or cut a page short. The wrapped tool keeps its contract (name,
 * schemas, effect), so the engine treats it exactly as the real one.
 */
import { HttpStatusError } from '../errors/tool-failure';
import type { ToolDefinition } from '../tools/define-tool';

export type ToolFault = { kind: 'throw'; error: () => unknown } | { kind: 'truncate'; keepChars?: number } | { kind: 'delay'; ms: number } | { kind: 'transform'; apply: (output: unknown) => unknown };

export const toolFaults = {
  /** Throw this error (a fresh one per call). */
  fail: (error: () => unknown): ToolFault => ({ kind: 'throw', error }),
  /** Answer like an HTTP service with this status (e.g. 503, or 429 with `{'retry-after': '2'}`). */
  http: (status: number, headers: Record<string, string> = {}): ToolFault => ({
    kind: 'throw',
    error: () => new HttpStatusError(status, `injected ${status}`, headers),
  }),
  /** Return the output cut short, as an undocumented gateway cap would (default: half of it). */
  truncate: (keepChars?: number): ToolFault => ({ kind: 'truncate', ...(keepChars !== undefined ? { keepChars } : {}) }),
  delay: (ms: number): ToolFault => ({ kind: 'delay', ms }),
  /** Answer with text that is not JSON at all (a proxy's HTML error page, say). */
  garble: (text = '<html><body>502 Bad Gateway</body></html>'): ToolFault => ({ kind: 'transform', apply: () => text }),
  /** Answer page 1 with no items in `field` while saying more is to come (a service that answered before it had the data). */
  emptyFirstPage: (field: string): ToolFault => ({
    kind: 'transform',
    apply: (output) => ({ ...(output as Record<string, unknown>), [field]: [], page: 1, has_more: true }),
  }),
  /** Keep only the first `keep` items of `field` and claim there is more. */
  partialPage: (field: string, keep = 1): ToolFault => ({
    kind: 'transform',
    apply: (output) => {
      const o = output as Record<string, unknown>;
      const items = Array.isArray(o[field]) ? (o[field] as unknown[]) : [];
      return { ...o, [field]: items.slice(0, keep), has_more: true };
    },
  }),
};

export interface FaultyTool<I, O> extends ToolDefinition<I, O> {
  /** How many times the tool was really invoked (faulted or not). */
  readonly executions: number;
  /** Apply `fault` to the next `times` calls (Infinity for all). Faults queue in order. */
  inject(fault: ToolFault, times?: number): FaultyTool<I, O>;
  clear(): void;
}

export function withFaults<I, O>(tool: ToolDefinition<I, O>): FaultyTool<I, O> {
  const queue: { fault: ToolFault; remaining: number }[] = [];
  let executions = 0;
  const next = (): ToolFault | undefined => {
    const head = queue[0];
    if (!head) return undefined;
    if (--head.remaining <= 0) queue.shift();
    return head.fault;
  };
  const faulty: FaultyTool<I, O> = {
    ...tool,
    get executions() {
      return executions;
    },
    inject(fault, times = 1) {
      queue.push({ fault, remaining: times });
      return faulty;
    },
    clear() {
      queue.length = 0;
    },
    async run(input, ctx) {
      executions += 1;
      const fault = next();
      if (fault?.kind === 'throw') throw fault.error();
      if (fault?.kind === 'delay') await new Promise((r) => setTimeout(r, fault.ms));
      const output = await tool.run(input, ctx);
      if (fault?.kind === 'truncate') {
        const text = typeof output === 'string' ? output : JSON.stringify(output);
        return text.slice(0, fault.keepChars ?? Math.floor(text.length / 2));
      }
      if (fault?.kind === 'transform') {
        return fault.apply(typeof output === 'string' ? JSON.parse(output) : output) as O;
      }
      return output;
    },
  };
  return faulty;
}
