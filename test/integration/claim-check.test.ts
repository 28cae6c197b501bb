/**
 * The claim check seen from the model's side: compacted results can be recalled by ref, and content
 * gone from the store is a clear, classified block that a person can get past, never a crash loop.
 */
import { createHash, randomBytes } from 'node:crypto';
import { EncryptedBlobStore } from '../../src/blobs/encrypted-blob-store';
import type { LocalBlobStore } from '../../src/blobs/local-blob-store';
import { createKeyring } from '../../src/codec/encryption-keys';
import { answer, callTool, parsedResults, startHarness, statusWhen, type Harness } from '../support/harness';
import { createLongAgent, pageText } from '../support/long-agents';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

const refOf = (offset: number) => `sha256:${createHash('sha256').update(JSON.stringify({ offset, text: pageText(offset, 40_000) })).digest('hex')}`;

test('results compacted out of the context window come back through recall_result with their ref', async () => {
  // 14 results of 40 KB pass 70% of a 200k-token window: the oldest are stubbed, and recall is offered.
  const reads = Array.from({ length: 14 }, (_, i) => callTool('big_read', { offset: i }));
  const script = h.script([...reads, callTool('recall_result', { ref: refOf(0) }), answer('recalled')]);
  const taskId = h.taskId('recall');
  const worker = await h.worker([createLongAgent(40_000)]);
  const { transcript, status } = await worker.runUntil(async () => {
    await h.client.start({ agent: 'long', prompt: 'read', model: { provider: 'scripted', script } }, { taskId });
    await h.client.result(taskId);
    return { transcript: await h.client.transcript(taskId), status: await h.client.status(taskId) };
  });
  expect(status.events.some((e) => e.detail.startsWith('compacted the conversation'))).toBe(true);
  const results = parsedResults(transcript);
  const recalled = results.at(-1) as { ref?: string; content?: string };
  expect(recalled.ref).toBe(refOf(0));
  expect(JSON.parse(recalled.content!)).toEqual({ offset: 0, text: pageText(0, 40_000) });
  // The stub the model saw for page 0 named that ref.
  expect(JSON.stringify(results[0])).toContain(refOf(0));
});

test('content purged from the store blocks the task as blob_missing with the ref; unblocking goes on without it', async () => {
  const script = h.script([callTool('big_read', { offset: 7 }), answer('went on without page 7')]);
  const taskId = h.taskId('missing-blob');
  const agents = [createLongAgent(40_000)];
  await (await h.worker(agents)).runUntil(async () => {
    await h.client.start({ agent: 'long', prompt: 'read', model: { provider: 'scripted', script }, budgets: { turns: 1 } }, { taskId });
    await statusWhen(h, taskId, (s) => s.blocked?.code === 'turn_budget');
  });
  // Gone while no worker held it in memory (a purge, a store that was not shared).
  expect(await h.blobStore.purge(`${taskId}/`)).toBeGreaterThan(0);
  await (await h.worker(agents)).runUntil(async () => {
    await h.client.unblock(taskId, { by: 'ops', budget: { turns: 3 } });
    const blocked = await statusWhen(h, taskId, (s) => s.blocked?.code === 'model_blob_missing');
    expect(blocked.lastError).toMatchObject({ error_class: 'resource', code: 'blob_missing', detail: expect.stringContaining(refOf(7)) });
    await h.client.unblock(taskId, { by: 'ops', message: 'page 7 is gone; go on' });
    expect(await h.client.result(taskId)).toMatchObject({ outcome: 'answered', text: 'went on without page 7' });
  });
});

test('content sealed with a key this worker lacks blocks the task as blob_unreadable naming the key; with the key added, unblocking goes on with the content', async () => {
  const script = h.script([callTool('big_read', { offset: 11 }), answer('page 11 read back')]);
  const taskId = h.taskId('unreadable-blob');
  const agents = [createLongAgent(40_000)];
  const [oldKey, newKey] = [{ id: 'old-2026', key: randomBytes(32) }, { id: 'new-2026', key: randomBytes(32) }];
  const folder = h.blobStore as LocalBlobStore;
  const sealedWith = (...keys: (typeof oldKey)[]) => new EncryptedBlobStore(folder, createKeyring(keys));
  await (await h.worker(agents, { blobStore: sealedWith(oldKey) })).runUntil(async () => {
    await h.client.start({ agent: 'long', prompt: 'read', model: { provider: 'scripted', script }, budgets: { turns: 1 } }, { taskId });
    await statusWhen(h, taskId, (s) => s.blocked?.code === 'turn_budget');
  });
  // A worker that was given only the new key (the old one forgotten in a rotation).
  await (await h.worker(agents, { blobStore: sealedWith(newKey) })).runUntil(async () => {
    await h.client.unblock(taskId, { by: 'ops', budget: { turns: 3 } });
    const blocked = await statusWhen(h, taskId, (s) => s.blocked?.code === 'model_blob_unreadable');
    expect(blocked.lastError).toMatchObject({ error_class: 'resource', code: 'blob_unreadable', detail: expect.stringContaining('old-2026') });
  });
  await (await h.worker(agents, { blobStore: sealedWith(newKey, oldKey) })).runUntil(async () => {
    await h.client.unblock(taskId, { by: 'ops', message: 'the old key is back' });
    expect(await h.client.result(taskId)).toMatchObject({ outcome: 'answered', text: 'page 11 read back' });
    // The page stayed in the conversation as its reference: nothing was forgotten on the way.
    expect(JSON.stringify(await h.client.transcript(taskId))).not.toContain('no longer available');
  });
});
