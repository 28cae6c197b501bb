/**
 * The memory tool's commands on the folder backend (the PostgreSQL backend runs the same contract in
 * test/integration/memory-postgres.test.ts), and memory content encrypted when the blob store is.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EncryptedBlobStore, LocalBlobStore } from '../../src/blobs';
import { createKeyring } from '../../src/codec';
import { LocalMemoryLog, MemoryFiles, memoryInput, memoryInputSchema } from '../../src/memory';
import { memoryContract } from '../support/memory-contract';

const root = mkdtempSync(path.join(os.tmpdir(), 'memory-files-'));

memoryContract('a folder', async () => ({ log: new LocalMemoryLog(path.join(root, 'blobs', '~memory')), blobs: new LocalBlobStore(path.join(root, 'blobs')) }));

test('with encryption keys, no byte of a memory file is readable in the folder, and the tool reads it back', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'memory-encrypted-'));
  const secret = `MEMORY-SECRET-${randomBytes(4).toString('hex')}`;
  const blobs = new EncryptedBlobStore(new LocalBlobStore(dir), createKeyring([{ id: 'k1', key: randomBytes(32) }]));
  const files = new MemoryFiles(new LocalMemoryLog(path.join(dir, '~memory')), blobs);
  const call = { scope: 'agent/enc', task: 't/1', callKey: 't:1:1' };
  await files.run(memoryInput(memoryInputSchema.parse({ command: 'create', path: '/memories/secret.md', file_text: secret })), call);
  const everything = readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => readFileSync(path.join(e.parentPath, e.name)));
  expect(everything.length).toBeGreaterThan(1);
  for (const bytes of everything) expect(bytes.includes(secret)).toBe(false);
  expect((await files.show('agent/enc', '/memories/secret.md'))?.content).toBe(secret);
});
