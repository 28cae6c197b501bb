/**
 * Issue 27 item 2: `durable-agent worker --agents FILE` loads an agents module as a user writes it, in
 * a clone with no build step (no dist/ is read): TypeScript or JavaScript, CommonJS or ES module,
 * importing from 'durable-agent' by name, from a folder outside the repository that has no
 * node_modules of its own. A worker process per kind runs a task on a real dev server; the tool
 * throws durable-agent's own ToolFailure, whose code reaches the model only when the agents module
 * and the worker share one copy of the package. A module that does not load gets one line saying
 * what to do.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { useHarness, answer, callTool, parsedResults, spawnWorker } from '../support/harness';
import { runCli } from '../support/processes';
import { TaskClient } from '../../src/client/task-client';

jest.setTimeout(180_000);

const h = useHarness();
let dir: string;
beforeAll(async () => {
  dir = path.join(h.tmpDir, 'my-agents');
  mkdirSync(path.join(dir, 'esm-project'), { recursive: true });
  writeFileSync(path.join(dir, 'esm-project/package.json'), JSON.stringify({ type: 'module' }));
});

/** One agent with one tool that refuses with durable-agent's ToolFailure; `ts` adds type annotations. */
function agentsSource(name: string, style: 'esm' | 'cjs', ts: boolean): string {
  const imports =
    style === 'esm'
      ? "import { defineAgent, defineTool, jsonSchemaValidator, ToolFailure } from 'durable-agent';"
      : "const { defineAgent, defineTool, jsonSchemaValidator, ToolFailure } = require('durable-agent');";
  const input = ts ? '(input: { city: string })' : '(input)';
  const body = `
const lookup = defineTool({
  name: 'lookup_city',
  description: 'Looks a city up.',
  input: jsonSchemaValidator({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }),
  output: jsonSchemaValidator({ type: 'object' }),
  effect: 'read',
  idempotent: true,
  run: async ${input} => {
    throw new ToolFailure('permanent', 'no_such_city', 'No city named ' + input.city + '.', 'Ask for another city.');
  },
});
const agents = [defineAgent({ name: ${JSON.stringify(name)}, system: 'You look cities up.', tools: [lookup] })];
`;
  const exported = style === 'esm' ? 'export default agents;' : 'module.exports = agents;';
  return `${imports}\n${body}\n${exported}\n`;
}

const kinds: { kind: string; file: string; style: 'esm' | 'cjs'; ts: boolean }[] = [
  { kind: 'TypeScript, CommonJS project (.ts)', file: 'agents-cjs-project.ts', style: 'esm', ts: true },
  { kind: 'TypeScript, ES module project (.ts under "type": "module")', file: 'esm-project/agents-esm-project.ts', style: 'esm', ts: true },
  { kind: 'TypeScript ES module (.mts)', file: 'agents-mts.mts', style: 'esm', ts: true },
  { kind: 'JavaScript ES module (.mjs)', file: 'agents-mjs.mjs', style: 'esm', ts: false },
  { kind: 'JavaScript CommonJS (.cjs)', file: 'agents-cjs.cjs', style: 'cjs', ts: false },
];

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

test.each(kinds)("worker --agents loads a $kind that imports 'durable-agent' by name, and its task runs with the worker's own ToolFailure", async ({ file, style, ts }) => {
  // Distinct base names: tsx resolves x.mjs to a sibling x.mts when both exist, as TypeScript does.
  const name = path.basename(file).replace('.', '-');
  const modulePath = path.join(dir, file);
  writeFileSync(modulePath, agentsSource(name, style, ts));
  // A task queue per worker: a worker that just stopped must not be handed this task.
  const taskQueue = `${h.taskQueue}-${name}`;
  const client = new TaskClient(h.client.client, taskQueue);
  const worker = spawnWorker(h, ['--agents', modulePath, '--task-queue', taskQueue]);
  let stderr = '';
  worker.stderr!.on('data', (d) => (stderr += d));
  try {
    const taskId = h.taskId('agents-module');
    await client.start(
      { agent: name, prompt: 'Look Atlantis up.', model: { provider: 'scripted', script: h.script([callTool('lookup_city', { city: 'Atlantis' }), answer('No such city.')]) } },
      { taskId },
    );
    const result = await Promise.race([client.result(taskId), new Promise<never>((_, reject) => worker.once('exit', (code) => reject(new Error(`the worker exited with ${code}:\n${stderr}`))))]);
    expect(result).toMatchObject({ outcome: 'answered', text: 'No such city.' });
    expect(parsedResults(await client.transcript(taskId))[0]?.error).toMatchObject({
      error_class: 'permanent',
      code: 'no_such_city',
      detail: 'No city named Atlantis.',
    });
    expect(stderr).toContain(`agent "${name}"`);
  } finally {
    await stop(worker);
  }
});

/** The CLI's one line on stderr for an agents module that cannot be used; loading happens before connecting. */
async function loadError(file: string, source: string): Promise<string> {
  const modulePath = path.join(dir, file);
  writeFileSync(modulePath, source);
  const run = await runCli(['worker', '--agents', modulePath, '--address', '127.0.0.1:1']);
  expect(run.code).toBe(2);
  const lines = run.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

test('an agents module importing a package that is not installed gets one line naming the package and the npm install that fixes it', async () => {
  const line = await loadError('needs-package.ts', "import { thing } from 'left-pad-that-is-not-installed';\nexport default [thing];\n");
  expect(line).toContain(`--agents: could not load ${path.join(dir, 'needs-package.ts')}: Cannot find module 'left-pad-that-is-not-installed'`);
  expect(line).toContain(`cd ${dir} && npm install left-pad-that-is-not-installed`);
});

test('an agents module with a syntax error gets one line saying so and how it was loaded', async () => {
  const line = await loadError('broken.mts', 'export default [;\n');
  expect(line).toContain(`--agents: could not load ${path.join(dir, 'broken.mts')}`);
  expect(line).toContain('Unexpected ";"');
  expect(line).toContain('fix the syntax error it names; broken.mts is loaded as TypeScript (through tsx)');
});

test('an agents module that throws while loading gets one line with its message and the command that shows the whole error', async () => {
  const line = await loadError('throws.cjs', "throw new Error('AGENTS_API_URL is not set');\n");
  expect(line).toContain('AGENTS_API_URL is not set');
  expect(line).toContain(`run \`npx tsx ${path.join(dir, 'throws.cjs')}\` to see the whole error`);
});

test('an agents file that is not a module (.json) is refused with the extensions that are', async () => {
  const line = await loadError('agents.json', '[]');
  expect(line).toContain('is not a module; an agents module is a .ts, .mts, .cts, .js, .mjs, .cjs file');
});
