/**
 * Replaying a recorded task (issue 25, items 3-4): export from a real task's history and blob
 * store, a replay against another scripted model with every tool answered from the recording and
 * nothing executed, not_recorded for a call the recording does not hold, an edited file refused.
 * (test/integration/replay.test.ts is Temporal's history replay of committed histories: another thing.)
 */
import { writeFileSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { answer, callTool, startHarness, statusWhen, type Harness } from '../support/harness';
import { createDemoAgent } from '../../src/demo/demo-agent';
import { recordTask } from '../../src/replay/record-task';
import { loadRecording, RecordingError, type Recording } from '../../src/replay/recording';
import { replayRecording } from '../../src/replay/run-replay';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
}, 120_000);
afterAll(() => h?.close());

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
  expect(refund.approval).toEqual({ decision: 'approved' });
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
  const recordedRefundResult = JSON.parse(recording.turns[1]!.toolCalls[0]!.result!.content).result;
  expect(JSON.parse(calls[2]!.result!.content).result).toEqual(recordedRefundResult);
  expect(replayed.outcome).toMatchObject({ status: 'completed', outcome: 'answered', text: 'Cancelled and refunded.' });

  expect(diff.replayed.taskId).toBe(replayId);
  expect(diff.turns.map((t) => t.same)).toEqual([true, false, false, false]);
  expect(diff.differences).toEqual(expect.arrayContaining(['turn 2: calls differ', 'turns: 3 -> 4', 'toolCalls: 2 -> 3', 'approvalsAsked: 1 -> 2']));
}, 120_000);
