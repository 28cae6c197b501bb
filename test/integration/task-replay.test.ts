/**
 * Replaying a recorded task (issue 25, items 3-4): export from a real task's history and blob
 * store, a replay against another scripted model with every tool answered from the recording and
 * nothing executed, not_recorded for a call the recording does not hold, an edited file refused.
 * (test/integration/replay.test.ts is Temporal's history replay of committed histories: another thing.)
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { useHarness, answer, callTool, runTask, statusWhen } from '../support/harness';
import { useFakeApi } from '../support/fake-api';
import { runCli } from '../support/processes';
import { stateDir } from '../../src/server/state-dir';
import { fakeTurns, evalRecordings } from '../../src/testing';
import { BlobMissingError } from '../../src/blobs/blob-store';
import { taskBlobScope } from '../../src/client/approval-arguments';
import { ReplayModelError } from '../../src/replay/run-replay';
import { createDemoAgent } from '../../src/demo/demo-agent';
import { recordTask } from '../../src/replay/record-task';
import { loadRecording, RecordingError, type Recording } from '../../src/replay/recording';
import { replayRecording } from '../../src/replay/run-replay';

const h = useHarness();
const api = useFakeApi(); // strict: the default

const at = () => ['--address', h.server.address];

const REFUND = { order_id: 'O-0013', amount_cents: 500, reason: 'late delivery' };

/** A task that reads, then refunds after a person approves, then answers; exported to a file. */
async function recordedRefund(): Promise<{ taskId: string; file: string; recording: Recording }> {
  const taskId = h.taskId('orig');
  const script = h.script([callTool('search_orders', { customer_id: 'C-1001' }), callTool('refund_order', REFUND), answer('Refunded 5.00 on O-0013.')]);
  // Refunds wait for a person here (the demo's own policy lets writes run).
  const worker = await h.worker([createDemoAgent({ workspaceDir: h.workspaceDir, ordersUrl: h.orders.url, policy: { write: 'confirm' } })]);
  await worker.runUntil(async () => {
    await h.client.start({ agent: 'demo', prompt: 'Refund the late order of C-1001', model: { provider: 'scripted', script } }, { taskId });
    const waiting = await statusWhen(h, taskId, (s) => s.pendingApprovals.length > 0);
    await h.client.approve(taskId, { approvalId: waiting.pendingApprovals[0]!.id, by: 'ana' });
    await h.client.result(taskId);
  });
  const recording = await recordTask(h.client, taskId, { blobStore: h.blobStore });
  const file = path.join(h.tmpDir, `${taskId}.json`);
  writeFileSync(file, JSON.stringify(recording, null, 2));
  return { taskId, file, recording };
}

test('export records the turns, the calls with their exact arguments and results, the approval and the outcome, sealed by a content hash', async () => {
  const { recording, file } = await recordedRefund();
  expect(recording.turns.map((t) => t.toolCalls.map((c) => c.tool))).toEqual([['search_orders'], ['refund_order'], []]);
  const refund = recording.turns[1]!.toolCalls[0]!;
  expect(refund.input).toEqual(REFUND);
  expect(refund.approval).toEqual({ decision: 'approved', by: 'ana' });
  expect(JSON.parse(refund.result!.content)).toMatchObject({ result: { order_id: 'O-0013', amount_cents: 500 } });
  expect(recording.outcome).toMatchObject({ status: 'completed', outcome: 'answered', text: 'Refunded 5.00 on O-0013.' });
  expect(recording.contentHash).toMatch(/^sha256:[0-9a-f]{64}$/);
  await expect(loadRecording(file)).resolves.toMatchObject({ taskId: recording.taskId });
}, 120_000);

test('an export file edited after export is refused on load with one line naming the hash', async () => {
  const { file } = await recordedRefund();
  const edited = readFileSync(file, 'utf8').replace('"amount_cents": 500', '"amount_cents": 50000');
  writeFileSync(file, edited);
  await expect(loadRecording(file)).rejects.toThrow(RecordingError);
  await expect(loadRecording(file)).rejects.toThrow(/was changed after export: its content does not match its contentHash$/);
}, 120_000);

