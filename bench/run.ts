/**
 * `npm run bench [-- NAME...]`: runs the benchmarks (all, or the named ones: cost, memory) and
 * writes bench/results/ (JSON, plus a Markdown table where there is one).
 */
import path from 'node:path';
import { costTable, runCostOfFailure } from './cost-of-failure';
import { runWaitingMemory } from './waiting-memory';

const out = path.join(__dirname, 'results');
const BENCHMARKS: Record<string, () => Promise<void>> = {
  cost: async () => {
    const rows = await runCostOfFailure(out);
    console.log('\nCost of failure (same model, same faults; tool executions = requests that reached the service):\n');
    console.log(costTable(rows));
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
