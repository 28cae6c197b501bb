// Makes sure a Chromium is there for the inbox's browser tests (driven by playwright-core, which
// never downloads a browser here). `node scripts/ensure-chromium.mjs`: CHROMIUM_PATH or
// /usr/bin/chromium when present; else, as root on Debian/Ubuntu, installs the `chromium` package
// with apt-get. Otherwise, or when the install fails, it says so and exits 0: the browser tests are
// then skipped with a message, and the HTTP-level inbox tests still run.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const wanted = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
if (!existsSync(wanted)) {
  const root = process.getuid?.() === 0;
  if (process.env.CHROMIUM_PATH || !root || !existsSync('/usr/bin/apt-get')) {
    console.error(`No Chromium at ${wanted}: the inbox's browser tests will be skipped (Debian/Ubuntu: apt-get install chromium, or set CHROMIUM_PATH).`);
  } else {
    console.error('Installing Chromium for the inbox browser tests (apt-get install chromium)...');
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    try {
      const run = (args) => execFileSync('apt-get', args, { env, stdio: ['ignore', 'ignore', 'inherit'], timeout: 10 * 60_000 });
      run(['update', '-qq']);
      run(['install', '-y', '-qq', '--no-install-recommends', 'chromium']);
    } catch (err) {
      console.error(`Could not install Chromium (${err.message.split('\n')[0]}): the inbox's browser tests will be skipped.`);
    }
  }
}
