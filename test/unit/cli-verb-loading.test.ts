/**
 * The CLI loads a verb's module only when that verb runs (src/cli/main.ts): a client command must not
 * pay for the worker's modules. Checked in a fresh Node process, whose module cache says what was loaded.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

interface Loaded {
  codes: number[];
  worker: boolean;
  anthropic: boolean;
  mcp: boolean;
}

/**
 * One process (a start of tsx costs seconds): main() with each group of argvs in turn (bad arguments,
 * so nothing connects), and after each group the exit codes and which packages are loaded by then.
 */
function loadedBy(groups: string[][][]): Loaded[] {
  const script = `
    const { main } = require(${JSON.stringify(path.join(ROOT, 'src/cli/main.ts'))});
    const loaded = (name) => Object.keys(require.cache).some((file) => file.includes('/node_modules/' + name + '/'));
    (async () => {
      const report = [];
      for (const group of ${JSON.stringify(groups)}) {
        const codes = [];
        for (const argv of group) codes.push(await main(argv));
        report.push({ codes, worker: loaded('@temporalio/worker'), anthropic: loaded('@anthropic-ai/sdk'), mcp: loaded('@modelcontextprotocol/sdk') });
      }
      // As bin/durable-agent does: the worker verbs install the SDK's runtime, whose log forwarding keeps a process alive.
      process.stdout.write(JSON.stringify(report), () => process.exit(0));
    })();`;
  return JSON.parse(execFileSync(process.execPath, ['--require', 'tsx/cjs', '-e', script], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 50_000 }));
}

let clientVerbs: Loaded;
let workerVerb: Loaded;
beforeAll(() => {
  [clientVerbs, workerVerb] = loadedBy([[['status'], ['list', '--status', 'sleeping'], ['approve'], ['deny']], [['worker', '--agents', 'no/such/agents.ts']]]) as [Loaded, Loaded];
}, 60_000);

test('the task and people verbs load neither the worker, the Anthropic SDK nor the MCP SDK', () => {
  expect(clientVerbs).toEqual({ codes: [2, 2, 2, 2], worker: false, anthropic: false, mcp: false });
});

test('`worker` does load the worker, in the same process (the check above can see it)', () => {
  expect(workerVerb).toMatchObject({ codes: [2], worker: true });
});
