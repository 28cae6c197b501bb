const { lanes, defaultLanes, testMatchOf } = require('./test/lanes');

// The lanes (test/lanes.js): DURABLE_AGENT_LANE=unit|core|soak|cluster runs one (npm run test:unit,
// test:core, test:soak, test:cluster); unset, jest runs unit, core and soak together (npm test), each
// file once. The multi-shard cluster tests need `npm run cluster` first and run only in their lane.
const lane = process.env.DURABLE_AGENT_LANE;
if (lane && !lanes[lane]) throw new Error(`DURABLE_AGENT_LANE=${lane}: no such lane (${Object.keys(lanes).join(', ')})`);

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } } }] },
  testMatch: testMatchOf(lane ? [lane] : defaultLanes),
  // The workflow bundle is built once per run (per version of the workflow code), not once per file.
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  // Integration tests each start a real Temporal dev server and spend much of their time waiting on
  // it. Two files at a time kept two cores 74% busy; a third filled the waits, but the load it added
  // made timing-bound paths flaky in CI (one or two of ~1,390 tests failed in each of three full
  // runs). Two at a time trades a few minutes for a run that means what it says.
  maxWorkers: 2,
  testTimeout: 120_000,
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
};
