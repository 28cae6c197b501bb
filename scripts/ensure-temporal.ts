/** Installs or builds the Temporal CLI into the project's cache before the tests need it. */
import { provisionTemporalCli } from '../src/server/temporal-cli';

provisionTemporalCli()
  .then((binary) => console.error(`Temporal CLI: ${binary}`))
  .catch((err: Error) => {
    console.error(err.message);
    process.exit(1);
  });
