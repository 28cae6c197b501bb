/**
 * The workflow bundle the integration tests share: built once per version of the workflow code
 * (cachedWorkflowBundle keys the file by a hash of the sources) in a temp folder, so a run bundles
 * at most once (jest's globalSetup builds it before the first test file starts) instead of once
 * per file, and nothing is written into the repository.
 */
import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { cachedWorkflowBundle } from '../../src/worker/workflow-bundle';

/**
 * Per checkout: the same sources in two clones must not share a bundle, whose source map names
 * the files of the clone that built it (the sandbox-boundary test reads those paths).
 */
export const TEST_BUNDLE_DIR = path.join(os.tmpdir(), 'durable-agent-test-bundles', createHash('sha256').update(path.resolve(__dirname, '../..')).digest('hex').slice(0, 12));

export function testWorkflowBundle(workflowInterceptorModules?: string[]): Promise<{ codePath: string }> {
  return cachedWorkflowBundle(TEST_BUNDLE_DIR, workflowInterceptorModules ? { workflowInterceptorModules } : {});
}
