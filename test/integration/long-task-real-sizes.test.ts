/**
 * Long tasks at the sizes real ones reach: 40 KB per tool result, a thousand turns. The conversation
 * travels by reference (claim check), state stays bounded, and no run is ever terminated for size.
 */
import { useHarness, answer, callTool, statusWhen } from '../support/harness';
import { createLongAgent } from '../support/long-agents';
import { bytesPerTurn, largestPayload, runsOf } from '../support/history-sizes';

const h = useHarness();

const CEILING = 256 * 1024;

test('a 1,000-turn task with 40 KB tool results completes; no payload passes 256 KB and history bytes per turn stay flat', async () => {
  const turns = Array.from({ length: 1_000 }, (_, i) => callTool('big_read', { offset: i }));
  const script = h.script([...turns, answer('read all 1000 pages')]);
  const taskId = h.taskId('long-real');
  const worker = await h.worker([createLongAgent(40_000)]);
  const { result, status } = await worker.runUntil(async () => {
    await h.client.start({ agent: 'long', prompt: 'read every page', model: { provider: 'scripted', script }, budgets: { turns: 1_100, toolCalls: 1_100 } }, { taskId });
    const result = await h.client.result(taskId);
    return { result, status: await h.client.status(taskId) };
  });
  expect(result).toMatchObject({ outcome: 'answered', turns: 1_001, toolCalls: 1_000, text: 'read all 1000 pages' });
  // The conversation was compacted for the context window (200k tokens) and the model was offered its results back.
  expect(status.events.some((e) => e.detail.startsWith('compacted the conversation'))).toBe(true);

  const runs = await runsOf(h.client, taskId);
  expect(runs.length).toBeGreaterThanOrEqual(10);
  for (const run of runs) expect(largestPayload(run.history)).toBeLessThan(CEILING);
  const perTurn = bytesPerTurn(runs);
  expect(perTurn).toHaveLength(1_001);
  const sum = (from: number, to: number) => perTurn.slice(from, to).reduce((a, b) => a + b, 0);
  const early = sum(10, 110);
  const late = sum(perTurn.length - 100, perTurn.length);
  console.log(
    `history bytes per turn: turns 10-110 ${Math.round(early / 100)}, 110-210 ${Math.round(sum(110, 210) / 100)}, 500-600 ${Math.round(sum(500, 600) / 100)}, last 100 ${Math.round(late / 100)}, runs ${runs.length}, largest run ${Math.max(...runs.map((r) => r.historyBytes))} bytes`,
  );
  // Flat: what a turn adds at the end is within 1.2 KB of what it added early on. The growth is the
  // ledger filling to its 500 records in each continue-as-new snapshot (then it stays there); the
  // bound was 20 % of an early turn's 5.6 KB until model calls carried only their change, which
  // brought a turn down to about 4.1 KB with the same growth in bytes.
  expect((late - early) / 100).toBeLessThanOrEqual(1_200);
}, 900_000);

test('a task whose state cannot fit the ceiling blocks with a reason instead of being terminated, and goes on when unblocked', async () => {
  // The first prompt alone is larger than the ceiling: nothing the task may drop makes the snapshot fit.
  const prompt = `Summarise this: ${'x'.repeat(40_000)}`;
  const script = h.script([callTool('big_read', { offset: 1 }), callTool('big_read', { offset: 2 }), callTool('big_read', { offset: 3 }), answer('done')]);
  const taskId = h.taskId('too-big');
  const worker = await h.worker([createLongAgent(1_000)]);
  await worker.runUntil(async () => {
    await h.client.start({ agent: 'long', prompt, model: { provider: 'scripted', script }, continueAsNewEveryTurns: 2, stateCeilingBytes: 16_384 }, { taskId });
    const blocked = await statusWhen(h, taskId, (s) => s.agentStatus === 'blocked');
    expect(blocked.blocked).toMatchObject({ code: 'state_too_large', reason: expect.stringContaining('16384-byte ceiling') });
    const described = await h.client.handle(taskId).describe();
    expect(described.status.name).toBe('RUNNING');
    await h.client.unblock(taskId, { by: 'ops' });
    expect(await h.client.result(taskId)).toMatchObject({ outcome: 'answered', text: 'done', turns: 4 });
  });
});
