/** Builds the shared workflow bundle once, before any test file runs (see test-bundle.ts). */
import { testWorkflowBundle } from './test-bundle';

export default async function globalSetup(): Promise<void> {
  // The unit lane (npm run test:unit) needs no bundle.
  if (process.env.DURABLE_AGENT_LANE === 'unit') return;
  await testWorkflowBundle();
}
