/**
 * Committed histories of real tasks, replayed against today's workflow code. A failure here means
 * a change would break tasks already in flight: guard the change with patched() instead of
 * re-recording (see docs/architecture.md, "Changing workflow code").
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { testWorkflowBundle } from '../support/test-bundle';
import { installQuietRuntime } from '../support/quiet-runtime';
import { createDataConverter } from '../../src/codec';
import { COMMITTED_HISTORIES, committedHistories } from '../support/committed-histories';

const DIR = path.join(__dirname, '../histories');
const files = readdirSync(DIR).filter((f) => f.endsWith('.json'));

test('the committed histories are exactly the named set (one per protected code path)', () => {
  expect(files.map((f) => f.replace(/\.json$/, '')).sort()).toEqual([...COMMITTED_HISTORIES].sort());
});

test('every committed history replays without nondeterminism', async () => {
  const bundle = await testWorkflowBundle();
  const histories = committedHistories();
  const failures: string[] = [];
  installQuietRuntime();
  for await (const result of Worker.runReplayHistories({ workflowBundle: bundle, dataConverter: createDataConverter() }, histories)) {
    if (result.error) failures.push(`${result.workflowId}: ${result.error.message}`);
  }
  expect(failures).toEqual([]);
});
