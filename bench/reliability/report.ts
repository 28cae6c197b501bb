/** The figures of the reliability benchmark, per engine and fault class, as JSON, a Markdown table and an SVG. */
import { groupedBarChartSvg } from '../plot';
import { FAULT_CLASSES, type FaultClass } from './faults';
import type { RunRecord } from './harness';

export interface Figures {
  engine: string;
  faultClass: FaultClass;
  tasks: number;
  runs: number;
  passedRuns: number;
  /** pass^k for k = 1..reps: the chance that k runs of a task all reach the expected final state (tau-bench's estimator). */
  passK: number[];
  duplicateEffects: number;
  decisionsLost: number;
  decisionsUndelivered: number;
  /** Mean per run of tokens billed minus the same task's clean run on the same engine. */
  tokensAboveClean: number;
  /** The same as a share of the clean runs' mean. */
  tokensAboveCleanPct: number;
  medianRunSeconds: number;
}

/** C(n, k). */
function choose(n: number, k: number): number {
  if (k < 0 || k > n) return 0;
  let r = 1;
  for (let i = 1; i <= k; i++) r = (r * (n - k + i)) / i;
  return r;
}

/** `order`: the engines' order in the report (default: as they first appear in the records). */
export function figuresOf(records: RunRecord[], reps: number, order: string[] = []): Figures[] {
  const out: Figures[] = [];
  const seen = [...new Set(records.map((r) => r.engine))];
  const engines = [...order.filter((e) => seen.includes(e)), ...seen.filter((e) => !order.includes(e))];
  for (const engine of engines) {
    const clean = new Map<string, number[]>();
    for (const r of records.filter((x) => x.engine === engine && x.faultClass === 'clean')) clean.set(r.task, [...(clean.get(r.task) ?? []), r.tokens]);
    const cleanMean = (task: string) => {
      const t = clean.get(task);
      return t?.length ? t.reduce((a, b) => a + b, 0) / t.length : undefined;
    };
    for (const faultClass of FAULT_CLASSES) {
      const runs = records.filter((r) => r.engine === engine && r.faultClass === faultClass);
      if (!runs.length) continue;
      const tasks = [...new Set(runs.map((r) => r.task))];
      // A repetition of a task passes when every run of it passed (for kills: at every boundary).
      const passedReps = tasks.map((task) => {
        const byRep = new Map<number, boolean>();
        for (const r of runs.filter((x) => x.task === task)) byRep.set(r.rep, (byRep.get(r.rep) ?? true) && r.passed);
        return { n: byRep.size, c: [...byRep.values()].filter(Boolean).length };
      });
      const passK = Array.from({ length: reps }, (_, i) => {
        const k = i + 1;
        const values = passedReps.filter((t) => t.n >= k).map((t) => choose(t.c, k) / choose(t.n, k));
        return values.length ? round(values.reduce((a, b) => a + b, 0) / values.length, 3) : NaN;
      });
      const above = runs.flatMap((r) => {
        const base = cleanMean(r.task);
        return base === undefined ? [] : [{ above: r.tokens - base, base }];
      });
      const meanAbove = above.length ? above.reduce((s, a) => s + a.above, 0) / above.length : 0;
      const meanBase = above.length ? above.reduce((s, a) => s + a.base, 0) / above.length : 0;
      const durations = runs.map((r) => r.durationMs).sort((a, b) => a - b);
      out.push({
        engine,
        faultClass,
        tasks: tasks.length,
        runs: runs.length,
        passedRuns: runs.filter((r) => r.passed).length,
        passK,
        duplicateEffects: sum(runs.map((r) => r.duplicateEffects)),
        decisionsLost: sum(runs.map((r) => r.decisionsLost)),
        decisionsUndelivered: sum(runs.map((r) => r.decisionsUndelivered)),
        tokensAboveClean: Math.round(meanAbove),
        tokensAboveCleanPct: meanBase ? round((100 * meanAbove) / meanBase, 1) : 0,
        medianRunSeconds: round(durations[Math.floor(durations.length / 2)]! / 1000, 1),
      });
    }
  }
  return out;
}

export function reliabilityTable(figures: Figures[], reps: number): string {
  const ks = Array.from({ length: reps }, (_, i) => `pass^${i + 1}`);
  const lines = [
    `| engine | fault class | tasks | runs (passed) | ${ks.join(' | ')} | duplicate effects | decisions lost | tokens above clean, per run |`,
    `|---|---|---:|---:|${ks.map(() => '---:').join('|')}|---:|---:|---:|`,
  ];
  for (const f of figures) {
    const pct = f.faultClass === 'clean' ? '' : ` (${f.tokensAboveCleanPct >= 0 ? '+' : ''}${f.tokensAboveCleanPct}%)`;
    lines.push(
      `| ${f.engine} | ${f.faultClass} | ${f.tasks} | ${f.runs} (${f.passedRuns}) | ${f.passK.map((p) => (Number.isNaN(p) ? '-' : p.toFixed(2))).join(' | ')} | ${f.duplicateEffects} | ${f.decisionsLost} | ${f.faultClass === 'clean' ? '-' : `${f.tokensAboveClean}${pct}`} |`,
    );
  }
  return lines.join('\n');
}

const ENGINE_COLORS: Record<string, string> = { 'durable-agent': '#1f6feb', 'bare-sdk-loop': '#8c959f', 'langgraph-sqlite': '#d4622a', dbos: '#2da44e', restate: '#8250df' };

/** pass^k (the largest k measured) per engine and fault class. */
export function reliabilitySvg(figures: Figures[], reps: number, title: string): string {
  const classes = FAULT_CLASSES.filter((c) => figures.some((f) => f.faultClass === c));
  const engines = [...new Set(figures.map((f) => f.engine))];
  return groupedBarChartSvg(
    title,
    classes,
    engines.map((engine) => ({
      label: engine,
      color: ENGINE_COLORS[engine] ?? '#555',
      values: classes.map((c) => figures.find((f) => f.engine === engine && f.faultClass === c)?.passK[reps - 1] ?? NaN),
    })),
    { yMax: 1, yLabel: `pass^${reps}` },
  );
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const round = (x: number, d: number) => Number(x.toFixed(d));
