/**
 * `durable-agent eval DIR` from a test: the same recordings, expectations and checks, with the
 * rows returned so a jest test can assert on them (or on `regressions`, empty when all passed).
 */
import { evalCases, loadEvalDir, renderEvalTable, type EvalRow } from '../replay/eval';
import type { ReplayOptions } from '../replay/run-replay';

export interface EvalReport {
  rows: EvalRow[];
  /** The rows that broke an expectation or could not run. */
  regressions: EvalRow[];
  /** The table the CLI prints. */
  table: string;
}

/** Replays every recording in `dir` (docs/replay.md) through `options`' server, model and prompt. */
export async function evalRecordings(dir: string, options: Omit<ReplayOptions, 'replayId'>): Promise<EvalReport> {
  const rows = await evalCases(await loadEvalDir(dir), options);
  return { rows, regressions: rows.filter((r) => !r.passed), table: renderEvalTable(rows) };
}
