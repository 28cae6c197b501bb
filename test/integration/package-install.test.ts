/**
 * The package as a user gets it: `npm pack` (whose prepack builds dist/), installed from the tarball
 * into an empty project outside the repository, then used with plain `node` (no tsx, no NODE_OPTIONS):
 * the README's "Writing your own agent" example in JavaScript, as CommonJS and as an ES module,
 * against the embedded Temporal dev server; the CLI through npx; the type declarations through tsc.
 *
 * Slow (a build and an npm install from the warm cache). Set DURABLE_AGENT_SKIP_PACKAGE_TEST=1 to
 * skip it on a machine where npm can reach neither a registry nor a cache; a skip says why in its name.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { testNeeding } from '../support/prerequisites';
import { freePort, startDevServer } from '../../src/server/dev-server';
import { provisionTemporalCli } from '../../src/server/temporal-cli';

const ROOT = path.resolve(__dirname, '../..');
const MINUTE = 60_000;
// A cold build of the workflow bundle plus a dev server start, on a loaded two-core machine.
jest.setTimeout(10 * MINUTE);

function skipReason(): string | undefined {
  if (process.env.DURABLE_AGENT_SKIP_PACKAGE_TEST) return 'DURABLE_AGENT_SKIP_PACKAGE_TEST is set';
  try {
    execFileSync('npm', ['--version'], { stdio: 'ignore' });
  } catch {
    return 'npm is not on PATH';
  }
  return undefined;
}
const SKIP = skipReason();
const packageTest = testNeeding('package-install.test.ts', { missing: SKIP, install: 'apt-get install npm (or unset DURABLE_AGENT_SKIP_PACKAGE_TEST)' });

/**
 * The README example in plain JavaScript (docs/package.md shows the same code). The only additions:
 * a model object of its own, so it runs without an API key, and the embedded dev server started
 * from the package itself, its address handed over the way the README's "from the environment" says.
 */
const EXAMPLE_BODY = String.raw`
// Stands in for your weather service.
const TEMPERATURES = { Oslo: 4, Rome: 21 };
async function fetchWeather(city, { signal }) {
  signal.throwIfAborted();
  if (!(city in TEMPERATURES)) throw new Error('no weather for ' + city);
  return { city, celsius: TEMPERATURES[city] };
}

const getWeather = defineTool({
  name: 'get_weather',
  description: 'Current temperature for a city, in °C.',
  input: z.object({ city: z.string() }),
  output: z.object({ city: z.string(), celsius: z.number() }),
  effect: 'read',
  idempotent: true,
  timeoutMs: 5_000,
  run: async ({ city }, ctx) => fetchWeather(city, { signal: ctx.signal }),
});

// A model of your own (see "Your own model" below), so this runs without an API key: it asks
// for both cities, then compares what the tool answered. Leave the task's model out to use Claude.
const twoCities = {
  id: 'two-cities',
  async complete({ messages }) {
    const results = messages
      .flatMap((m) => (m.role === 'user' && Array.isArray(m.content) ? m.content : []))
      .filter((block) => block.type === 'tool_result');
    const usage = { inputTokens: 0, outputTokens: 0 };
    if (results.length === 0) {
      const ask = (city) => ({ type: 'tool_use', id: 'toolu_' + city, name: 'get_weather', input: { city } });
      return { content: [ask('Oslo'), ask('Rome')], stopReason: 'tool_use', usage, model: this.id };
    }
    const [a, b] = results.map((r) => JSON.parse(r.content));
    const warmer = a.celsius >= b.celsius ? a : b;
    const text = warmer.city + ' is warmer (' + a.city + ' ' + a.celsius + ' °C, ' + b.city + ' ' + b.celsius + ' °C).';
    return { content: [{ type: 'text', text }], stopReason: 'end_turn', usage, model: this.id };
  },
};

async function main() {
  const server = await startDevServer({ dbFile: null }); // the embedded Temporal dev server, in memory
  process.env.TEMPORAL_ADDRESS = server.address;
  try {
    const agent = defineAgent({ name: 'weather', system: 'You answer weather questions.', tools: [getWeather] });
    const worker = await createAgentWorker({ agents: [agent], models: { 'two-cities': twoCities } });
    const client = await TaskClient.connect();
    const result = await worker.runUntil(async () => {
      const task = await client.start({
        agent: 'weather',
        prompt: 'Is it warmer in Oslo or Rome?',
        model: { provider: 'custom', name: 'two-cities' },
      });
      return client.result(task.workflowId);
    });
    console.log(JSON.stringify(result));
  } finally {
    await server.stop();
  }
}
`;

