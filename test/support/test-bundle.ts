/**
 * The workflow bundle the integration tests share: built once per version of the workflow code
 * (cachedWorkflowBundle keys the file by a hash of the sources) in a temp folder, so a run bundles
 * at most once (jest's globalSetup builds it before the first test file starts) instead of once
 * per file, and nothing is written into the repository.
 */
import os from 'node:os';
import path from 'node:path';
import { cachedWorkflowBundle } from '../../src/worker/workflow-bundle';

export const TEST_BUNDLE_DIR = path.join(os.tmpdir(), 'durable-agent-test-bundles');

export function testWorkflowBundle(workflowInterceptorModules?: string[]): Promise<{ codePath: string }> {
  return cachedWorkflowBundle(TEST_BUNDLE_DIR, workflowInterceptorModules ? { workflowInterceptorModules } : {});
}
