/**
 * `durable-agent/testing` (src/testing) is what a user's own tests import for the orders service,
 * the scripted model, the strict fake Messages API and tool faults: importing it must not load the
 * Temporal worker. Only `evalRecordings` replays, and it loads the worker when it is called.
 * Checked in a fresh Node process, whose module cache says what was loaded.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

test('importing the testing kit loads no Temporal worker; evalRecordings loads it when called', () => {
  const script = `
    const loaded = () => Object.keys(require.cache).some((file) => file.includes('/node_modules/@temporalio/worker/'));
    const kit = require(${JSON.stringify(path.join(ROOT, 'src/testing/index.ts'))});
    const afterImport = loaded();
    kit.evalRecordings(${JSON.stringify(path.join(ROOT, 'no-such-eval-dir'))}, {}).catch(() => undefined).then(() => {
      process.stdout.write(JSON.stringify({ afterImport, afterEval: loaded(), exports: Object.keys(kit).length }), () => process.exit(0));
    });`;
  const report = JSON.parse(execFileSync(process.execPath, ['--require', 'tsx/cjs', '-e', script], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 50_000 }));
  expect(report.exports).toBeGreaterThan(10);
  expect(report.afterImport).toBe(false);
  expect(report.afterEval).toBe(true);
});
