// Installs the npm packages on a fresh clone so the README's commands work as the first thing run.
import { execSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';

const marker = 'node_modules/.package-lock.json';
const stale = !existsSync(marker) || statSync('package-lock.json').mtimeMs > statSync(marker).mtimeMs;
if (stale) {
  console.error('Installing npm packages from package-lock.json...');
  // Not `npm ci`: the lock cannot list every platform's optional binaries (@swc/core, unrs-resolver)
  // when the registry lacks some of them, and `npm ci` refuses such a lock. `--no-save` keeps the
  // lock as committed.
  execSync('npm install --no-save --no-audit --no-fund', { stdio: ['ignore', 'inherit', 'inherit'] });
}