const EXAMPLE_CJS = `const { z } = require('zod');
const { defineTool, defineAgent, createAgentWorker, TaskClient, startDevServer } = require('durable-agent');
${EXAMPLE_BODY}
main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
`;

const EXAMPLE_ESM = `import { z } from 'zod';
import { defineTool, defineAgent, createAgentWorker, TaskClient, startDevServer } from 'durable-agent';
${EXAMPLE_BODY}
await main();
`;

/** Every entry point, imported as an ES module: named imports of the CommonJS build must be detectable. */
const ENTRY_POINTS_ESM = `import { defineAgent, TaskClient } from 'durable-agent';
import { agentTask } from 'durable-agent/workflows';
import { OrdersService } from 'durable-agent/testing';
import { createDataConverter } from 'durable-agent/codec';
const entries = ['durable-agent', 'durable-agent/workflows', 'durable-agent/testing', 'durable-agent/codec'];
console.log(JSON.stringify({
  resolved: entries.map((e) => import.meta.resolve(e)),
  kinds: [defineAgent, TaskClient, agentTask, OrdersService, createDataConverter].map((f) => typeof f),
}));
`;
const ENTRY_POINTS_CJS = `const entries = ['durable-agent', 'durable-agent/workflows', 'durable-agent/testing', 'durable-agent/codec'];
console.log(JSON.stringify({
  resolved: entries.map((e) => require.resolve(e)),
  kinds: [require('durable-agent').defineAgent, require('durable-agent/workflows').agentTask, require('durable-agent/testing').OrdersService, require('durable-agent/codec').createDataConverter].map((f) => typeof f),
  typeScriptLoaded: Object.keys(require.cache).filter((f) => f.endsWith('.ts')),
}));
`;

/** A TypeScript consumer of each entry point; the expect-error line fails if the declarations degrade to any. */
const CONSUMER_MTS = `import { defineAgent, defineTool, TaskClient, type TaskResult } from 'durable-agent';
import { agentTask } from 'durable-agent/workflows';
import { OrdersService } from 'durable-agent/testing';
import { createDataConverter } from 'durable-agent/codec';
import { z } from 'zod';
const tool = defineTool({ name: 't', description: 'd', input: z.object({ a: z.string() }), output: z.object({ n: z.number() }), effect: 'read', idempotent: true, timeoutMs: 1000, run: async ({ a }) => ({ n: a.length }) });
export const names: string[] = [defineAgent({ name: 'x', system: 's', tools: [tool] }).name, typeof agentTask, typeof OrdersService, typeof createDataConverter, typeof TaskClient.connect];
export const text = (r: TaskResult): string => r.text;
// @ts-expect-error: a tool whose run() returns the wrong output type is refused.
defineTool({ name: 'u', description: 'd', input: z.object({}), output: z.object({ n: z.number() }), effect: 'read', idempotent: true, timeoutMs: 1000, run: async () => ({ n: 'one' }) });
`;
const CONSUMER_CTS = `import { defineAgent } from 'durable-agent';
import codec = require('durable-agent/codec');
export const kinds: string = typeof defineAgent + typeof codec.createDataConverter;
`;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment of a user's shell: no npm lifecycle variables from a surrounding `npm test`, no preloads. */
function plainEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (key.toLowerCase().startsWith('npm_') || key === 'NODE_OPTIONS' || key === 'INIT_CWD') continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}

