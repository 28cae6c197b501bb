/**
 * Workflow code runs in Temporal's deterministic sandbox: it may import only the workflow SDK and
 * sandbox-safe project modules, never Node built-ins, the model SDK, zod or tool code.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const SRC = path.join(__dirname, '../../src');
const SANDBOX_DIRS = ['workflows', 'protocol'];
const ALLOWED_PACKAGES = ['@temporalio/workflow', '@temporalio/common'];
/**
 * Deliberate exceptions, one file each: verifying a signed decision needs Ed25519 and SHA-256 in the
 * sandbox. @noble/curves and @noble/hashes are pure JavaScript (no I/O, no Node built-ins, no
 * randomness when verifying), audited, and bundle with the workflow code.
 */
const ALLOWED_PER_FILE: Record<string, string[]> = {
  'protocol/decision-proof.ts': ['@noble/curves/ed25519', '@noble/hashes/sha2'],
};

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:import|export)[^'"]*?from\s+['"]([^'"]+)['"]|require\(['"]([^'"]+)['"]\)/g)].map((m) => (m[1] ?? m[2])!);
}

const files = SANDBOX_DIRS.flatMap((dir) =>
  readdirSync(path.join(SRC, dir))
    .filter((f) => f.endsWith('.ts'))
    .map((f) => path.join(SRC, dir, f)),
);

test.each(files.map((f) => [path.relative(SRC, f), f]))('%s imports only sandbox-safe modules', (_name, file) => {
  for (const spec of importsOf(file)) {
    if (spec.startsWith('.')) {
      const target = path.relative(SRC, path.resolve(path.dirname(file), spec));
      expect(SANDBOX_DIRS.some((d) => target.startsWith(d))).toBe(true);
    } else {
      expect([...ALLOWED_PACKAGES, ...(ALLOWED_PER_FILE[path.relative(SRC, file)] ?? [])]).toContain(spec);
    }
  }
});