test('a replay against another script answers every call from the recording: no request reaches the orders service, an unrecorded call gets not_recorded, and the diff shows the changed turn', async () => {
  const { file } = await recordedRefund();
  const recording = await loadRecording(file);
  const effects = h.orders.effects.length;
  const requests = h.orders.requests.length;
  const writes = h.orders.writes.length;
  const other = h.script([
    callTool('search_orders', { customer_id: 'C-1001' }),
    callTool('cancel_order', { order_id: 'O-0013', reason: 'late' }),
    callTool('refund_order', REFUND),
    answer('Cancelled and refunded.'),
  ]);
  const { replayed, diff, replayId } = await replayRecording(recording, {
    client: h.client,
    connection: h.connection,
    model: { provider: 'scripted', script: other },
    workflowBundle: h.bundle,
    modelEnv: { scriptRoots: [h.tmpDir] },
  });
  // Nothing ran: the service saw no read, no write and changed nothing.
  expect(h.orders.effects.length).toBe(effects);
  expect(h.orders.requests.length).toBe(requests);
  expect(h.orders.writes.length).toBe(writes);

  const calls = replayed.turns.flatMap((t) => t.toolCalls);
  expect(calls.map((c) => c.tool)).toEqual(['search_orders', 'cancel_order', 'refund_order']);
  const search = recording.turns[0]!.toolCalls[0]!;
  expect(JSON.parse(calls[0]!.result!.content)).toEqual(JSON.parse(search.result!.content));
  expect(JSON.parse(calls[1]!.result!.content).error).toMatchObject({ error_class: 'model', code: 'not_recorded' });
  expect(calls[1]!.approval).toEqual({ decision: 'approved' });
  expect(calls[2]!.approval).toEqual({ decision: 'approved', by: 'replay' });
  const recordedRefundResult = JSON.parse(recording.turns[1]!.toolCalls[0]!.result!.content).result;
  expect(JSON.parse(calls[2]!.result!.content).result).toEqual(recordedRefundResult);
  expect(replayed.outcome).toMatchObject({ status: 'completed', outcome: 'answered', text: 'Cancelled and refunded.' });

  expect(diff.replayed.taskId).toBe(replayId);
  expect(diff.turns.map((t) => t.same)).toEqual([true, false, false, false]);
  expect(diff.differences).toEqual(expect.arrayContaining(['turn 2: calls differ', 'turns: 3 -> 4', 'toolCalls: 2 -> 3', 'approvalsAsked: 1 -> 2']));
}, 120_000);

test('a replay against Claude through the real SDK and the strict fake: the recorded tools are declared as the API accepts them, the read is answered from the recording, tokens and cost are counted', async () => {
  const { recording } = await recordedRefund();
  const requests = h.orders.requests.length;
  api.enqueue(fakeTurns.toolUse('toolu_r1', 'search_orders', { customer_id: 'C-1001' }), fakeTurns.text('The order was already refunded; nothing to do.'));
  const { replayed, diff } = await replayRecording(recording, {
    client: h.client,
    connection: h.connection,
    model: { provider: 'anthropic', model: 'claude-haiku-5-5' },
    workflowBundle: h.bundle,
    modelEnv: { anthropicApiKey: 'sk-ant-test', anthropicBaseURL: api.url },
  });
  expect(api.rejected).toEqual([]);
  expect(api.requests.at(-1)!.body.tools!.map((t: { name: string }) => t.name)).toEqual(expect.arrayContaining(['search_orders', 'refund_order', 'cancel_order']));
  expect(h.orders.requests.length).toBe(requests);
  expect(JSON.parse(replayed.turns[0]!.toolCalls[0]!.result!.content)).toEqual(JSON.parse(recording.turns[0]!.toolCalls[0]!.result!.content));
  expect(replayed.outcome).toMatchObject({ status: 'completed', outcome: 'answered' });
  expect(diff.replayed).toMatchObject({ model: 'claude-haiku-5-5', turns: 2, toolCalls: 1, approvalsAsked: 0 });
  expect(diff.replayed.inputTokens).toBeGreaterThan(0);
  expect(diff.differences).toContain('toolCalls: 2 -> 1');
}, 120_000);

test('a model the replay cannot reach (an id the API does not know) ends the replay with one ReplayModelError', async () => {
  const { recording } = await recordedRefund();
  await expect(
    replayRecording(recording, {
      client: h.client,
      connection: h.connection,
      model: { provider: 'anthropic', model: 'claude-unknown-0' },
      workflowBundle: h.bundle,
      modelEnv: { anthropicApiKey: 'sk-ant-test', anthropicBaseURL: api.url },
    }),
  ).rejects.toThrow(ReplayModelError);
}, 120_000);

test('claim-checked content is included in the export; once purged, export refuses the task with one line and writes no file', async () => {
  const big = `${'a line of a long report\n'.repeat(400)}`;
  writeFileSync(path.join(h.workspaceDir, 'report.txt'), big);
  const run = await runTask(h, { agent: 'demo', prompt: 'read the report', script: h.script([callTool('read_file', { path: 'report.txt' }), answer('read it')]) });
  const recording = await recordTask(h.client, run.taskId, { blobStore: h.blobStore });
  expect(recording.claimChecked.length).toBeGreaterThan(0);
  expect(recording.turns[0]!.toolCalls[0]!.result!.content).toContain('a line of a long report');
  await h.blobStore.purgeScope(await taskBlobScope(h.client.client, run.taskId));
  await expect(recordTask(h.client, run.taskId, { blobStore: h.blobStore })).rejects.toThrow(BlobMissingError);
  const out = path.join(h.tmpDir, 'purged.json');
  const cli = await runCli(['export', run.taskId, '--out', out, '--blob-store', `file:${path.join(h.tmpDir, 'blobs')}`, ...at()]);
  expect(cli.code).toBe(1);
  expect(cli.stderr.trim().split('\n')).toHaveLength(1);
  expect(cli.stderr).toContain('is gone (purged, or another store); nothing exported');
  expect(existsSync(out)).toBe(false);
}, 120_000);

