/**
 * The hand-written loop's process: `tsx bare-loop-worker.ts '<options JSON>'` runs one task and
 * prints `OUTCOME <json>` on stdout. The reliability harness SIGKILLs it; what it had is gone.
 */
import { runBareLoop } from './bare-loop';

const options = JSON.parse(process.argv[2] ?? '{}');
runBareLoop(options).then(
  (outcome) => {
    process.stdout.write(`OUTCOME ${JSON.stringify(outcome)}\n`);
    process.exit(0);
  },
  (err: Error) => {
    process.stdout.write(`OUTCOME ${JSON.stringify({ status: 'failed', error: err.message })}\n`);
    process.exit(1);
  },
);
