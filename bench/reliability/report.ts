/** The figures of the reliability benchmark, per engine and fault class, as JSON, a Markdown table and an SVG. */
import { groupedBarChartSvg } from '../plot';
import { FAULT_CLASSES, type FaultClass } from './faults';
import type { ModelKind, RunRecord } from './harness';

export interface Figures {
  engine: string;
  /** The scripted model of these runs. */
  model: ModelKind;
  faultClass: FaultClass;
  tasks: number;
  runs: number;
  passedRuns: number;
  /** pass^k for k = 1..reps: the chance that k runs of a task all reach the expected final state (tau-bench's estimator). */
  passK: number[];
  duplicateEffects: number;
  decisionsLost: number;
  decisionsUndelivered: number;
  /** Times a person was asked, in all these runs (RunRecord.personAsks). */
  personAsks: number;
  /** The same per 100 runs. */
  personAsksPer100: number;
  /** Asks that evidence could have settled (RunRecord.personAsksAvoidable), per 100 runs: they count against the engine. */
  avoidableAsksPer100: number;
  /** The asks by kind (JudgedAsk.why, with a block's code): `policy`, `guard:loop_detected`, ... */
  askKinds: Record<string, number>;
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
  const modelOf = (r: RunRecord): ModelKind => r.model ?? 'trajectory';
  const models = [...new Set(records.map(modelOf))];
  for (const engine of engines)
    for (const model of models) {
      const mine = records.filter((x) => x.engine === engine && modelOf(x) === model);
      const clean = new Map<string, number[]>();
      for (const r of mine.filter((x) => x.faultClass === 'clean')) clean.set(r.task, [...(clean.get(r.task) ?? []), r.tokens]);
      const cleanMean = (task: string) => {
        const t = clean.get(task);
        return t?.length ? t.reduce((a, b) => a + b, 0) / t.length : undefined;
      };
      for (const faultClass of FAULT_CLASSES) {
        const runs = mine.filter((r) => r.faultClass === faultClass);
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
        const asks = sum(runs.map((r) => r.personAsks ?? 0));
        const askKinds: Record<string, number> = {};
        for (const a of runs.flatMap((r) => r.asks ?? [])) {
          const kind = a.kind === 'block' ? `${a.why}:${a.code ?? ''}` : a.why === 'policy' ? `policy:${a.tool ?? 'approval'}` : `${a.why}:${a.tool ?? ''}`;
          askKinds[kind] = (askKinds[kind] ?? 0) + 1;
        }
        out.push({
          engine,
          model,
          faultClass,
          tasks: tasks.length,
          runs: runs.length,
          passedRuns: runs.filter((r) => r.passed).length,
          passK,
          duplicateEffects: sum(runs.map((r) => r.duplicateEffects)),
          decisionsLost: sum(runs.map((r) => r.decisionsLost)),
          decisionsUndelivered: sum(runs.map((r) => r.decisionsUndelivered)),
          personAsks: asks,
          personAsksPer100: round((100 * asks) / runs.length, 1),
          avoidableAsksPer100: round((100 * sum(runs.map((r) => r.personAsksAvoidable ?? 0))) / runs.length, 1),
          askKinds,
          tokensAboveClean: Math.round(meanAbove),
          tokensAboveCleanPct: meanBase ? round((100 * meanAbove) / meanBase, 1) : 0,
          medianRunSeconds: round(durations[Math.floor(durations.length / 2)]! / 1000, 1),
        });
      }
    }
  return out;
}

/**
 * The table: one row per engine, scripted model and fault class. `person asks per 100 runs` counts
 * every approval requested and every block raised for a person (JudgedAsk); the figure in
 * parentheses is the part evidence could have settled, which counts against the engine.
 */
