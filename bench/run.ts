/** `npm run bench`: runs the benchmarks and writes bench/results/ (JSON and a Markdown table each). */
import path from 'node:path';
import { costTable, runCostOfFailure } from './cost-of-failure';

async function main(): Promise<void> {
  const out = path.join(__dirname, 'results');
  const rows = await runCostOfFailure(out);
  console.log('\nCost of failure (same model, same faults; tool executions = requests that reached the service):\n');
  console.log(costTable(rows));
  console.log(`\nWritten to ${path.relative(process.cwd(), out)}/cost-of-failure.{json,md}`);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
