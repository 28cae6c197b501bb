/** The workflow bundle is built once per version of the workflow code, outside the worker's process, and reused. */
import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cachedWorkflowBundle, workflowCodeHash } from '../../src/worker/workflow-bundle';

test('the first call builds the bundle under a name that carries the code hash; the next call reuses the file', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bundle-cache-'));
  const first = await cachedWorkflowBundle(dir);
  // The code hash first (the build id is read from it), then how the bundle was built: the modules it shares.
  expect(path.basename(first.codePath)).toMatch(new RegExp(`^workflows-${workflowCodeHash()}-sm-[0-9a-f]{8}\\.js$`));
  const code = readFileSync(first.codePath, 'utf8');
  expect(code).toContain('agentTask');
  // The wire checks are evaluated once per worker thread, before any workflow (SHARED_WORKFLOW_MODULES).
  const preload = /exports\.preloadModules = function preloadModules\(\) \{([^}]*)\}/.exec(code)?.[1] ?? '';
  expect(preload).toMatch(/wire-checks/);
  const builtAt = statSync(first.codePath).mtimeMs;
  const again = await cachedWorkflowBundle(dir);
  expect(again).toEqual(first);
  expect(statSync(again.codePath).mtimeMs).toBe(builtAt);
}, 60_000);

test('the code hash changes when any source file changes, also in a subfolder', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bundle-src-'));
  mkdirSync(path.join(dir, 'nested'));
  writeFileSync(path.join(dir, 'a.ts'), 'export const a = 1;');
  writeFileSync(path.join(dir, 'nested', 'b.ts'), 'export const b = 1;');
  const before = workflowCodeHash([dir]);
  expect(workflowCodeHash([dir])).toBe(before);
  writeFileSync(path.join(dir, 'nested', 'b.ts'), 'export const b = 2;');
  const afterNested = workflowCodeHash([dir]);
  expect(afterNested).not.toBe(before);
  writeFileSync(path.join(dir, 'a.ts'), 'export const a = 2;');
  expect(workflowCodeHash([dir])).not.toBe(afterNested);
});
