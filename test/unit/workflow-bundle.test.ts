/** The workflow bundle is built once per version of the workflow code, outside the worker's process, and reused. */
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cachedWorkflowBundle, workflowCodeHash } from '../../src/worker/workflow-bundle';

test('the first call builds the bundle under a name that carries the code hash; the next call reuses the file', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bundle-cache-'));
  const first = await cachedWorkflowBundle(dir);
  expect(path.basename(first.codePath)).toBe(`workflows-${workflowCodeHash()}.js`);
  expect(readFileSync(first.codePath, 'utf8')).toContain('agentTask');
  const builtAt = statSync(first.codePath).mtimeMs;
  const again = await cachedWorkflowBundle(dir);
  expect(again).toEqual(first);
  expect(statSync(again.codePath).mtimeMs).toBe(builtAt);
}, 60_000);

test('the code hash is stable while the sources are', () => {
  expect(workflowCodeHash()).toMatch(/^[0-9a-f]{16}$/);
  expect(workflowCodeHash()).toBe(workflowCodeHash());
});
