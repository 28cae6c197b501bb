/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } } }] },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  // The multi-shard cluster tests need `npm run cluster` first; `npm run test:cluster` runs them.
  // The cluster's static checks (compose.test.ts) need no cluster and always run.
  testPathIgnorePatterns: process.env.DURABLE_AGENT_CLUSTER_TESTS ? [] : ['<rootDir>/test/cluster/cluster.test.ts'],
  // The workflow bundle is built once per run (per version of the workflow code), not once per file.
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  // Integration tests each start a real Temporal dev server and spend much of their time waiting on
  // it (timers, polls, child processes): with two files at a time the full run kept two cores 74% busy
  // (14.2 min user + 2.4 sys over 11.2 min), so a third file fills the waits.
  maxWorkers: 3,
  testTimeout: 120_000,
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
};
