// Installs the npm packages on a fresh clone so the README's commands work as the first thing run.
import { execSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';

const marker = 'node_modules/.package-lock.json';
const stale = !existsSync(marker) || statSync('package-lock.json').mtimeMs > statSync(marker).mtimeMs;
if (stale) {
  console.error('Installing npm packages (npm ci)...');
  execSync('npm ci --no-audit --no-fund', { stdio: ['ignore', 'inherit', 'inherit'] });
}
