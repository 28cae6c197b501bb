/**
 * The archived histories (test/histories/archive/) replayed against the build that ran them. They
 * were recorded by the builds before patch markers were retired (issue 36 point 4) and hold markers
 * today's code no longer asks, so they cannot replay on it; under Pinned versioning their tasks
 * finish on the build that started them. That build's workflow code is taken from git (ARCHIVE_BUILD,
 * the commit tagged build-r7), bundled, and every archived history must replay on it. The same
 * histories must fail on today's bundle: that is why each is archived, and it shows this replay can
 * fail at all.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { createDataConverter } from '../../src/codec';
import { workflowBundleOf } from '../../src/worker/workflow-bundle';
import { ARCHIVE_BUILD, ARCHIVED_HISTORIES, archivedHistories } from '../support/committed-histories';
import { installQuietRuntime } from '../support/quiet-runtime';
import { TEST_BUNDLE_DIR, testWorkflowBundle } from '../support/test-bundle';

jest.setTimeout(180_000);

const REPO = path.resolve(__dirname, '../..');
// Under the repository (and ignored with .durable-agent/), so webpack resolves node_modules from its root.
const SOURCES = path.join(REPO, '.durable-agent/archive', ARCHIVE_BUILD);

/** The archive build's `src/` (and package.json), extracted once from git; its path. */
function archiveBuildSources(): string {
  const done = path.join(SOURCES, '.extracted');
  if (existsSync(done)) return path.join(SOURCES, 'src');
  try {
    execFileSync('git', ['cat-file', '-e', `${ARCHIVE_BUILD}^{commit}`], { cwd: REPO, stdio: 'ignore' });
  } catch {
    throw new Error(`commit ${ARCHIVE_BUILD} (tag build-r7) is not in this clone: fetch the full history (git fetch --unshallow) to replay the archived histories`);
  }
  // Extracted beside and renamed into place: a run stopped halfway leaves no tree that looks whole.
  const partial = `${SOURCES}.${process.pid}.tmp`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  const tar = execFileSync('git', ['archive', ARCHIVE_BUILD, 'src', 'package.json'], { cwd: REPO, maxBuffer: 256 * 1024 * 1024 });
  execFileSync('tar', ['-x', '-C', partial], { input: tar });
  writeFileSync(path.join(partial, '.extracted'), `${ARCHIVE_BUILD}\n`);
  rmSync(SOURCES, { recursive: true, force: true });
  mkdirSync(path.dirname(SOURCES), { recursive: true });
  renameSync(partial, SOURCES);
  return path.join(SOURCES, 'src');
}

/** Each history's replay error, by name (undefined where it replayed). */
async function replayErrors(workflowBundle: { codePath: string }): Promise<Map<string, string | undefined>> {
  installQuietRuntime();
  const errors = new Map<string, string | undefined>();
  for await (const result of Worker.runReplayHistories({ workflowBundle, dataConverter: createDataConverter() }, archivedHistories())) {
    errors.set(result.workflowId, result.error?.message);
  }
  return errors;
}

test('the archive holds exactly the named histories', () => {
  const files = readdirSync(path.join(__dirname, '../histories/archive')).filter((f) => f.endsWith('.json'));
  expect(files.map((f) => f.replace(/\.json$/, '')).sort()).toEqual([...ARCHIVED_HISTORIES].sort());
});

test('every archived history replays on the build that ran it (build-r7)', async () => {
  const bundle = await workflowBundleOf(archiveBuildSources(), TEST_BUNDLE_DIR);
  const errors = await replayErrors(bundle);
  expect([...errors.keys()].sort()).toEqual([...ARCHIVED_HISTORIES].sort());
  expect([...errors].filter(([, error]) => error !== undefined).map(([name, error]) => `${name}: ${error}`)).toEqual([]);
});

test("no archived history replays on today's code: each holds a patch marker it no longer asks", async () => {
  const errors = await replayErrors(await testWorkflowBundle());
  expect([...errors.keys()].sort()).toEqual([...ARCHIVED_HISTORIES].sort());
  const replayed = [...errors].filter(([, error]) => error === undefined).map(([name]) => name);
  // A history that replays on today's code belongs in COMMITTED_HISTORIES, not in the archive.
  expect(replayed).toEqual([]);
  expect([...errors.values()].every((error) => /TMPRL1100/.test(error!))).toBe(true);
});
