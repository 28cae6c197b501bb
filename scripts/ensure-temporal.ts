/**
 * Installs or builds the Temporal CLI into the project's cache before the tests need it, and the
 * newer single-process server that the upgrade-at-continue-as-new test runs on (go/versioning-server).
 */
import { provisionTemporalCli } from '../src/server/temporal-cli';
import { provisionVersioningServer } from '../test/support/versioning-server-build';

async function main(): Promise<void> {
  console.error(`Temporal CLI: ${await provisionTemporalCli()}`);
  console.error(`Temporal server for the versioning tests: ${await provisionVersioningServer()}`);
}

main().catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});
