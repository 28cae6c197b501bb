/**
 * Smoke check for the LangGraph peer outside the benchmark: runs one task and prints per-turn
 * percentiles, plus early-vs-late turns so growth with history shows without the full benchmark.
 * Usage: npx tsx bench/peer/try-langgraph.ts [turns=50] [sync|async]
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describeLangGraphPeer, runLangGraphLoop } from './langgraph-loop';

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

async function main(): Promise<void> {
  const turns = Number(process.argv[2] ?? 50);
  const durability = process.argv[3] === 'async' ? 'async' : 'sync';
  const dbDir = mkdtempSync(path.join(os.tmpdir(), 'langgraph-peer-'));
  try {
    console.log(JSON.stringify(describeLangGraphPeer().packages));
    const { turnsMs, totalMs } = await runLangGraphLoop({ turns, dbDir, durability });
    const fmt = (ms: number) => ms.toFixed(2);
    console.log(`turns=${turns} durability=${durability} total=${fmt(totalMs)}ms median=${fmt(percentile(turnsMs, 50))}ms p95=${fmt(percentile(turnsMs, 95))}ms`);
    if (turns >= 40) {
      const early = turnsMs.slice(0, 20);
      const late = turnsMs.slice(-20);
      console.log(`median of turns 1-20=${fmt(percentile(early, 50))}ms, of turns ${turns - 19}-${turns}=${fmt(percentile(late, 50))}ms`);
    }
    const db = path.join(dbDir, 'langgraph-checkpoints.sqlite');
    const wal = `${db}-wal`;
    const size = statSync(db).size + (safeSize(wal) ?? 0);
    console.log(`sqlite size=${(size / 1024 / 1024).toFixed(2)}MiB`);
  } finally {
    rmSync(dbDir, { recursive: true, force: true });
  }
}

function safeSize(file: string): number | undefined {
  try { return statSync(file).size; } catch { return undefined; }
}

main().catch((err) => { console.error(err); process.exitCode = 1; });
