/**
 * Blob content encrypted at rest, end to end on a real dev server: a long task whose 40 KB tool
 * results, a long tool input and a long answer carry a secret runs with encryption on and the
 * worker's default store (built from its codec options); every file of the blob folder is scanned
 * and holds none of it, while the task completes, recall finds a compacted result by its sha256 ref,
 * and `durable-agent status --all` reads the archive back. A task started before encryption was
 * turned on finishes on an encrypting worker told to read plain blobs (a migration); by default
 * they are refused. The PostgreSQL store keeps only ciphertext too.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { Client as PgClient } from 'pg';
import { defineAgent, type AgentDefinition } from '../../src/agents/define-agent';
import { BlobTamperedError, EncryptedBlobStore, LocalBlobStore, openBlobStore, PostgresBlobStore } from '../../src/blobs';
import { isSealed, sealedKeyId } from '../../src/blobs/blob-envelope';
import { TaskClient } from '../../src/client/task-client';
import { encryptionKeyring, type CodecOptions } from '../../src/codec';
import { defineTool } from '../../src/tools/define-tool';
import { useHarness, answer, callTool, parsedResults, statusWhen } from '../support/harness';
import { startPostgres, type PostgresServer } from '../support/postgres';
import { runCli } from '../support/processes';

jest.setTimeout(300_000);

const tag = randomBytes(4).toString('hex');
const SECRET = { result: `RESULT-SECRET-${tag}`, input: `INPUT-SECRET-${tag}`, answer: `ANSWER-SECRET-${tag}` };
const KEYS = [
  { id: 'blobs-new', key: randomBytes(32) },
  { id: 'blobs-old', key: randomBytes(32) },
];
const KEYS_ENV = KEYS.map((k) => `${k.id}:${k.key.toString('base64')}`).join(',');
const codec: CodecOptions = { encryption: { keys: KEYS }, env: {} };

/** 40 KB per page, the secret on every line, different for every offset. */
function secretPage(offset: number, size = 40_000): string {
  const line = `page ${offset}: ${SECRET.result} the quick brown fox ${offset * 7919}\n`;
  return line.repeat(Math.ceil(size / line.length)).slice(0, size);
}
const refOf = (offset: number) =>
  `sha256:${createHash('sha256')
    .update(JSON.stringify({ offset, text: secretPage(offset) }))
    .digest('hex')}`;

function vaultAgent(): AgentDefinition {
  const read = defineTool({
    name: 'vault_read',
    description: 'Reads one page of the vault.',
    input: z.object({ offset: z.number().int().min(0), note: z.string().optional() }),
    output: z.object({ offset: z.number(), text: z.string() }),
    effect: 'read',
    idempotent: true,
    timeoutMs: 30_000,
    run: async ({ offset }) => ({ offset, text: secretPage(offset) }),
  });
  return defineAgent({ name: 'vault', system: 'Reads the vault page by page.', tools: [read], maxTurns: 500, budgets: { toolCalls: 500 } });
}

/** Every file under `root` (blobs, scope files, anything a store left there). */
function filesUnder(root: string): string[] {
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name));
}
const isBlobFile = (file: string) => /^[0-9a-f]{64}$/.test(path.basename(file));
/** What must never be found at rest: each secret, and the page text around it. */
const NEEDLES = [SECRET.result, SECRET.input, SECRET.answer, 'the quick brown fox'];
const found = (bytes: Buffer) => NEEDLES.filter((n) => bytes.includes(n));

// Stopped while the server is up: afterAll hooks run in the order they are declared, the harness's below.
afterAll(async () => {
  await encrypted?.client.connection.close();
});
const h = useHarness();
let encrypted: TaskClient;
beforeAll(async () => {
  encrypted = await TaskClient.connect({ address: h.server.address, taskQueue: h.taskQueue, codec });
});

