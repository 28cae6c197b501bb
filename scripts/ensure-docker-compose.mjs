// Makes sure docker-compose is there for the cluster's static checks (test/cluster/compose.test.ts
// validates docker-compose.yml with `docker-compose config -q`; no Docker daemon is needed).
// `node scripts/ensure-docker-compose.mjs`: when it is missing and we are root on Debian/Ubuntu,
// installs the `docker-compose` package with apt-get. Otherwise it says so and exits 0: the check
// is then skipped locally, and fails in CI with the install command.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

function present() {
  try {
    execFileSync('docker-compose', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

if (!present()) {
  const root = process.getuid?.() === 0;
  if (!root || !existsSync('/usr/bin/apt-get')) {
    console.error('No docker-compose: the compose file check will be skipped (Debian/Ubuntu: apt-get install docker-compose).');
  } else {
    console.error('Installing docker-compose for the compose file check (apt-get install docker-compose)...');
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    try {
      const run = (args) => execFileSync('apt-get', args, { env, stdio: ['ignore', 'ignore', 'inherit'], timeout: 10 * 60_000 });
      run(['update', '-qq']);
      run(['install', '-y', '-qq', '--no-install-recommends', 'docker-compose']);
    } catch (err) {
      console.error(`Could not install docker-compose (${err.message.split('\n')[0]}): the compose file check will be skipped.`);
    }
  }
}
