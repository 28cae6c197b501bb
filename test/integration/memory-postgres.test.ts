/**
 * The memory contract (test/support/memory-contract.ts) on the shared backend: a real PostgreSQL
 * server for this file, memory versions in their table and content in the PostgreSQL blob store,
 * as workers on several machines use them; openMemoryLog finds it from the blob store setting.
 */
import { PostgresBlobStore } from '../../src/blobs/postgres-blob-store';
import { openMemoryLog, PostgresMemoryLog } from '../../src/memory';
import { memoryContract, type MemoryBackend } from '../support/memory-contract';
import { startPostgres, type PostgresServer } from '../support/postgres';

let pg: PostgresServer | undefined;
let backend: MemoryBackend | undefined;

jest.setTimeout(120_000);

memoryContract(
  'PostgreSQL',
  async () => {
    pg = await startPostgres();
    backend = { log: new PostgresMemoryLog({ url: pg.url }), blobs: new PostgresBlobStore({ url: pg.url }) };
    return backend;
  },
  async () => {
    await backend?.log.close();
    await backend?.blobs.close();
    await pg?.stop();
  },
);

test('openMemoryLog keeps memory in the database the blob store setting names', () => {
  const log = openMemoryLog('postgres://user:secret@127.0.0.1:1/db');
  expect(log).toBeInstanceOf(PostgresMemoryLog);
  expect(log.description).not.toContain('secret');
  void log.close();
});
