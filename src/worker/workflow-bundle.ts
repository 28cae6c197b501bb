/**
 * The workflow bundle, built once per version of the workflow code and kept on disk. Bundling runs
 * webpack, which leaves its memory in the heap of the process that ran it and takes seconds; a
 * worker that loads a prebuilt bundle starts faster (what a restarted worker needs) and stays
 * smaller. The bundle is built in a child process so the worker never holds webpack's memory.
 */
import { execFile } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { stateDir } from '../server/state-dir';

const run = promisify(execFile);
const WORKFLOWS_DIR = path.resolve(__dirname, '../workflows');
// Every bundle carries the workers' payload converter (createDataConverter names the same file).
const PAYLOAD_CONVERTER = require.resolve('../protocol/payload-converter');
// Workflow code may import only these folders and the Temporal packages (test/integration/sandbox-boundary.test.ts).
export const WORKFLOW_SOURCE_DIRS = [WORKFLOWS_DIR, path.resolve(__dirname, '../rules'), path.resolve(__dirname, '../protocol')];
const TEMPORAL_PACKAGES = ['@temporalio/workflow', '@temporalio/common', '@temporalio/proto', '@temporalio/worker'];

/**
 * Modules a worker thread evaluates once and shares between all the workflows of its reused V8
 * context (the SDK's preloadModules), instead of once per workflow instance: every start, and every
 * replay of a run the cache had evicted. The wire checks build their zod schemas at load, which cost
 * about a third of the workflow thread's time on 1,000 tasks at once (issue 39; what they import
 * comes along: zod, the noble hashes and curves, canonical JSON, task ids). The SDK deep-freezes
 * what a shared module exports. Sharing is safe only for modules that keep no state of a workflow:
 * constants and pure functions, and nothing from @temporalio/workflow
 * (test/unit/shared-workflow-modules.test.ts holds every module they reach to that).
 */
export const SHARED_WORKFLOW_MODULES: readonly string[] = [require.resolve('../protocol/wire-checks')];

/** A hash of everything that goes into the bundle: the sources (all files, recursively) and the Temporal packages' versions. */
export function workflowCodeHash(dirs = WORKFLOW_SOURCE_DIRS): string {
  const hash = createHash('sha256');
  for (const dir of dirs) {
    for (const file of readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort()) {
      const full = path.join(dir, file);
      if (!file.endsWith('.ts') && !file.endsWith('.js') && !file.endsWith('.json')) continue;
      hash.update(path.relative(dir, full)).update(readFileSync(full));
    }
  }
  for (const name of TEMPORAL_PACKAGES) {
    hash.update(name).update((require(`${name}/package.json`) as { version: string }).version);
  }
  return hash.digest('hex').slice(0, 16);
}

const building = new Map<string, Promise<{ codePath: string }>>();

/**
 * The path of a bundle of this version of the workflow code, built first if there is none.
 * `failureConverterPath` (set by createDataConverter when payloads are encrypted) goes into the
 * bundle, so failures the workflow itself raises are encoded too; it gets a file of its own.
 */
export function cachedWorkflowBundle(
  cacheDir = path.join(stateDir(), 'bundles'),
  options: { failureConverterPath?: string; workflowInterceptorModules?: string[] } = {},
): Promise<{ codePath: string }> {
  const converter = options.failureConverterPath;
  const interceptorModules = options.workflowInterceptorModules ?? [];
  let suffix = converter ? `-fc-${createHash('sha256').update(converter).update(readFileSync(converter)).digest('hex').slice(0, 8)}` : '';
  // Interceptor modules (tracing) get a bundle of their own, keyed by their folder's sources.
  if (interceptorModules.length > 0) {
    const hash = createHash('sha256');
    for (const m of interceptorModules) hash.update(m).update(workflowCodeHash([path.dirname(m)]));
    suffix += `-wi-${hash.digest('hex').slice(0, 8)}`;
  }
  // The shared modules are part of how the bundle was built: a bundle from before them is not reused.
  suffix += `-sm-${createHash('sha256')
    .update(SHARED_WORKFLOW_MODULES.map((m) => path.relative(WORKFLOWS_DIR, m)).join('\n'))
    .digest('hex')
    .slice(0, 8)}`;
  const codePath = path.join(cacheDir, `workflows-${workflowCodeHash()}${suffix}.js`);
  if (existsSync(codePath)) return Promise.resolve({ codePath });
  // One build per process; other processes may build the same file at the same time, which is harmless.
  let pending = building.get(codePath);
  if (!pending) {
    pending = build(codePath, converter, interceptorModules).finally(() => building.delete(codePath));
    building.set(codePath, pending);
  }
  return pending;
}

/**
 * A bundle of the workflow code in another source tree (`srcDir` holds `workflows/`, `rules/` and
 * `protocol/`, as this package's `src/` or `dist/` does), for `deploy check` of a build not
 * installed here. Kept beside the default bundles, keyed by that tree's hash.
 */
export function workflowBundleOf(srcDir: string, cacheDir = path.join(stateDir(), 'bundles')): Promise<{ codePath: string; codeHash: string }> {
  const dirs = ['workflows', 'rules', 'protocol'].map((d) => path.resolve(srcDir, d));
  const codeHash = workflowCodeHash(dirs);
  const codePath = path.join(cacheDir, `workflows-${codeHash}-at-${createHash('sha256').update(path.resolve(srcDir)).digest('hex').slice(0, 8)}.js`);
  if (existsSync(codePath)) return Promise.resolve({ codePath, codeHash });
  return build(codePath, undefined, [], dirs[0]).then((b) => ({ ...b, codeHash }));
}

async function build(codePath: string, failureConverterPath?: string, workflowInterceptorModules: string[] = [], workflowsDir = WORKFLOWS_DIR): Promise<{ codePath: string }> {
  mkdirSync(path.dirname(codePath), { recursive: true });
  // Written beside and renamed into place, so a worker starting at the same time never reads half a file.
  const partial = `${codePath}.${randomUUID()}.tmp`;
  const script = [
    `const { bundleWorkflowCode, DefaultLogger } = require(${JSON.stringify(require.resolve('@temporalio/worker'))});`,
    // Only this tree's own bundle shares modules: another tree's (deploy check) may not have them.
    `bundleWorkflowCode({ workflowsPath: ${JSON.stringify(workflowsDir)}, payloadConverterPath: ${JSON.stringify(PAYLOAD_CONVERTER)}, failureConverterPath: ${JSON.stringify(failureConverterPath)}, workflowInterceptorModules: ${JSON.stringify(workflowInterceptorModules)}, preloadModules: ${JSON.stringify(workflowsDir === WORKFLOWS_DIR ? SHARED_WORKFLOW_MODULES : [])}, logger: new DefaultLogger('WARN') })`,
    `  .then((bundle) => require('node:fs').writeFileSync(${JSON.stringify(partial)}, bundle.code))`,
    `  .catch((err) => { console.error(err && err.message ? err.message : err); process.exit(1); });`,
  ].join('\n');
  try {
    await run(process.execPath, ['-e', script], { maxBuffer: 16 * 1024 * 1024 });
    renameSync(partial, codePath);
  } catch (err) {
    rmSync(partial, { force: true });
    const stderr = String((err as { stderr?: unknown }).stderr ?? '').trim();
    throw new Error(`Bundling the workflow code failed: ${stderr.split('\n').slice(-3).join(' ') || (err as Error).message}`);
  }
  return { codePath };
}
