// Makes sure the PostgreSQL server binaries (initdb, pg_ctl, postgres) are on this machine, for the
// tests that provision a throwaway server. Prints their folder on stdout.
// `node scripts/ensure-postgres.mjs`: finds /usr/lib/postgresql/<version>/bin (newest first) or
// initdb on PATH; when none is there and we are root on Debian/Ubuntu, installs the `postgresql`
// package with apt-get; otherwise fails saying what to install.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export function findPostgresBin() {
  const base = '/usr/lib/postgresql';
  if (existsSync(base)) {
    const versions = readdirSync(base)
      .filter((v) => existsSync(path.join(base, v, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return path.join(base, versions[0], 'bin');
  }
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir && existsSync(path.join(dir, 'initdb')) && existsSync(path.join(dir, 'pg_ctl'))) return dir;
  }
  return undefined;
}

export function ensurePostgresBin() {
  const found = findPostgresBin();
  if (found) return found;
  const root = process.getuid?.() === 0;
  if (!root || !existsSync('/usr/bin/apt-get')) {
    throw new Error(
      'PostgreSQL server binaries (initdb, pg_ctl) are not installed, and the tests need them to start a throwaway server. ' +
        'Install them (Debian/Ubuntu: apt-get install postgresql; macOS: brew install postgresql) and run again.',
    );
  }
  console.error('Installing PostgreSQL server binaries (apt-get install postgresql)...');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const run = (args) => execFileSync('apt-get', args, { env, stdio: ['ignore', 'ignore', 'inherit'], timeout: 8 * 60_000 });
  run(['update', '-qq']);
  run(['install', '-y', '-qq', '--no-install-recommends', 'postgresql']);
  const installed = findPostgresBin();
  if (!installed) throw new Error('apt-get installed postgresql, yet no initdb was found under /usr/lib/postgresql/*/bin');
  return installed;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  try {
    console.log(ensurePostgresBin());
  } catch (err) {
    console.error(err.message);
    process.exit(1);
  }
}