function run(cmd: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs: number }): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: options.cwd, env: options.env ?? plainEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${cmd} ${args.join(' ')} did not finish in ${options.timeoutMs} ms\n${stderr.slice(-3_000)}`));
    }, options.timeoutMs);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

function explain(what: string, r: Run): string {
  return `${what} exited with ${r.code}\n--- stdout ---\n${r.stdout.slice(-3_000)}\n--- stderr ---\n${r.stderr.slice(-3_000)}`;
}

function lastJsonLine(stdout: string): any {
  const line = stdout
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .pop();
  if (!line) throw new Error(`no JSON line in:\n${stdout.slice(-2_000)}`);
  return JSON.parse(line);
}

let tmp: string;
let project: string;
let home: string;
let temporalCli: string;
let packed: { filename: string; files: { path: string }[] };

// Each child gets the repository's Temporal CLI (so nothing is downloaded or built) and its own state dir.
const userEnv = (extra: NodeJS.ProcessEnv = {}) => plainEnv({ DURABLE_AGENT_TEMPORAL_CLI: temporalCli, DURABLE_AGENT_HOME: home, DURABLE_AGENT_LOG_LEVEL: 'ERROR', ANTHROPIC_API_KEY: '', ...extra });
const node = (args: string[], timeoutMs = 5 * MINUTE) => run(process.execPath, args, { cwd: project, env: userEnv(), timeoutMs });

if (!SKIP) {
  beforeAll(async () => {
    temporalCli = await provisionTemporalCli();
    tmp = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'durable-agent-package-')));
    project = path.join(tmp, 'project');
    home = path.join(tmp, 'state');
    expect(path.relative(ROOT, tmp).startsWith('..')).toBe(true);

    // `npm pack` runs prepack, which builds dist/ from src/.
    const pack = await run('npm', ['pack', '--json', '--pack-destination', tmp], { cwd: ROOT, timeoutMs: 10 * MINUTE });
    if (pack.code !== 0) throw new Error(explain('npm pack', pack));
    packed = JSON.parse(pack.stdout.slice(pack.stdout.indexOf('[')))[0];

    mkdirSync(project);
    writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }));
    const install = await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', path.join(tmp, packed.filename)], {
      cwd: project,
      timeoutMs: 15 * MINUTE,
    });
    if (install.code !== 0) {
      throw new Error(
        `${explain('npm install of the packed tarball', install)}\n` + 'npm needs its registry or a warm cache for the dependencies; on a machine with neither, set DURABLE_AGENT_SKIP_PACKAGE_TEST=1.',
      );
    }
  }, 30 * MINUTE);

  afterAll(() => {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });
}

packageTest('npm pack ships the compiled JavaScript, its declarations, the demo script and the CLI, and no TypeScript source', async () => {
  const files = packed.files.map((f) => f.path);
  for (const expected of [
    'package.json',
    'bin/durable-agent',
    'dist/index.js',
    'dist/index.d.ts',
    'dist/workflows/index.js',
    'dist/workflows/agent-task.js',
    'dist/testing/index.d.ts',
    'dist/codec/index.d.ts',
    'dist/cli/main.js',
    'dist/demo/demo-script.json',
    'schemas/status.schema.json',
    'schemas/list.schema.json',
    'schemas/result.schema.json',
  ]) {
    expect(files).toContain(expected);
  }
  expect(files.filter((f) => f.startsWith('src/') || f.startsWith('test/') || (f.endsWith('.ts') && !f.endsWith('.d.ts')))).toEqual([]);
});

packageTest('require() and import resolve every entry point to dist/ of the installed package, with named ES module imports, and load no TypeScript', async () => {
  writeFileSync(path.join(project, 'entries.cjs'), ENTRY_POINTS_CJS);
  writeFileSync(path.join(project, 'entries.mjs'), ENTRY_POINTS_ESM);
  const installed = path.join(project, 'node_modules/durable-agent/dist');
  const expected = ['index.js', 'workflows/index.js', 'testing/index.js', 'codec/index.js'].map((f) => path.join(installed, f));

  const cjs = await node(['entries.cjs']);
  if (cjs.code !== 0) throw new Error(explain('node entries.cjs', cjs));
  expect(lastJsonLine(cjs.stdout)).toEqual({ resolved: expected, kinds: ['function', 'function', 'function', 'function'], typeScriptLoaded: [] });

  const esm = await node(['entries.mjs']);
  if (esm.code !== 0) throw new Error(explain('node entries.mjs', esm));
  const out = lastJsonLine(esm.stdout);
  expect(out.resolved.map((url: string) => new URL(url).pathname)).toEqual(expected);
  expect(out.kinds).toEqual(['function', 'function', 'function', 'function', 'function']);
});

packageTest('a CommonJS script run with plain node runs the README agent example on the embedded dev server, its workflow bundle built from the installed dist/', async () => {
  writeFileSync(path.join(project, 'weather.cjs'), EXAMPLE_CJS);
  const r = await node(['weather.cjs']);
  if (r.code !== 0) throw new Error(explain('node weather.cjs', r));
  expect(lastJsonLine(r.stdout)).toMatchObject({
    outcome: 'answered',
    text: 'Rome is warmer (Oslo 4 °C, Rome 21 °C).',
    turns: 2,
    toolCalls: 2,
    model: 'two-cities',
  });
  // The worker bundled the compiled workflow code that npm installed, not the repository's sources.
  const bundles = readdirSync(path.join(home, 'bundles')).filter((f) => f.endsWith('.js'));
  expect(bundles).toHaveLength(1);
  const bundle = readFileSync(path.join(home, 'bundles', bundles[0]!), 'utf8');
  expect(bundle).toContain('node_modules/durable-agent/dist/workflows/agent-task.js');
  expect(bundle).not.toContain('src/workflows/agent-task.ts');
});

packageTest('an ES module (.mjs) run with plain node runs the same example through named imports', async () => {
  writeFileSync(path.join(project, 'weather.mjs'), EXAMPLE_ESM);
  const r = await node(['weather.mjs']);
  if (r.code !== 0) throw new Error(explain('node weather.mjs', r));
  expect(lastJsonLine(r.stdout)).toMatchObject({ outcome: 'answered', text: 'Rome is warmer (Oslo 4 °C, Rome 21 °C).', toolCalls: 2 });
});

packageTest('the shipped declarations type-check a TypeScript consumer of every entry point, as an ES module and as CommonJS', async () => {
  writeFileSync(path.join(project, 'consumer.mts'), CONSUMER_MTS);
  writeFileSync(path.join(project, 'consumer.cts'), CONSUMER_CTS);
  writeFileSync(
    path.join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        module: 'nodenext',
        moduleResolution: 'nodenext',
        target: 'es2022',
        strict: true,
        noEmit: true,
        // Temporal's own declarations name `ms` without depending on its types; users skip lib checks too.
        skipLibCheck: true,
        types: ['node'],
        typeRoots: [path.join(ROOT, 'node_modules/@types')],
      },
      files: ['consumer.mts', 'consumer.cts'],
    }),
  );
  // The repository's compiler, since the consumer project installs no TypeScript of its own.
  const r = await node([path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json']);
  if (r.code !== 0) throw new Error(explain('tsc in the consumer project', r));
});

packageTest('the JSON Schemas of the --json output resolve by name from the installed package, with require and with an import attribute', async () => {
  writeFileSync(
    path.join(project, 'schemas.mjs'),
    `import status from 'durable-agent/schemas/status.schema.json' with { type: 'json' };
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
console.log(JSON.stringify({ status: status.title, list: require('durable-agent/schemas/list.schema.json').title, result: require('durable-agent/schemas/result.schema.json').title }));
`,
  );
  const r = await node(['schemas.mjs']);
  if (r.code !== 0) throw new Error(explain('node schemas.mjs', r));
  expect(lastJsonLine(r.stdout)).toEqual({ status: 'TaskView', list: 'TaskList', result: 'ResultOutput' });
});

packageTest('npx durable-agent --help runs the installed CLI with plain node', async () => {
  const r = await run('npx', ['--no-install', 'durable-agent', '--help'], { cwd: project, env: userEnv(), timeoutMs: 2 * MINUTE });
  if (r.code !== 0) throw new Error(explain('npx durable-agent --help', r));
  expect(r.stdout).toMatch(/^durable-agent: long-running LLM agent tasks/);
  expect(r.stdout).toContain('durable-agent demo [--port 7233]');
  expect(realpathSync(path.join(project, 'node_modules/.bin/durable-agent'))).toBe(path.join(project, 'node_modules/durable-agent/bin/durable-agent'));
  expect(existsSync(path.join(project, 'node_modules/durable-agent/src'))).toBe(false);
});

packageTest('npx durable-agent demo runs the demo task end to end from the installed package (dev server, worker, scripted model)', async () => {
  const port = await freePort();
  const r = await run('npx', ['--no-install', 'durable-agent', 'demo', '--port', String(port), '--headless', '--json'], {
    cwd: project,
    env: userEnv(),
    timeoutMs: 5 * MINUTE,
  });
  if (r.code !== 0) throw new Error(explain('npx durable-agent demo', r));
  expect(lastJsonLine(r.stdout).result).toMatchObject({ outcome: 'answered', model: 'scripted:demo-script.json', toolCalls: 5 });
  expect(readFileSync(path.join(home, 'workspace/outbox/C-9921-shipped.md'), 'utf8')).toContain('Total shipped: $492.99 in 3 orders.');
});

/** A TypeScript agents module in the user's project: types, an import of the package by name, and zod. */
const AGENTS_TS = `import { z } from 'zod';
import { defineAgent, defineTool, ToolFailure } from 'durable-agent';

