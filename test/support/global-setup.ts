/** Builds the shared workflow bundle once, before any test file runs (see test-bundle.ts). */
import { testWorkflowBundle } from './test-bundle';

export default async function globalSetup(): Promise<void> {
  // Unit-only runs (npm run test:unit) need no bundle.
  if (process.env.DURABLE_AGENT_UNIT_ONLY === '1') return;
  await testWorkflowBundle();
}