test('a long task with 40 KB secret results leaves no plaintext in any file of the blob store; it completes, recall and status --all read it back', async () => {
  const blobDir = path.join(h.tmpDir, 'encrypted-blobs');
  // The worker builds its own store (createAgentWorker's default) from this setting and its codec keys.
  process.env.DURABLE_AGENT_BLOB_STORE = `file:${blobDir}`;
  const reads = Array.from({ length: 60 }, (_, i) => callTool('vault_read', i === 0 ? { offset: 0, note: `${SECRET.input} `.repeat(200) } : { offset: i }));
  // The answer is above the model output's inline limit (8,192 characters): it is stored as a blob too.
  const script = h.script([...reads, callTool('recall_result', { ref: refOf(0) }), answer(`${SECRET.answer} `.repeat(600))]);
  const taskId = h.taskId('vault');
  const worker = await h.worker([vaultAgent()], { codec, blobStore: undefined });
  const { result, cli, transcript, status } = await worker.runUntil(async () => {
    await encrypted.start({ agent: 'vault', prompt: 'read the vault', model: { provider: 'scripted', script }, continueAsNewEveryTurns: 20, budgets: { turns: 80, toolCalls: 80 } }, { taskId });
    const result = await encrypted.result(taskId);
    // status --all, as a process configured only by the environment, reads the encrypted archive
    // (while a worker runs: the status is a query).
    const cli = await runCli(['status', taskId, '--all', '--json', '--address', h.server.address, '--task-queue', h.taskQueue, '--blob-store', `file:${blobDir}`], {
      DURABLE_AGENT_ENCRYPTION_KEYS: KEYS_ENV,
    });
    return { result, cli, transcript: await encrypted.transcript(taskId), status: await encrypted.status(taskId) };
  });
  expect(result).toMatchObject({ outcome: 'answered' });
  expect(JSON.stringify(result)).toContain(SECRET.answer);

  // Recall by the sha256 of the plain result: ids are unchanged by encryption.
  expect(status.events.some((e) => e.detail.startsWith('compacted the conversation'))).toBe(true);
  const recalled = parsedResults(transcript).at(-1) as { ref?: string; content?: string };
  expect(recalled.ref).toBe(refOf(0));
  expect(JSON.parse(recalled.content!)).toEqual({ offset: 0, text: secretPage(0) });

  // Every byte at rest: no secret, no page text; every blob sealed under the current key.
  const files = filesUnder(blobDir);
  const blobs = files.filter(isBlobFile);
  expect(blobs.length).toBeGreaterThan(60);
  const leaks = files.map((f) => ({ f, found: found(readFileSync(f)) })).filter((x) => x.found.length);
  expect(leaks).toEqual([]);
  for (const file of blobs) {
    const body = readFileSync(file);
    expect(isSealed(body)).toBe(true);
    expect(sealedKeyId(body, 'scope', 'id').keyId).toBe('blobs-new');
  }
  // The scan is not vacuous: the same store, opened with the keys, holds the secrets.
  const reader = new EncryptedBlobStore(new LocalBlobStore(blobDir), encryptionKeyring(codec)!);
  const [scope] = await reader.scopes();
  expect(await reader.get(scope!, refOf(0))).toContain(SECRET.result);
  const texts = await Promise.all(blobs.map((f) => reader.get(scope!, `sha256:${path.basename(f)}`)));
  expect(texts.some((t) => t.includes(SECRET.input))).toBe(true);
  expect(texts.some((t) => t.includes(SECRET.answer))).toBe(true);

  expect(status.archive?.markers.length).toBeGreaterThan(0);
  expect({ code: cli.code, stderr: cli.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
  const view = JSON.parse(cli.stdout) as { archived: { kind: string; entry: { seq?: number; kind?: string } }[] };
  expect(view.archived.find((a) => a.kind === 'event')?.entry).toMatchObject({ seq: 1, kind: 'task_started' });

  // A bad key is a usage error (exit 2) that names it, not an unreachable server.
  const bad = await runCli(['status', taskId, '--all', '--address', h.server.address], { DURABLE_AGENT_ENCRYPTION_KEYS: `blobs-new:${randomBytes(16).toString('base64')}` });
  expect(bad.code).toBe(2);
  expect(bad.stderr).toMatch(/Encryption keys are misconfigured: .*"blobs-new"\): the key is 16 bytes/);
});

test('a task started before encryption was turned on finishes on an encrypting worker told to read plain blobs (DURABLE_AGENT_BLOB_PLAIN=read): old blobs stay readable plain text, new ones are sealed; by default the old plain blobs are refused', async () => {
  const blobDir = path.join(h.tmpDir, 'mixed-blobs');
  const plainStore = new LocalBlobStore(blobDir);
  const script = h.script([callTool('vault_read', { offset: 100 }), callTool('vault_read', { offset: 101 }), answer('read both pages')]);
  const taskId = h.taskId('turned-on');
  // Before: no keys anywhere; the task blocks on its turn budget after the first page.
  await (await h.worker([vaultAgent()], { blobStore: plainStore })).runUntil(async () => {
    await h.client.start({ agent: 'vault', prompt: 'read two pages', model: { provider: 'scripted', script }, budgets: { turns: 1 } }, { taskId });
    await statusWhen(h, taskId, (s) => s.blocked?.code === 'turn_budget');
  });
  const before = filesUnder(blobDir).filter(isBlobFile);
  expect(before.length).toBeGreaterThan(0);
  expect(before.every((f) => readFileSync(f).includes(SECRET.result))).toBe(true);

  // After: keys on; a store that refuses plain bodies (the default) does not read them as content.
  const refusing = openBlobStore(`file:${blobDir}`, { codec, cacheBytes: 0 });
  const [scope] = await refusing.scopes();
  await expect(refusing.get(scope!, `sha256:${path.basename(before[0]!)}`)).rejects.toBeInstanceOf(BlobTamperedError);
  // Told to read them (a migration), a fresh worker (empty cache) resends the first page to the model from the plain blob.
  const store = openBlobStore(`file:${blobDir}`, { codec: { ...codec, env: { DURABLE_AGENT_BLOB_PLAIN: 'read' } }, cacheBytes: 0 });
  await (await h.worker([vaultAgent()], { codec, blobStore: store })).runUntil(async () => {
    await encrypted.unblock(taskId, { by: 'ops', budget: { turns: 5 } });
    expect(await encrypted.result(taskId)).toMatchObject({ outcome: 'answered', text: 'read both pages' });
    // Both results travel by reference: the first stored in plain text, the second sealed.
    const refs = parsedResults(await encrypted.transcript(taskId)).map((r) => r.$blob as string);
    const pages = await Promise.all(refs.map(async (ref) => JSON.parse(await store.get(scope!, ref)) as { offset: number }));
    expect(pages.map((p) => p.offset)).toEqual([100, 101]);
  });
  const added = filesUnder(blobDir).filter((f) => isBlobFile(f) && !before.includes(f));
  expect(added.length).toBeGreaterThan(0);
  for (const file of added) expect(found(readFileSync(file))).toEqual([]);
  for (const file of before) expect(await store.get(scope!, `sha256:${path.basename(file)}`)).toContain(SECRET.result);
});

describe('PostgreSQL store', () => {
  let pg: PostgresServer;
  beforeAll(async () => {
    pg = await startPostgres();
  }, 180_000);
  afterAll(async () => {
    await pg?.stop();
  });

  test('rows hold ciphertext only; a row written before encryption reads back through an encrypted store told to read plain blobs, and is refused by default', async () => {
    const plain = new PostgresBlobStore({ url: pg.url });
    const oldId = await plain.put('task-pg/run-1', `old ${secretPage(1)}`);
    await plain.close();
    const store = openBlobStore(pg.url, { codec, cacheBytes: 0 });
    const id = await store.put('task-pg/run-1', `${secretPage(2)} ${SECRET.input}`);
    expect(await store.get('task-pg/run-1', id)).toBe(`${secretPage(2)} ${SECRET.input}`);
    await expect(store.get('task-pg/run-1', oldId)).rejects.toBeInstanceOf(BlobTamperedError);
    await store.close();
    const migrating = openBlobStore(pg.url, { codec, cacheBytes: 0, plainBlobs: 'read' });
    expect(await migrating.get('task-pg/run-1', oldId)).toBe(`old ${secretPage(1)}`);
    await migrating.close();

    const db = new PgClient({ connectionString: pg.url });
    await db.connect();
    try {
      const { rows } = await db.query<{ id: string; body: Buffer }>('SELECT id, body FROM durable_agent_blobs');
      const row = rows.find((r) => r.id === id)!;
      expect(isSealed(row.body)).toBe(true);
      expect(found(row.body)).toEqual([]);
      // The row written before encryption is the one plain row: pass-through, not a silent rewrite.
      expect(rows.filter((r) => found(r.body).length).map((r) => r.id)).toEqual([oldId]);
    } finally {
      await db.end();
    }
  });
});
