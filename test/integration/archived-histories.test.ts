/**
 * The archived histories (test/histories/archive/) replayed against the builds that ran them. Each
 * build (ARCHIVE_BUILDS) was retired by a change its histories cannot replay on: build-r7's patch
 * markers, build-r9's describeAgent activity. Under Pinned versioning their tasks finish on the build
 * that started them. Each build's workflow code is taken from git by its commit, bundled, and every
 * history archived with it must replay on it. The same histories must fail on today's bundle: that
 * is why each is archived, and it shows this replay can fail at all.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { createDataConverter } from '../../src/codec';
import { workflowBundleOf } from '../../src/worker/workflow-bundle';
import { ARCHIVE_BUILDS, ARCHIVED_HISTORIES, type ArchiveBuild, archivedHistories } from '../support/committed-histories';
import { installQuietRuntime } from '../support/quiet-runtime';
import { TEST_BUNDLE_DIR, testWorkflowBundle } from '../support/test-bundle';

jest.setTimeout(180_000);

const REPO = path.resolve(__dirname, '../..');

/** The build's `src/` (and package.json), extracted once from git; its path. */
function archiveBuildSources(build: ArchiveBuild): string {
  // Under the repository (and ignored with .durable-agent/), so webpack resolves node_modules from its root.
  const sources = path.join(REPO, '.durable-agent/archive', build.commit);
  const done = path.join(sources, '.extracted');
  if (existsSync(done)) return path.join(sources, 'src');
  try {
    execFileSync('git', ['cat-file', '-e', `${build.commit}^{commit}`], { cwd: REPO, stdio: 'ignore' });
  } catch {
    throw new Error(`commit ${build.commit} (tag ${build.tag}) is not in this clone: fetch the full history (git fetch --unshallow) to replay the archived histories`);
  }
  // Extracted beside and renamed into place: a run stopped halfway leaves no tree that looks whole.
  const partial = `${sources}.${process.pid}.tmp`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  const tar = execFileSync('git', ['archive', build.commit, 'src', 'package.json'], { cwd: REPO, maxBuffer: 256 * 1024 * 1024 });
  execFileSync('tar', ['-x', '-C', partial], { input: tar });
  writeFileSync(path.join(partial, '.extracted'), `${build.commit}\n`);
  rmSync(sources, { recursive: true, force: true });
  mkdirSync(path.dirname(sources), { recursive: true });
  renameSync(partial, sources);
  return path.join(sources, 'src');
}

/** Each named history's replay error on the bundle, by name (undefined where it replayed). */
async function replayErrors(workflowBundle: { codePath: string }, names: readonly string[]): Promise<Map<string, string | undefined>> {
  installQuietRuntime();
  const errors = new Map<string, string | undefined>();
  for await (const result of Worker.runReplayHistories({ workflowBundle, dataConverter: createDataConverter() }, archivedHistories(names))) {
    errors.set(result.workflowId, result.error?.message);
  }
  return errors;
}

test('the archive holds exactly the named histories', () => {
  const files = readdirSync(path.join(__dirname, '../histories/archive')).filter((f) => f.endsWith('.json'));
  expect(files.map((f) => f.replace(/\.json$/, '')).sort()).toEqual([...ARCHIVED_HISTORIES].sort());
});

test.each(ARCHIVE_BUILDS.map((build) => [build.tag, build] as const))('every history archived with %s replays on it', async (_tag, build) => {
  const bundle = await workflowBundleOf(archiveBuildSources(build), TEST_BUNDLE_DIR);
  const errors = await replayErrors(bundle, build.histories);
  expect([...errors.keys()].sort()).toEqual([...build.histories].sort());
  expect([...errors].filter(([, error]) => error !== undefined).map(([name, error]) => `${name}: ${error}`)).toEqual([]);
});

test("no archived history replays on today's code: each took a path this code no longer takes", async () => {
  const errors = await replayErrors(await testWorkflowBundle(), ARCHIVED_HISTORIES);
  expect([...errors.keys()].sort()).toEqual([...ARCHIVED_HISTORIES].sort());
  const replayed = [...errors].filter(([, error]) => error === undefined).map(([name]) => name);
  // A history that replays on today's code belongs in COMMITTED_HISTORIES, not in the archive.
  expect(replayed).toEqual([]);
  expect([...errors.values()].every((error) => /TMPRL1100/.test(error!))).toBe(true);
});
