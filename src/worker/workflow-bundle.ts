/**
 * The workflow bundle, built once per version of the workflow code and kept on disk. Bundling runs
 * webpack, which leaves ~70 MB in the heap of the process that ran it and takes seconds; a worker
 * that loads a prebuilt bundle starts faster (what a restarted worker needs) and stays smaller.
 * The bundle is built in a child process so the worker never holds webpack's memory.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { stateDir } from '../server/state-dir';

const run = promisify(execFile);
const WORKFLOWS_DIR = path.resolve(__dirname, '../workflows');
// Workflow code may import only these folders and the Temporal packages (test/unit/sandbox-boundary.test.ts).
const SOURCE_DIRS = [WORKFLOWS_DIR, path.resolve(__dirname, '../protocol')];
const TEMPORAL_PACKAGES = ['@temporalio/workflow', '@temporalio/common', '@temporalio/worker'];

/** A hash of everything that goes into the bundle: the sources and the Temporal packages' versions. */
export function workflowCodeHash(): string {
  const hash = createHash('sha256');
  for (const dir of SOURCE_DIRS) {
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts')).sort()) {
      hash.update(file).update(readFileSync(path.join(dir, file)));
    }
  }
  for (const name of TEMPORAL_PACKAGES) {
    hash.update(name).update((require(`${name}/package.json`) as { version: string }).version);
  }
  return hash.digest('hex').slice(0, 16);
}

/** The path of a bundle of this version of the workflow code, built first if there is none. */
export async function cachedWorkflowBundle(cacheDir = path.join(stateDir(), 'bundles')): Promise<{ codePath: string }> {
  const codePath = path.join(cacheDir, `workflows-${workflowCodeHash()}.js`);
  if (existsSync(codePath)) return { codePath };
  mkdirSync(cacheDir, { recursive: true });
  // Written beside and renamed into place, so a worker starting at the same time never reads half a file.
  const partial = `${codePath}.${process.pid}.tmp`;
  const script = `
    const { bundleWorkflowCode, DefaultLogger } = require(${JSON.stringify(require.resolve('@temporalio/worker'))});
    bundleWorkflowCode({ workflowsPath: ${JSON.stringify(WORKFLOWS_DIR)}, logger: new DefaultLogger('WARN') })
      .then((bundle) => require('node:fs').writeFileSync(${JSON.stringify(partial)}, bundle.code))
      .catch((err) => { console.error(err); process.exit(1); });`;
  await run(process.execPath, ['-e', script], { maxBuffer: 16 * 1024 * 1024 });
  renameSync(partial, codePath);
  return { codePath };
}