export function reliabilityTable(figures: Figures[], reps: number): string {
  const ks = Array.from({ length: reps }, (_, i) => `pass^${i + 1}`);
  const lines = [
    `| engine | model | fault class | tasks | runs (passed) | ${ks.join(' | ')} | duplicate effects | decisions lost | person asks per 100 runs (of which evidence could settle) | tokens above clean, per run |`,
    `|---|---|---|---:|---:|${ks.map(() => '---:').join('|')}|---:|---:|---:|---:|`,
  ];
  for (const f of figures) {
    const pct = f.faultClass === 'clean' ? '' : ` (${f.tokensAboveCleanPct >= 0 ? '+' : ''}${f.tokensAboveCleanPct}%)`;
    lines.push(
      `| ${f.engine} | ${f.model} | ${f.faultClass} | ${f.tasks} | ${f.runs} (${f.passedRuns}) | ${f.passK.map((p) => (Number.isNaN(p) ? '-' : p.toFixed(2))).join(' | ')} | ${f.duplicateEffects} | ${f.decisionsLost} | ${f.personAsksPer100} (${f.avoidableAsksPer100}) | ${f.faultClass === 'clean' ? '-' : `${f.tokensAboveClean}${pct}`} |`,
    );
  }
  return lines.join('\n');
}

/** What the asks were, per row that has any: `policy:cancel_order 16, guard:loop_detected 4`. */
export function askKindsNotes(figures: Figures[]): string {
  const rows = figures.filter((f) => f.personAsks > 0);
  if (!rows.length) return 'No person was asked in any run.';
  return rows
    .map(
      (f) =>
        `- ${f.engine}, ${f.model}, ${f.faultClass}: ${Object.entries(f.askKinds)
          .sort((a, b) => b[1] - a[1])
          .map(([k, n]) => `${k} ${n}`)
          .join(', ')}`,
    )
    .join('\n');
}

/** What the person-asks column counts, for the report's Markdown. */
export const PERSON_ASKS_NOTE =
  "Person asks: every approval requested and every block raised for a person, per 100 runs. durable-agent's are read from each task's status (approvals, decided or pending, and block escalations, sub-agents' included); the peers' from their decision path (the requests for a decision the harness was asked to answer: the bare loop's approval desk, LangGraph's interrupt, DBOS's published request), since they raise no blocks; a peer that gives up tells no one. In parentheses, the asks evidence could have settled, counted against the engine: every ask but an approval the agent's policy requires (cancel_order, the first time for its exact arguments). In every fault class but tool-capped each fault is one-off and the store can always be read, so an approval asked again for a decided action, a write that needs no approval put to a person, an unknown outcome (one get_order tells) and a guard's block after broken answers (the next read is right) could all have been settled without a person. Under tool-capped, a cap that never passes, a guard's block is not held against the engine: reading again cannot help, the engine's error named a narrower query, and a model that does not take it needs a person. Budget blocks are counted but not held against the engine. Kinds: `policy:TOOL`, `asked_again:TOOL`, `write_put_to_person:TOOL`, `outcome_unknown:CODE`, `guard:CODE`, `budget:CODE`, `other_block:CODE`.";

const ENGINE_COLORS: Record<string, string> = { 'durable-agent': '#1f6feb', 'bare-sdk-loop': '#8c959f', 'langgraph-sqlite': '#d4622a', dbos: '#2da44e', restate: '#8250df' };

/** pass^k (the largest k measured) per engine and fault class. */
export function reliabilitySvg(figures: Figures[], reps: number, title: string): string {
  const classes = FAULT_CLASSES.filter((c) => figures.some((f) => f.faultClass === c));
  const series = [...new Map(figures.map((f) => [`${f.engine}|${f.model}`, { engine: f.engine, model: f.model }])).values()];
  const models = new Set(series.map((s) => s.model));
  return groupedBarChartSvg(
    title,
    classes,
    series.map(({ engine, model }) => ({
      label: models.size > 1 ? `${engine} (${model})` : engine,
      color: model === 'hint-following' ? lighter(ENGINE_COLORS[engine] ?? '#555') : (ENGINE_COLORS[engine] ?? '#555'),
      values: classes.map((c) => figures.find((f) => f.engine === engine && f.model === model && f.faultClass === c)?.passK[reps - 1] ?? NaN),
    })),
    { yMax: 1, yLabel: `pass^${reps}` },
  );
}

/** A colour halfway to white: the hint-following model's bars beside the trajectory model's. */
function lighter(hex: string): string {
  const n = Number.parseInt(hex.slice(1), 16);
  const mix = (c: number) => Math.round(c + (255 - c) / 2);
  return `#${[(n >> 16) & 255, (n >> 8) & 255, n & 255].map((c) => mix(c).toString(16).padStart(2, '0')).join('')}`;
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const round = (x: number, d: number) => Number(x.toFixed(d));
