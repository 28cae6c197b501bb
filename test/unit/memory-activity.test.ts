/**
 * The memory tool inside runTool (MockActivityEnvironment, a real folder store): commands run in the
 * agent's scope keyed by the call's idempotency key, a retried attempt writes nothing again, and
 * memory content swapped in the store blocks the task as blob_tampered, never reaching the model.
 */
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { createActivities } from '../../src/activities';
import { defineAgent } from '../../src/agents/define-agent';
import { LocalBlobStore } from '../../src/blobs/local-blob-store';
import { LocalMemoryLog } from '../../src/memory';

const dir = mkdtempSync(path.join(os.tmpdir(), 'memory-activity-'));
const agent = defineAgent({ name: 'keeper', system: 's', tools: [], memory: true });
const activities = createActivities({ agents: [agent], blobStore: new LocalBlobStore(dir), modelEnv: { anthropicApiKey: '' } });
const env = (attempt = 1) => new MockActivityEnvironment({ attempt }, { logger: new DefaultLogger('ERROR') });
const call = (input: unknown, n: number, attempt = 1) =>
  env(attempt).run(activities.runTool, { agent: 'keeper', tool: 'memory', input, toolUseId: `toolu_${n}`, scope: 'task-1/run-1', idempotencyKey: `task-1:run-1:${n}` });

test('runTool runs memory commands in the agent scope; attempt 2 of a write answers attempt 1 and stores nothing new', async () => {
  const input = { command: 'create', path: '/memories/a.md', file_text: 'hello' };
  expect(await call(input, 1)).toEqual({ kind: 'ok', output: 'File created successfully at: /memories/a.md' });
  // The second attempt answers with what it recovered from: one attempt before it.
  expect(await call(input, 1, 2)).toEqual({ kind: 'ok', output: 'File created successfully at: /memories/a.md', recovery: { repeated: 1, waitedMs: expect.any(Number) } });
  const history = await new LocalMemoryLog(path.join(dir, '~memory')).history('agent/keeper', '/memories/a.md');
  expect(history.map((v) => [v.version, v.task, v.callKey, v.toolUseId])).toEqual([[1, 'task-1/run-1', 'task-1:run-1:1', 'toolu_1']]);
  // Another call (another key) is a new write: the file exists now.
  const again = await call(input, 2).catch((e: unknown) => e);
  expect(again).toBeInstanceOf(ApplicationFailure);
  expect((again as ApplicationFailure).details?.[0]).toMatchObject({ error_class: 'model', code: 'memory_file_exists', detail: 'File /memories/a.md already exists' });
});

test('memory content changed in the store is blob_tampered (a block), and the model never reads it', async () => {
  await call({ command: 'create', path: '/memories/t.md', file_text: 'original' }, 3);
  const folder = readdirSync(dir).find((n) => n.startsWith('%7Ememory'))!;
  for (const name of readdirSync(path.join(dir, folder))) if (/^[0-9a-f]{64}$/.test(name)) writeFileSync(path.join(dir, folder, name), 'forged');
  // Another worker (this one's read cache holds the original text, in memory only).
  const other = createActivities({ agents: [agent], blobStore: new LocalBlobStore(dir), modelEnv: { anthropicApiKey: '' } });
  const view = { agent: 'keeper', tool: 'memory', input: { command: 'view', path: '/memories/t.md' }, toolUseId: 'toolu_4', scope: 'task-1/run-1', idempotencyKey: 'task-1:run-1:4' };
  const failure = (await env()
    .run(other.runTool, view)
    .catch((e: unknown) => e)) as ApplicationFailure;
  expect(failure).toBeInstanceOf(ApplicationFailure);
  expect(failure.type).toBe('resource');
  expect(failure.details?.[0]).toMatchObject({ error_class: 'resource', code: 'blob_tampered' });
  expect(JSON.stringify(failure.details)).not.toContain('forged');
});
