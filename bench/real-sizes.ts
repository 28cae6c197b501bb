/**
 * Long tasks at real sizes: 500 turns whose tool returns 10 KB or 40 KB (distinct calls). Per-turn
 * time is what a user waits for between the task's steps (consecutive model calls, from history);
 * history bytes per turn is what the task writes to Temporal; the largest payload is checked
 * against the 256 KB ceiling.
 */
import { answer, callTool, type Harness } from '../test/support/harness';
import { createLongAgent } from '../test/support/long-agents';
import { bytesPerTurn, largestPayload, runsOf } from '../test/support/history-sizes';
import { summarize } from './stats';

export const REAL_SIZE_TURNS = 500;
const WINDOW = 20;

export interface RealSizeRow {
  resultKb: number;
  turns: number;
  runs: number;
  wallSeconds: number;
  /** Median ms between consecutive model calls, turns 1-20 and the last 20. */
  earlyTurnMs: number;
  lateTurnMs: number;
  ratio: number;
  /** Mean encoded history bytes per turn, turns 10-110 and the last 100. */
  earlyBytesPerTurn: number;
  lateBytesPerTurn: number;
  largestPayloadBytes: number;
}

export async function measureRealSizes(h: Harness, sizesKb = [10, 40]): Promise<RealSizeRow[]> {
  const rows: RealSizeRow[] = [];
  for (const kb of sizesKb) {
    const script = h.script([...Array.from({ length: REAL_SIZE_TURNS }, (_, i) => callTool('big_read', { offset: i })), answer('done')]);
    const taskId = h.taskId(`real-${kb}kb`);
    const worker = await h.worker([createLongAgent(kb * 1_000)]);
    const started = Date.now();
    await worker.runUntil(async () => {
      await h.client.start(
        { agent: 'long', prompt: 'read every page', model: { provider: 'scripted', script }, budgets: { turns: REAL_SIZE_TURNS + 10, toolCalls: REAL_SIZE_TURNS + 10 } },
        { taskId },
      );
      await h.client.result(taskId);
    });
    const wallSeconds = (Date.now() - started) / 1_000;
    const runs = await runsOf(h.client, taskId);
    const starts: number[] = [];
    for (const run of runs) {
      for (const event of run.history.events ?? []) {
        if (event.activityTaskScheduledEventAttributes?.activityType?.name !== 'callModel') continue;
        const t = event.eventTime!;
        starts.push(Number(t.seconds) * 1_000 + Math.round((t.nanos ?? 0) / 1e6));
      }
    }
    const turnMs = starts.slice(1).map((t, i) => t - starts[i]!);
    const early = summarize(turnMs.slice(0, WINDOW)).median;
    const late = summarize(turnMs.slice(-WINDOW)).median;
    const perTurn = bytesPerTurn(runs);
    const mean = (xs: number[]) => Math.round(xs.reduce((a, b) => a + b, 0) / xs.length);
    const row: RealSizeRow = {
      resultKb: kb,
      turns: perTurn.length,
      runs: runs.length,
      wallSeconds: Number(wallSeconds.toFixed(1)),
      earlyTurnMs: early,
      lateTurnMs: late,
      ratio: Number((late / early).toFixed(2)),
      earlyBytesPerTurn: mean(perTurn.slice(10, 110)),
      lateBytesPerTurn: mean(perTurn.slice(-100)),
      largestPayloadBytes: Math.max(...runs.map((r) => largestPayload(r.history))),
    };
    console.log(
      `  ${kb} KB results: ${row.turns} turns in ${row.wallSeconds} s over ${row.runs} runs; per turn ${row.earlyTurnMs} -> ${row.lateTurnMs} ms (x${row.ratio}); history ${row.earlyBytesPerTurn} -> ${row.lateBytesPerTurn} bytes/turn; largest payload ${row.largestPayloadBytes} bytes`,
    );
    rows.push(row);
  }
  return rows;
}