interface Weather { city: string; celsius: number }
const TEMPERATURES: Record<string, number> = { Oslo: 4, Rome: 21 };

const getWeather = defineTool({
  name: 'get_weather',
  description: 'Current temperature for a city, in °C.',
  input: z.object({ city: z.string() }),
  output: z.object({ city: z.string(), celsius: z.number() }),
  effect: 'read',
  idempotent: true,
  run: async ({ city }): Promise<Weather> => {
    const celsius = TEMPERATURES[city];
    if (celsius === undefined) throw new ToolFailure('permanent', 'no_such_city', 'No weather for ' + city + '.', 'Ask for Oslo or Rome.');
    return { city, celsius };
  },
});

export default [defineAgent({ name: 'weather-ts', system: 'You answer weather questions.', tools: [getWeather] })];
`;

const AGENTS_SCRIPT = JSON.stringify({
  description: 'SCRIPTED MODEL: asks for a city the tool does not know, then answers.',
  turns: [{ content: [{ type: 'tool_use', name: 'get_weather', input: { city: 'Atlantis' } }] }, { content: [{ type: 'text', text: 'Atlantis has no weather.' }] }],
});

packageTest('npx durable-agent worker --agents agents.ts loads a TypeScript agents module with plain node and runs its task from the installed package', async () => {
  writeFileSync(path.join(project, 'agents.ts'), AGENTS_TS);
  writeFileSync(path.join(project, 'atlantis.json'), AGENTS_SCRIPT);
  const server = await startDevServer({ dbFile: null });
  const at = ['--address', server.address, '--task-queue', 'package-agents-ts'];
  // The installed command itself (what npx runs), so the SIGTERM below reaches the worker and not a wrapper.
  const bin = path.join(project, 'node_modules/.bin/durable-agent');
  const worker = spawn(process.execPath, [bin, 'worker', '--agents', 'agents.ts', ...at], { cwd: project, env: userEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let workerErr = '';
  worker.stderr.on('data', (d) => (workerErr += d));
  const exited = new Promise((resolve) => worker.once('exit', resolve));
  try {
    const cli = (args: string[]) => run('npx', ['--no-install', 'durable-agent', ...args], { cwd: project, env: userEnv(), timeoutMs: 3 * MINUTE });
    const started = await cli(['start', 'What is the weather in Atlantis?', '--agent', 'weather-ts', '--script', 'atlantis.json', '--json', ...at]);
    if (started.code !== 0) throw new Error(explain('durable-agent start', started));
    const { taskId } = lastJsonLine(started.stdout);
    const result = await cli(['result', taskId, '--json', ...at]);
    if (result.code !== 0) throw new Error(`${explain('durable-agent result', result)}\n--- worker ---\n${workerErr.slice(-3_000)}`);
    expect(JSON.parse(result.stdout)).toMatchObject({ outcome: 'answered', text: 'Atlantis has no weather.', toolCalls: 1 });
    const status = await cli(['status', taskId, '--json', ...at]);
    // The tool's ToolFailure reached the model as itself: the agents module and the CLI share one copy of the package.
    expect(status.stdout).toContain('no_such_city');
    expect(workerErr).toContain('agent "weather-ts"');
  } finally {
    worker.kill('SIGTERM');
    await exited;
    await server.stop();
  }
});
