/**
 * `npm run bench [-- NAME...]`: runs the benchmarks (all, or the named ones: cost, recovery, memory) and
 * writes bench/results/ (JSON, plus a Markdown table where there is one).
 */
import path from 'node:path';
import { costTable, runCostOfFailure } from './cost-of-failure';
import { runWaitingMemory } from './waiting-memory';
import { runRecovery } from './recovery';

const out = path.join(__dirname, 'results');
const BENCHMARKS: Record<string, () => Promise<void>> = {
  cost: async () => {
    const rows = await runCostOfFailure(out);
    console.log('\nCost of failure (same model, same faults; tool executions = requests that reached the service):\n');
    console.log(costTable(rows));
  },
  recovery: async () => {
    console.log('\nRecovery: SIGKILL of the worker running a tool call -> the task\'s next completed step:');
    const r = await runRecovery(out);
    console.log(`  heartbeat timeout ${r.heartbeatTimeoutMs} ms`);
    console.log(`  standby worker:   median ${r.standbyWorker.stepCompletedMs.median} ms, max ${r.standbyWorker.stepCompletedMs.max} ms (n=${r.standbyWorker.stepCompletedMs.n})`);
    console.log(`  restarted worker: median ${r.restartedWorker.stepCompletedMs.median} ms, max ${r.restartedWorker.stepCompletedMs.max} ms (n=${r.restartedWorker.stepCompletedMs.n})`);
  },
  memory: async () => {
    console.log('\nWorker memory with tasks waiting for approval:');
    const rows = await runWaitingMemory(out);
    console.log(rows.map((r) => `| ${r.waitingTasks} | ${r.workerRssMb} MB | ${r.secondsToPark} s |`).join('\n'));
  },
};

async function main(): Promise<void> {
  const wanted = process.argv.slice(2);
  const unknown = wanted.filter((name) => !BENCHMARKS[name]);
  if (unknown.length) throw new Error(`Unknown benchmark(s) ${unknown.join(', ')}; known: ${Object.keys(BENCHMARKS).join(', ')}`);
  for (const name of wanted.length ? wanted : Object.keys(BENCHMARKS)) await BENCHMARKS[name]!();
  console.log(`\nResults in ${path.relative(process.cwd(), out)}/`);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
