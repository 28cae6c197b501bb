/**
 * Loads a `worker --agents FILE` module as its author wrote it: TypeScript or JavaScript, CommonJS or
 * ES module, importing `durable-agent` by name. That name (and its subpaths) is pointed at the copy
 * of the package running this CLI: its sources in a clone (through tsx, so no build step and no
 * dist/ is needed) and its dist/ when installed. One copy means the agents and the worker share one
 * defineAgent and one set of error classes, whichever project the agents file sits in.
 */
import Module from 'node:module';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** The extensions an agents module may have: what Node and tsx load. */
export const AGENTS_MODULE_EXTENSIONS = ['.ts', '.mts', '.cts', '.js', '.mjs', '.cjs'] as const;

/** The root of the copy of the package running this CLI: a checkout, or node_modules/durable-agent. */
export const PACKAGE_ROOT = path.resolve(__dirname, '../..');
/** This file is TypeScript when the CLI runs from a clone's src/, JavaScript when it runs from dist/. */
const FROM_SOURCE = path.extname(__filename) === '.ts';

/** `durable-agent`, `durable-agent/workflows`, ... -> the file this copy of the package serves for each. */
export function packageAliases(): Map<string, string> {
  const manifest = JSON.parse(readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as {
    name: string;
    exports: Record<string, string | { default?: string }>;
  };
  const aliases = new Map<string, string>();
  for (const [subpath, target] of Object.entries(manifest.exports)) {
    const compiled = typeof target === 'string' ? target : target.default;
    if (!compiled?.endsWith('.js')) continue;
    const specifier = subpath === '.' ? manifest.name : `${manifest.name}/${subpath.replace(/^\.\//, '')}`;
    const file = path.join(PACKAGE_ROOT, compiled);
    aliases.set(specifier, FROM_SOURCE ? sourceOf(file) : file);
  }
  return aliases;
}

/** dist/x/index.js -> src/x/index.ts: the build mirrors src/ (scripts/build.mjs). */
function sourceOf(compiled: string): string {
  const relative = path.relative(path.join(PACKAGE_ROOT, 'dist'), compiled);
  return path.join(PACKAGE_ROOT, 'src', relative.replace(/\.js$/, '.ts'));
}

let installed = false;

/** Once per process: TypeScript through tsx for require() and import(), and the package name aliased for require(). */
async function installLoaders(): Promise<void> {
  if (installed) return;
  installed = true;
  // A clone's CLI already runs under tsx's require hook (bin/durable-agent); the installed one does not.
  if (!('.ts' in require.extensions)) (require('tsx/cjs/api') as typeof import('tsx/cjs/api')).register();
  // The ES module build of tsx's API: its CommonJS build registers a loader path that does not exist (tsx 4.23).
  (await import('tsx/esm/api')).register();

  const aliases = packageAliases();
  const internals = Module as unknown as { _resolveFilename: (request: string, ...rest: unknown[]) => string };
  const resolveFilename = internals._resolveFilename;
  internals._resolveFilename = function (this: unknown, request: string, ...rest: unknown[]) {
    return aliases.get(request) ?? resolveFilename.call(this, request, ...rest);
  };
}

let esmAliased = false;

/**
 * The package name for import(), registered only before an ES module is imported. Each name resolves
 * to a small ES module that require()s the same file the CLI uses, so both share one module cache
 * entry; its exports are listed by name because Node cannot detect the named exports of a
 * CommonJS file that tsx compiles on the fly.
 */
function aliasForImport(): void {
  if (esmAliased) return;
  esmAliased = true;
  const urls: Record<string, string> = {};
  for (const [specifier, file] of packageAliases()) {
    const names = Object.keys(require(file) as object).filter((name) => name !== 'default' && /^[A-Za-z_$][\w$]*$/.test(name));
    const wrapper =
      `import { createRequire } from 'node:module';\n` +
      `const entry = createRequire(${JSON.stringify(pathToFileURL(file).href)})(${JSON.stringify(file)});\n` +
      `export default entry;\n` +
      (names.length > 0 ? `export const { ${names.join(', ')} } = entry;\n` : '');
    urls[specifier] = `data:text/javascript,${encodeURIComponent(wrapper)}`;
  }
  const hook =
    `const aliases = ${JSON.stringify(urls)};\n` +
    'export async function resolve(specifier, context, next) {\n' +
    '  return Object.hasOwn(aliases, specifier) ? { url: aliases[specifier], format: "module", shortCircuit: true } : next(specifier, context);\n' +
    '}\n';
  Module.register(`data:text/javascript,${encodeURIComponent(hook)}`);
}

/** require() first, so a CommonJS module shares the CLI's module cache; import() for ES modules. */
export async function importAgentsModule(file: string): Promise<unknown> {
  await installLoaders();
  const extension = path.extname(file).toLowerCase();
  if (extension !== '.mjs' && extension !== '.mts') {
    try {
      return require(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ERR_REQUIRE_ESM') throw err;
    }
  }
  aliasForImport();
  return import(pathToFileURL(file).href);
}

/** What to do about a module that did not load, in one clause. */
export function loadFailureHint(file: string, err: unknown): string {
  const error = err as NodeJS.ErrnoException & { requireStack?: string[] };
  if (error?.code === 'MODULE_NOT_FOUND' || error?.code === 'ERR_MODULE_NOT_FOUND') {
    const missing = /Cannot find (?:module|package) '([^']+)'/.exec(error.message)?.[1];
    if (missing && !missing.startsWith('.') && !path.isAbsolute(missing)) {
      const name = missing.startsWith('@') ? missing.split('/').slice(0, 2).join('/') : missing.split('/')[0]!;
      return `install ${name} where the agents file can find it (cd ${path.dirname(file)} && npm install ${name})`;
    }
    return 'check the relative import paths in the agents file (they are resolved from its folder)';
  }
  // TransformError: tsx's compiler (esbuild) refusing the source.
  if (error instanceof SyntaxError || error?.name === 'SyntaxError' || error?.name === 'TransformError') {
    return `fix the syntax error it names; ${path.basename(file)} is loaded as ${describeKind(file)}`;
  }
  return `the module threw while loading; run \`npx tsx ${file}\` to see the whole error`;
}

function describeKind(file: string): string {
  const extension = path.extname(file).toLowerCase();
  if (extension === '.ts' || extension === '.mts' || extension === '.cts') return 'TypeScript (through tsx)';
  return 'JavaScript';
}
