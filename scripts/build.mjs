// `npm run build`: compiles src/ into dist/ for the package: CommonJS JavaScript that plain Node
// runs (no tsx), .d.ts declarations beside it, and the non-TypeScript files src/ reads at run time
// (the demo's model script). dist/ is removed first, so a file deleted from src/ never lingers in a
// published package.
import { execFileSync } from 'node:child_process';
import { cpSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const src = path.join(root, 'src');
const dist = path.join(root, 'dist');

rmSync(dist, { recursive: true, force: true });
// TypeScript 7's native compiler writes both the JavaScript and the declarations (tsconfig.build.json).
const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
try {
  execFileSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { cwd: root, stdio: 'inherit' });
} catch {
  console.error('build: tsc failed (see above); dist/ is incomplete');
  process.exit(1);
}

// Assets: every file under src/ that is not TypeScript, at the same relative path.
let assets = 0;
for (const file of readdirSync(src, { recursive: true, encoding: 'utf8' })) {
  if (file.endsWith('.ts') || !statSync(path.join(src, file)).isFile()) continue;
  cpSync(path.join(src, file), path.join(dist, file));
  assets++;
}
const files = readdirSync(dist, { recursive: true, encoding: 'utf8' });
console.error(`build: dist/ has ${files.filter((f) => f.endsWith('.js')).length} .js, ${files.filter((f) => f.endsWith('.d.ts')).length} .d.ts and ${assets} asset file(s)`);