test('CLI: export writes a loadable file, an unknown task exits 3, an edited file exits 2, eval exits 0 when expectations hold and 1 on a regression', async () => {
  const { taskId } = await recordedRefund();
  const dir = path.join(h.tmpDir, `eval-${taskId}`);
  mkdirSync(dir);
  const file = path.join(dir, 'refund.json');
  const exported = await runCli(['export', taskId, '--out', file, '--blob-store', `file:${path.join(h.tmpDir, 'blobs')}`, ...at()]);
  expect(exported).toMatchObject({ code: 0 });
  expect(exported.stdout).toContain(`exported ${taskId}: 3 turns, 2 tool calls`);
  await expect(loadRecording(file)).resolves.toMatchObject({ taskId });
  writeFileSync(path.join(dir, 'refund.expect.json'), JSON.stringify({ outcome: 'answered', requiredTools: [{ tool: 'refund_order', input: REFUND }], forbiddenTools: ['cancel_order'], maxTurns: 3 }));

  const unknown = await runCli(['export', 'no-such-task', '--out', path.join(h.tmpDir, 'none.json'), ...at()]);
  expect(unknown.code).toBe(3);
  expect(unknown.stderr.trim().split('\n')).toHaveLength(1);

  const edited = path.join(h.tmpDir, `edited-${taskId}.json`);
  writeFileSync(edited, readFileSync(file, 'utf8').replace('"late delivery"', '"goodwill"'));
  const refused = await runCli(['replay', edited, ...at()]);
  expect(refused.code).toBe(2);
  expect(refused.stderr.trim()).toBe(`durable-agent replay: ${edited} was changed after export: its content does not match its contentHash`);

  // The recorded script again: the same calls, so the expectations hold.
  const passing = await runCli(['eval', dir, ...at()], { DURABLE_AGENT_LOG_LEVEL: '' }, 180_000);
  expect(passing.stdout).toContain('all 1 passed');
  expect(passing.code).toBe(0);
  // Quiet by default: the SDK's worker logs went to .durable-agent/logs/, not to stderr.
  expect(passing.stderr).toBe('');
  const other = h.script([callTool('cancel_order', { order_id: 'O-0013', reason: 'late' }), answer('Cancelled instead.')]);
  const failing = await runCli(['eval', dir, '--script', other, ...at()], {}, 180_000);
  expect(failing.stdout).toMatch(/FAIL: never called refund_order .*; called cancel_order/);
  expect(failing.code).toBe(1);

  // The same check from a test, through durable-agent/testing.
  const report = await evalRecordings(dir, {
    client: h.client,
    connection: h.connection,
    workflowBundle: h.bundle,
    model: { provider: 'scripted', script: other },
    modelEnv: { scriptRoots: [h.tmpDir] },
  });
  expect(report.regressions.map((r) => r.name)).toEqual(['refund']);
  expect(report.rows[0]!.failures).toEqual([`never called refund_order ${JSON.stringify(REFUND)}`, 'called cancel_order']);
}, 400_000);

test('a task that continued as new is recorded across every run of its chain, and replays all its turns', async () => {
  const searches = [{ customer_id: 'C-1001' }, { customer_id: 'C-1002' }, { customer_id: 'C-9921' }, { customer_id: 'C-9921', status: 'shipped' }, { customer_id: 'C-9921', page: 2 }];
  const turns = searches.map((input) => callTool('search_orders', input));
  const script = h.script([...turns, answer('five searches done')]);
  const taskId = h.taskId('chain');
  const worker = await h.worker();
  await worker.runUntil(async () => {
    await h.client.start({ agent: 'demo', prompt: 'search', model: { provider: 'scripted', script }, continueAsNewEveryTurns: 2 }, { taskId });
    await h.client.result(taskId);
  });
  const recording = await recordTask(h.client, taskId, { blobStore: h.blobStore });
  expect(recording.runIds.length).toBeGreaterThan(1);
  expect(recording.turns).toHaveLength(6);
  expect(recording.turns.flatMap((t) => t.toolCalls).every((c) => c.result !== undefined)).toBe(true);
  expect(recording.outcome).toMatchObject({ status: 'completed', outcome: 'answered' });
  const requests = h.orders.requests.length;
  const { diff } = await replayRecording(recording, { client: h.client, connection: h.connection, workflowBundle: h.bundle, modelEnv: { scriptRoots: [h.tmpDir] } });
  expect(h.orders.requests.length).toBe(requests);
  expect(diff.differences).toEqual([]);
  expect(diff.replayed.turns).toBe(6);
}, 180_000);

