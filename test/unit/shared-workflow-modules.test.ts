/**
 * The modules the workflow bundle shares between workflows (SHARED_WORKFLOW_MODULES: evaluated once
 * per worker thread, not once per workflow) must keep no state of a workflow. Every module they reach
 * is read here: no workflow API, no package but pure ones, and no module-level variable or
 * collection that a workflow could write and another read.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { SHARED_WORKFLOW_MODULES } from '../../src/worker/workflow-bundle';

/** Packages with no state a workflow can reach: schemas and hashes, pure functions of their input. */
const PURE_PACKAGES = ['zod', '@noble/hashes/', '@noble/curves/'];

/** The source files a module reaches through its value imports (type-only imports are erased). */
function reached(entry: string): { files: string[]; packages: string[] } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    const source = readFileSync(file, 'utf8');
    for (const m of source.matchAll(/^import\s+(type\s+)?[^;]*?from\s+'([^']+)';/gms)) {
      if (m[1]) continue;
      const spec = m[2]!;
      if (spec.startsWith('.')) visit(`${path.resolve(path.dirname(file), spec)}.ts`);
      else packages.add(spec);
    }
  };
  visit(entry);
  return { files: [...files], packages: [...packages] };
}

test.each(SHARED_WORKFLOW_MODULES.map((m) => [path.basename(m), m]))('%s and all it imports keep no workflow state', (_name, entry) => {
  const { files, packages } = reached(entry);
  expect(files.length).toBeGreaterThan(0);
  for (const pkg of packages) expect([pkg, PURE_PACKAGES.some((p) => pkg === p || pkg.startsWith(p))]).toEqual([pkg, true]);
  for (const file of files) {
    const source = readFileSync(file, 'utf8');
    // Module scope: no rebindable variable, no collection built at load that code could add to.
    const state = source.match(/^(?:export\s+)?(?:let|var)\s+\w+|^(?:export\s+)?const\s+\w+(?::[^=]+)?=\s*new\s+(?:Map|Set|WeakMap|WeakSet|Array)\b/gm) ?? [];
    expect([path.basename(file), state]).toEqual([path.basename(file), []]);
  }
});

test('the shared modules are inside the workflow sources the bundle may hold', () => {
  for (const m of SHARED_WORKFLOW_MODULES) expect(path.relative(path.resolve(__dirname, '../../src/protocol'), m).startsWith('..')).toBe(false);
});
