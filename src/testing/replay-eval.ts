/**
 * `durable-agent eval DIR` from a test: the same recordings, expectations and checks, with the
 * rows returned so a jest test can assert on them (or on `regressions`, empty when all passed).
 */
import type { EvalOptions, EvalRow } from '../replay/eval';

export interface EvalReport {
  rows: EvalRow[];
  /** True when every row passed: none regressed and none could not run. */
  passed: boolean;
  /** The rows whose replay ran and broke an expectation. */
  regressions: EvalRow[];
  /** The rows whose replay could not run (no verdict: a model script the recording does not carry, a model or server out of reach). */
  cannotRun: EvalRow[];
  /** The table the CLI prints. */
  table: string;
}

/** Replays every recording in `dir` (docs/replay.md) through `options`' server, model and prompt; `agents`: the agents as defined now. */
export async function evalRecordings(dir: string, options: EvalOptions): Promise<EvalReport> {
  // Loaded here, not at import: the replay brings the Temporal worker, which the rest of the kit never needs.
  const { evalCases, loadEvalDir, renderEvalTable } = require('../replay/eval') as typeof import('../replay/eval');
  const rows = await evalCases(await loadEvalDir(dir), options);
  return {
    rows,
    passed: rows.every((r) => r.passed),
    regressions: rows.filter((r) => r.verdict === 'regressed'),
    cannotRun: rows.filter((r) => r.verdict === 'cannot_run'),
    table: renderEvalTable(rows),
  };
}
