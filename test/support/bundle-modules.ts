/**
 * What the workflow bundle really contains, as webpack (through Temporal's own bundler) resolved it:
 * every module file and, for each, the modules its imports resolved to. Side-effect imports,
 * `import()`, re-exports and files in subfolders are all there, because the bundler followed them.
 * The list is kept per version of the workflow code in the test bundles' temp folder, so webpack
 * runs for it once per code change, not on every run.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { workflowCodeHash } from '../../src/worker/workflow-bundle';
import { TEST_BUNDLE_DIR } from './test-bundle';

export interface BundledModule {
  /** Absolute path of the module's file. */
  file: string;
  /** The import requests in it, with the file each resolved to (none for a module webpack left out). */
  imports: { request: string; resolved?: string }[];
}

interface WebpackModule {
  resource?: string;
}
interface WebpackConnection {
  module?: WebpackModule | null;
  dependency?: { request?: string } | null;
}
interface WebpackCompilation {
  modules: Iterable<WebpackModule>;
  moduleGraph: { getOutgoingConnections(module: WebpackModule): Iterable<WebpackConnection> };
}
interface WebpackCompiler {
  hooks: { afterEmit: { tap(name: string, fn: (compilation: WebpackCompilation) => void): void } };
}

const NODE_MODULES = path.resolve(__dirname, '../../node_modules');

/**
 * Bundles `workflowsPath` with Temporal's bundler and returns every module webpack put in the bundle.
 * Packages resolve from the project's node_modules too, so workflow code in a temp folder bundles.
 */
export async function bundledModules(workflowsPath: string): Promise<BundledModule[]> {
  const found: BundledModule[] = [];
  const recorder = {
    apply(compiler: WebpackCompiler) {
      compiler.hooks.afterEmit.tap('record-bundled-modules', (compilation) => {
        for (const module of compilation.modules) {
          if (!module.resource) continue;
          const imports = [...compilation.moduleGraph.getOutgoingConnections(module)]
            .filter((c) => c.dependency?.request !== undefined)
            .map((c) => ({ request: c.dependency!.request!, ...(c.module?.resource ? { resolved: c.module.resource } : {}) }));
          found.push({ file: module.resource.split('?')[0]!, imports });
        }
      });
    },
  };
  await bundleWorkflowCode({
    workflowsPath,
    logger: new DefaultLogger('ERROR'),
    webpackConfigHook: (config) => ({
      ...config,
      resolve: { ...config.resolve, modules: [...(config.resolve?.modules ?? []), NODE_MODULES] },
      plugins: [...(config.plugins ?? []), recorder as never],
    }),
  });
  return found;
}

/** bundledModules() of the project's workflow code, cached by the code's hash. */
export async function projectBundleModules(): Promise<BundledModule[]> {
  const file = path.join(TEST_BUNDLE_DIR, `modules-${workflowCodeHash()}.json`);
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as BundledModule[];
  const modules = await bundledModules(require.resolve('../../src/workflows'));
  mkdirSync(TEST_BUNDLE_DIR, { recursive: true });
  writeFileSync(file, JSON.stringify(modules));
  return modules;
}
