/**
 * Recordings are self-contained (issue 38, point 3): an exported recording, copied to a fresh
 * folder and evaluated by a second checkout of the CLI (its own path, its own cwd, an empty state
 * folder, no script folders or blob store from the environment) after the task's script and blobs
 * are deleted here, gives the same verdict as on the machine that recorded it. A recording that
 * names a script it does not carry (version 1, from before) still replays while the script is there;
 * when it is not, `replay` and `eval` say it cannot run (exit 2), never that it regressed.
 */
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { answer, callTool, runTask, startHarness, type Harness } from '../support/harness';
import { finished, runCli, type CliRun } from '../support/processes';
import { taskBlobScope } from '../../src/client/approval-arguments';
import { loadRecording, sealRecording, type Recording } from '../../src/replay/recording';
import type { EvalRow } from '../../src/replay/eval';

const ROOT = path.resolve(__dirname, '../..');
let h: Harness;
/** Folders made outside the harness's own, removed at the end. */
const made: string[] = [];
const tempDir = (prefix: string) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(dir);
  return dir;
};
beforeAll(async () => {
  h = await startHarness();
}, 120_000);
afterAll(async () => {
  await h?.close();
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

const at = () => ['--address', h.server.address];

/** Long enough to be claim-checked: the recording must hold it, not a reference to this machine's blob store. */
const REPORT = 'a line of a long report\n'.repeat(400);

/** A task that reads a claim-checked report and searches, exported by the CLI into `dir` as `name.json`. */
async function exportedTask(dir: string, name: string): Promise<{ taskId: string; script: string; file: string; recording: Recording }> {
  writeFileSync(path.join(h.workspaceDir, 'report.txt'), REPORT);
  const script = h.script([callTool('read_file', { path: 'report.txt' }), callTool('search_orders', { customer_id: 'C-1001' }), answer('Read the report; C-1001 has orders.')]);
  const run = await runTask(h, { agent: 'demo', prompt: 'Read the report, then look up C-1001', script });
  expect(run.result?.outcome).toBe('answered');
  const file = path.join(dir, `${name}.json`);
  const cli = await runCli(['export', run.taskId, '--out', file, '--blob-store', `file:${path.join(h.tmpDir, 'blobs')}`, ...at()]);
  expect(cli.code).toBe(0);
  expect(cli.stdout).toContain(`model script ${path.basename(script)} included`);
  return { taskId: run.taskId, script, file, recording: await loadRecording(file) };
}

/**
 * A second checkout of the CLI: this tree's src/ at another path, node_modules shared through a
 * symlink, and no state folder (`.durable-agent` is created empty beside it on first use).
 */
function secondCheckout(): string {
  const dir = tempDir('durable-agent-second-checkout-');
  cpSync(path.join(ROOT, 'src'), path.join(dir, 'src'), { recursive: true });
  for (const file of ['package.json', 'tsconfig.json']) cpSync(path.join(ROOT, file), path.join(dir, file));
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  return dir;
}

/** The checkout's CLI, run from `cwd` with none of this machine's durable-agent settings but the log level. */
function runCliElsewhere(checkout: string, cwd: string, args: string[], timeoutMs = 300_000): Promise<CliRun> {
  const env: NodeJS.ProcessEnv = { ...process.env, DURABLE_AGENT_LOG_LEVEL: 'ERROR' };
  for (const key of ['DURABLE_AGENT_HOME', 'DURABLE_AGENT_SCRIPT_DIRS', 'DURABLE_AGENT_BLOB_STORE']) delete env[key];
  const child = spawn(process.execPath, ['--require', require.resolve('tsx/cjs'), path.join(checkout, 'src/cli/main.ts'), ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  return finished(child, args, timeoutMs);
}

/** What a verdict is made of (the replay ids differ from run to run). */
const verdicts = (run: CliRun) =>
  (JSON.parse(run.stdout) as { rows: EvalRow[] }).rows.map(({ name, recordedOutcome, outcome, turns, toolCalls, costUsd, verdict, failures }) => ({
    name,
    recordedOutcome,
    outcome,
    turns,
    toolCalls,
    costUsd,
    verdict,
    failures,
  }));

test('an exported recording evaluated by a second checkout with an empty state folder, after the script and blobs are gone here, gives the same verdict', async () => {
  const dir = path.join(h.tmpDir, 'recordings');
  mkdirSync(dir);
  const { taskId, script, file, recording } = await exportedTask(dir, 'read');
  // The script is carried as content and named by its file only; the blob's content is in the file.
  expect(recording.version).toBe(2);
  expect(recording.modelChoice).toEqual({ provider: 'scripted', script: path.basename(script) });
  expect(recording.modelScript).toEqual({ name: path.basename(script), script: JSON.parse(readFileSync(script, 'utf8')) });
  expect(readFileSync(file, 'utf8')).not.toContain(script);
  expect(recording.claimChecked.length).toBeGreaterThan(0);
  // The same recording with stricter expectations: a regression must stay a regression elsewhere.
  writeFileSync(path.join(dir, 'strict.json'), readFileSync(file));
  writeFileSync(path.join(dir, 'strict.expect.json'), JSON.stringify({ outcome: 'answered', forbiddenTools: ['search_orders'] }));

  const here = await runCli(['eval', dir, '--json', ...at()], {}, 300_000);
  expect(here.code).toBe(1);
  expect(verdicts(here).map((r) => [r.name, r.verdict])).toEqual([
    ['read', 'passed'],
    ['strict', 'regressed'],
  ]);

  // Nothing the task left on this machine is there any more: its script and its blobs are gone.
  rmSync(script);
  await h.blobStore.purgeScope(await taskBlobScope(h.client.client, taskId));
  const checkout = secondCheckout();
  const copied = tempDir('durable-agent-copied-recordings-');
  cpSync(dir, copied, { recursive: true });
  const cwd = tempDir('durable-agent-elsewhere-');
  expect(existsSync(path.join(checkout, '.durable-agent'))).toBe(false);
  expect(existsSync(path.join(cwd, '.durable-agent'))).toBe(false);

  const elsewhere = await runCliElsewhere(checkout, cwd, ['eval', copied, '--json', ...at()]);
  expect(elsewhere.stderr).toBe('');
  expect(elsewhere.code).toBe(here.code);
  expect(verdicts(elsewhere)).toEqual(verdicts(here));
  // It ran on a state folder of its own, which held nothing before: the workflow bundle it built from its own src/ is there now.
  expect(readdirSync(path.join(cwd, '.durable-agent', 'bundles')).some((f) => f.startsWith('workflows-'))).toBe(true);
  // The table a person reads says the same too.
  const table = await runCliElsewhere(checkout, cwd, ['eval', copied, ...at()]);
  expect(table.code).toBe(1);
  expect(table.stdout).toMatch(/^read .* pass$/m);
  expect(table.stdout).toMatch(/^strict .* FAIL: called search_orders$/m);
  expect(table.stdout.trim().split('\n').at(-1)).toBe('1 of 2 regressed');
}, 900_000);

test('a version 1 recording (a script path, no script) replays while its script is there; when it is not, eval and replay say cannot run (exit 2) and what is missing, never a regression', async () => {
  const dir = path.join(h.tmpDir, 'exported-v2');
  mkdirSync(dir);
  const { recording } = await exportedTask(dir, 'v2');
  const { contentHash: _hash, modelScript, ...body } = recording;
  // As a version 1 export wrote it: the worker's absolute script path, no script.
  const asV1 = (scriptPath: string) => sealRecording({ ...body, version: 1, modelChoice: { provider: 'scripted', script: scriptPath } });
  const present = h.script(modelScript!.script.turns);
  const gone = path.join(h.tmpDir, 'gone', path.basename(present));
  const old = path.join(h.tmpDir, 'old-recordings');
  mkdirSync(old);
  writeFileSync(path.join(old, 'present.json'), JSON.stringify(asV1(present), null, 2));
  writeFileSync(path.join(old, 'missing.json'), JSON.stringify(asV1(gone), null, 2));

  const evaluated = await runCli(['eval', old, ...at()], {}, 300_000);
  expect(evaluated.code).toBe(2);
  expect(evaluated.stdout).toMatch(/^present .* pass$/m);
  expect(evaluated.stdout).toContain(
    `CANNOT RUN: the recording names model script ${gone} without carrying it (exported before recordings carried their script), and here: Cannot read model script ${gone} (ENOENT)`,
  );
  expect(evaluated.stdout.trim().split('\n').at(-1)).toBe('1 of 2 could not run (no verdict)');
  expect(evaluated.stdout).not.toContain('regressed');

  const replayed = await runCli(['replay', path.join(old, 'missing.json'), ...at()], {}, 120_000);
  expect(replayed.code).toBe(2);
  expect(replayed.stderr.trim().split('\n')).toHaveLength(1);
  expect(replayed.stderr).toMatch(new RegExp(`^durable-agent replay: cannot run: the recording names model script ${gone.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} without carrying it`));
  expect(replayed.stdout).toBe('');
}, 900_000);