test('CLI: replay of a task id prints both trajectories side by side, and --json the same diff as data', async () => {
  const { taskId } = await recordedRefund();
  const other = h.script([callTool('search_orders', { customer_id: 'C-1001' }), answer('Nothing to refund.')]);
  const blobs = ['--blob-store', `file:${path.join(h.tmpDir, 'blobs')}`];
  // Quiet by default: the SDK's worker logs go to a file of this run in .durable-agent/logs/, none to stderr.
  const logs = path.join(stateDir(), 'logs');
  const before = new Set(existsSync(logs) ? readdirSync(logs) : []);
  const quiet = { DURABLE_AGENT_LOG_LEVEL: '' };
  const text = await runCli(['replay', taskId, '--script', other, ...blobs, ...at()], quiet, 180_000);
  expect(text.code).toBe(0);
  expect(text.stderr).toBe('');
  const written = readdirSync(logs).filter((f) => !before.has(f) && f.startsWith('replay-'));
  expect(written.map((f) => readFileSync(path.join(logs, f), 'utf8')).join('')).toMatch(/ \[INFO\] Worker state changed/);
  expect(text.stdout).toMatch(/turn 1 +search_orders \{"customer_id":"C-1001"\} +\| search_orders \{"customer_id":"C-1001"\}/);
  expect(text.stdout).toMatch(/\* turn 2 +refund_order .*\[approved\] +\| \(answer, no tools\)/);
  expect(text.stdout).toMatch(/^ {2}outcome +answered +\| answered$/m);
  expect(text.stdout).toMatch(/^\* turns +3 +\| 2$/m);
  // --verbose: the same lines on stderr too; stdout stays the JSON.
  const json = await runCli(['replay', taskId, '--script', other, '--json', '--verbose', ...blobs, ...at()], quiet, 180_000);
  expect(json.code).toBe(0);
  expect(json.stderr).toMatch(/ \[INFO\] Worker state changed/);
  const { replayId, diff } = JSON.parse(json.stdout) as { replayId: string; diff: { replayed: { taskId: string; turns: number }; differences: string[] } };
  expect(diff.replayed).toMatchObject({ taskId: replayId, turns: 2 });
  expect(diff.differences).toEqual(['turn 2: calls differ', 'turn 3: calls differ', 'turns: 3 -> 2', 'toolCalls: 2 -> 1', 'approvalsAsked: 1 -> 0']);
}, 400_000);

test('a model endpoint that does not answer ends the replay after a few attempts with one ReplayModelError, and the replay task is closed', async () => {
  const { recording } = await recordedRefund();
  const replayId = h.taskId('unreachable');
  const attempt = replayRecording(recording, {
    client: h.client,
    connection: h.connection,
    replayId,
    model: { provider: 'anthropic', model: 'claude-haiku-5-5' },
    workflowBundle: h.bundle,
    // A port nothing listens on.
    modelEnv: { anthropicApiKey: 'sk-ant-test', anthropicBaseURL: 'http://127.0.0.1:9' },
  });
  await expect(attempt).rejects.toThrow(/the replay's model cannot be reached/);
  expect((await h.client.describe(replayId)).executionStatus).toBe('TERMINATED');
}, 180_000);

test('a replay against the current agent takes its prompt, tool declarations and policy (refunds no longer wait for a person), still answering from the recording', async () => {
  const { recording } = await recordedRefund();
  const current = createDemoAgent({ workspaceDir: h.workspaceDir, ordersUrl: h.orders.url });
  const requests = h.orders.requests.length;
  const writes = h.orders.writes.length;
  const { replayed, diff } = await replayRecording(recording, {
    client: h.client,
    connection: h.connection,
    current,
    model: recording.modelChoice!,
    workflowBundle: h.bundle,
    modelEnv: { scriptRoots: [h.tmpDir] },
  });
  expect(h.orders.requests.length).toBe(requests);
  expect(h.orders.writes.length).toBe(writes);
  expect(replayed.manifest.system).toBe(current.system);
  expect(replayed.manifest.policy).toEqual(current.policy);
  expect(replayed.turns.flatMap((t) => t.toolCalls).map((c) => c.approval)).toEqual([undefined, undefined]);
  expect(JSON.parse(replayed.turns[1]!.toolCalls[0]!.result!.content)).toEqual(JSON.parse(recording.turns[1]!.toolCalls[0]!.result!.content).result);
  expect(diff.differences).toEqual(['approvalsAsked: 1 -> 0']);
}, 180_000);
