/**
 * `durable-agent eval DIR` from a test: the same recordings, expectations and checks, with the
 * rows returned so a jest test can assert on them (or on `regressions`, empty when all passed).
 */
import { evalCases, loadEvalDir, renderEvalTable, type EvalRow } from '../replay/eval';

export interface EvalReport {
  rows: EvalRow[];
  /** The rows that broke an expectation or could not run. */
  regressions: EvalRow[];
  /** The table the CLI prints. */
  table: string;
}

/** Replays every recording in `dir` (docs/replay.md) through `options`' server, model and prompt; `agents`: the agents as defined now. */
export async function evalRecordings(dir: string, options: Parameters<typeof evalCases>[1]): Promise<EvalReport> {
  const rows = await evalCases(await loadEvalDir(dir), options);
  return { rows, regressions: rows.filter((r) => !r.passed), table: renderEvalTable(rows) };
}
