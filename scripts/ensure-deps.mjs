// Installs the npm packages on a fresh clone so the README's commands work as the first thing run.
// `node scripts/ensure-deps.mjs [DIR]`: the packages of DIR (default: the current folder), when its
// node_modules is missing or older than its package-lock.json.
import { execSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';

const dir = process.argv[2] ?? '.';
const lock = path.join(dir, 'package-lock.json');
const marker = path.join(dir, 'node_modules/.package-lock.json');
const stale = !existsSync(marker) || statSync(lock).mtimeMs > statSync(marker).mtimeMs;
if (stale) {
  console.error(`Installing npm packages from ${lock}...`);
  // `npm ci`: exactly the committed lock, as every CI system installs. The lock stays installable on
  // every platform because @swc/core and unrs-resolver are pinned to releases whose platform
  // binaries all exist (see package.json's pin and overrides).
  execSync('npm ci --no-audit --no-fund', { cwd: dir, stdio: ['ignore', 'inherit', 'inherit'] });
}
