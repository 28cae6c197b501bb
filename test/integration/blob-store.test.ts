/**
 * One contract for every blob store, run against the local folder and a real PostgreSQL server
 * provisioned for this file (test/support/postgres.ts), plus what only one store or the cache does.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { BlobMissingError, BlobTamperedError, type BlobBodyStore, type BlobStore } from '../../src/blobs/blob-store';
import { seal } from '../../src/blobs/blob-envelope';
import { EncryptedBlobStore } from '../../src/blobs/encrypted-blob-store';
import { createKeyring } from '../../src/codec/encryption-keys';
import { blobIdOf } from '../../src/blobs/blob-id';
import { CachedBlobStore } from '../../src/blobs/cached-blob-store';
import { LocalBlobStore } from '../../src/blobs/local-blob-store';
import { openBlobStore } from '../../src/blobs/open-blob-store';
import { PostgresBlobStore } from '../../src/blobs/postgres-blob-store';
import { startPostgres, type PostgresServer } from '../support/postgres';
import { EffectJournal, familyJournalPrefix, familyJournalScope, intentOf } from '../../src/forks/effect-journal';
import { IntentClaims } from '../../src/forks/intent-claims';
import { effectJournalScope, type EffectRecord } from '../../src/protocol/fork';

let pg: PostgresServer;
const tmpDirs: string[] = [];
const tmp = () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-blobs-'));
  tmpDirs.push(dir);
  return dir;
};

beforeAll(async () => {
  pg = await startPostgres();
}, 120_000);

afterAll(async () => {
  await pg?.stop();
  for (const dir of tmpDirs) rmSync(dir, { recursive: true, force: true });
});

let tables = 0;
const stores: [string, () => BlobStore][] = [
  ['local folder', () => new LocalBlobStore(tmp())],
  // A table per test: each starts from an empty store on the one server.
  ['PostgreSQL', () => new PostgresBlobStore({ url: pg.url, table: `blobs_${++tables}` })],
  ['PostgreSQL behind the LRU cache', () => new CachedBlobStore(new PostgresBlobStore({ url: pg.url, table: `blobs_${++tables}` }), 1024 * 1024)],
];

const HOSTILE_SCOPES = [
  '../../etc/passwd',
  '..',
  '.',
  '/absolute/path',
  'a/../../b',
  'C:\\Windows\\system32',
  "x'; DROP TABLE blobs; --",
  '100%_done\\',
  'spaces and\ttabs\nnewlines',
  'émoji 🧪 ünïcode',
  'CON',
  'x'.repeat(1_500),
];

describe.each(stores)('blob store contract: %s', (_name, open) => {
  let store: BlobStore;
  beforeEach(() => {
    store = open();
  });
  afterEach(async () => {
    await store.close();
  });

  test('put returns the sha256 of the text, and get returns the same text', async () => {
    const text = 'hello, blob ✓';
    const id = await store.put('task-1/run-1', text);
    expect(id).toBe(blobIdOf(text));
    expect(id).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(await store.get('task-1/run-1', id)).toBe(text);
  });

  test('put is idempotent: the same text twice is one blob with one id', async () => {
    const a = await store.put('t/r', 'same');
    const b = await store.put('t/r', 'same');
    expect(a).toBe(b);
    expect(await store.purge('t/')).toBe(1);
  });

  test('a blob is visible only in its own scope', async () => {
    const id = await store.put('task-a/run', 'only in a');
    await expect(store.get('task-b/run', id)).rejects.toBeInstanceOf(BlobMissingError);
  });

  test('a missing blob is a BlobMissingError naming the scope, the id and the store', async () => {
    const id = blobIdOf('never stored');
    const err = await store.get('task-x/run', id).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BlobMissingError);
    expect(err).toMatchObject({ name: 'BlobMissingError', scope: 'task-x/run', id });
    expect((err as Error).message).toContain(id);
    expect((err as Error).message).toContain(store.description);
  });

  test('a malformed id is refused, not looked up', async () => {
    await expect(store.get('t/r', '../../secret')).rejects.toThrow(/not a blob id/);
  });

  test('purge deletes exactly the scopes under the prefix and reports how many blobs went', async () => {
    await store.put('task-1/run-a', 'one');
    await store.put('task-1/run-a', 'two');
    await store.put('task-1/run-b', 'three');
    await store.put('task-10/run-a', 'not task-1: a longer id sharing the characters');
    await store.put('task-2/run-a', 'other task');
    expect(await store.purge('task-1/')).toBe(3);
    expect((await store.scopes()).sort()).toEqual(['task-10/run-a', 'task-2/run-a']);
    await expect(store.get('task-1/run-a', blobIdOf('one'))).rejects.toBeInstanceOf(BlobMissingError);
    expect(await store.get('task-10/run-a', blobIdOf('not task-1: a longer id sharing the characters'))).toBeDefined();
    expect(await store.purge('task-1/')).toBe(0);
  });

  test('purgeScope deletes exactly one scope: not the scopes it is a prefix of, nor a neighbour', async () => {
    await store.put('team/run-1', 'one');
    await store.put('team/run-1', 'two');
    await store.put('team/alpha/run-1', 'a task whose id is team/alpha');
    await store.put('team/run-10', 'another run id sharing the characters');
    expect(await store.purgeScope('team/run-1')).toBe(2);
    expect((await store.scopes()).sort()).toEqual(['team/alpha/run-1', 'team/run-10']);
    expect(await store.get('team/alpha/run-1', blobIdOf('a task whose id is team/alpha'))).toBe('a task whose id is team/alpha');
    await expect(store.get('team/run-1', blobIdOf('one'))).rejects.toBeInstanceOf(BlobMissingError);
    expect(await store.purgeScope('team/run-1')).toBe(0);
    expect(await store.purgeScope('never/used')).toBe(0);
    await expect(store.purgeScope('')).rejects.toThrow(TypeError);
  });

  test('an empty purge prefix is refused instead of deleting every task', async () => {
    await store.put('t/r', 'kept');
    await expect(store.purge('')).rejects.toThrow(TypeError);
    expect(await store.scopes()).toEqual(['t/r']);
  });

  test('hostile scope strings round-trip, stay apart, and purge by their own prefix only', async () => {
    for (const scope of HOSTILE_SCOPES) {
      const id = await store.put(scope, `content of ${scope}`);
      expect(await store.get(scope, id)).toBe(`content of ${scope}`);
    }
    expect((await store.scopes()).sort()).toEqual([...HOSTILE_SCOPES].sort());
    // LIKE wildcards in a prefix are literal: "100%" matches only scopes starting with "100%".
    expect(await store.purge('100%')).toBe(1);
    expect(await store.purge('_')).toBe(0);
    expect(await store.purge('..')).toBe(2);
    expect((await store.scopes()).length).toBe(HOSTILE_SCOPES.length - 3);
  });

  test('scopes that no store could keep apart are refused with a TypeError', async () => {
    await expect(store.put('nul\0byte', 'x')).rejects.toThrow(TypeError);
    await expect(store.put('lone \uD800 surrogate', 'x')).rejects.toThrow(TypeError);
    await expect(store.put('', 'x')).rejects.toThrow(TypeError);
  });

  test('text with NUL, every plane and invalid-looking JSON round-trips exactly', async () => {
    const text = 'a\0b \u{1F600} \uFFFD {"unterminated": ' + '\u00e9'.repeat(10);
    const id = await store.put('t/r', text);
    expect(await store.get('t/r', id)).toBe(text);
  });

  test('concurrent puts of the same blob all succeed with one stored copy', async () => {
    const text = 'raced '.repeat(20_000);
    const ids = await Promise.all(Array.from({ length: 16 }, () => store.put('race/run', text)));
    expect(new Set(ids).size).toBe(1);
    expect(await store.get('race/run', ids[0]!)).toBe(text);
    expect(await store.purge('race/')).toBe(1);
  });

  test('ids lists exactly the blobs of one scope: not a neighbour, not a scope it is a prefix of', async () => {
    const one = await store.put('task-1/effects', 'one');
    const two = await store.put('task-1/effects', 'two');
    await store.put('task-1/effects/x', 'a longer scope');
    await store.put('task-10/effects', 'a neighbour');
    expect((await store.ids('task-1/effects')).sort()).toEqual([one, two].sort());
    expect(await store.ids('never/used')).toEqual([]);
    await expect(store.ids('')).rejects.toThrow(TypeError);
  });

  test('a 1 MB blob round-trips', async () => {
    const text = Array.from({ length: (1024 * 1024) / 16 }, (_, i) => `line ${String(i).padStart(10, '0')}\n`).join('');
    expect(text.length).toBe(1024 * 1024);
    const id = await store.put('big/run', text);
    expect(await store.get('big/run', id)).toBe(text);
  });
});

/**
 * Someone who can write the folder or the table (not the history, where the id is recorded) swaps
 * an approved tool input. Each store reads back only the content its id names.
 */
describe('the effect journal on each store, encrypted at rest when the store is', () => {
  const keyring = createKeyring([{ id: 'k1', key: randomBytes(32) }]);
  const bodies: [string, () => BlobBodyStore][] = [
    ['local folder', () => new LocalBlobStore(tmp())],
    ['PostgreSQL', () => new PostgresBlobStore({ url: pg.url, table: `journal_${++tables}` })],
  ];
  const record = (over: Partial<EffectRecord>): EffectRecord => ({
    version: 1,
    taskId: 'origin',
    runId: 'run-1',
    turn: 3,
    at: '2026-11-23T10:02:00.000Z',
    tool: 'append_audit_line',
    effect: 'write',
    idempotent: false,
    intent: intentOf('append_audit_line', { line: 'paid' }),
    idempotencyKey: 'origin:run-1:4',
    outcome: { ok: true, summary: '{"lines":1}' },
    ...over,
  });

  test.each(bodies)('%s: version 1 records read back, sealed at rest, and still count for the task and its branches', async (_name, open) => {
    const inner = open();
    const journal = new EffectJournal(new EncryptedBlobStore(inner, keyring));
    try {
      await journal.record(record({}));
      const [id] = await inner.ids(effectJournalScope('origin'));
      expect((await inner.getBody(effectJournalScope('origin'), id!)).toString('utf8')).not.toContain('append_audit_line');
      expect(await journal.entries('origin')).toEqual([record({})]);
      expect(await journal.legacyEntries(['fork', 'origin'], record({}).intent)).toEqual([record({})]);
      expect(await journal.legacyEntries(['fork', 'origin'], intentOf('append_audit_line', { line: 'other' }))).toEqual([]);
    } finally {
      await inner.close();
    }
  });

  test.each(bodies)('%s: of 40 callers racing for one claim exactly one wins, on every round; claims are sealed at rest and read back by generation', async (_name, open) => {
    const inner = open();
    const claims = new IntentClaims(new EncryptedBlobStore(inner, keyring));
    const intent = intentOf('append_audit_line', { line: 'paid' });
    const claim = (generation: number, attempt: string): EffectRecord & { generation: number } => ({
      ...record({ version: 3, family: 'lead', intent, attempt, step: 2, state: 'pending', outcome: { ok: false, summary: 'started' } }),
      generation,
    });
    try {
      for (const generation of [1, 2, 3]) {
        const won = await Promise.all(Array.from({ length: 40 }, (_, i) => claims.take('lead', claim(generation, `run-${i}/1`))));
        expect(won.filter(Boolean)).toHaveLength(1);
      }
      const scope = familyJournalScope('lead', intent);
      expect((await inner.scopes()).filter((s) => s.startsWith(familyJournalPrefix('lead')))).toEqual([scope]);
      for (const { body } of await inner.recordBodies(scope)) expect(body.toString('utf8')).not.toContain('append_audit_line');
      // Claims are records, not content blobs: ids() lists neither, and a settle step is a blob beside them.
      expect(await inner.ids(scope)).toEqual([]);
      const view = await claims.view('lead', intent);
      expect(view.claims.map((c) => [c.generation, c.state])).toEqual([
        [1, 'pending'],
        [2, 'pending'],
        [3, 'pending'],
      ]);
      const holder = view.claims[0]!.claim;
      await claims.settle('lead', { ...holder, step: 3, state: 'done', outcome: { ok: true, summary: '{"lines":1}' } });
      expect((await claims.view('lead', intent)).claims[0]!.state).toBe('done');
      // Another intent's view reads nothing of this one.
      expect(await claims.view('lead', intentOf('append_audit_line', { line: 'other' }))).toEqual({ claims: [], legacy: [] });
    } finally {
      await inner.close();
    }
  });
});

describe('a body swapped in the store is refused with BlobTamperedError naming the ref, never returned', () => {
  const approved = JSON.stringify({ to: 'ACME', amount: 120, memo: 'm'.repeat(9_000) });
  const swapped = JSON.stringify({ to: 'attacker', amount: 99_000, memo: 'm'.repeat(9_000) });
  const keyring = createKeyring([{ id: 'k1', key: randomBytes(32) }]);
  const SCOPE = 'task-pay/run-1';

  /** The raw place each store keeps a body, written behind its back. */
  const places: [string, () => { bodies: BlobBodyStore; overwrite(id: string, body: Buffer): Promise<void> }][] = [
    [
      'local folder',
      () => {
        const root = tmp();
        return {
          bodies: new LocalBlobStore(root),
          overwrite: async (id, body) => {
            const file = readdirSync(root, { recursive: true, withFileTypes: true }).find((e) => e.isFile() && e.name === id.slice('sha256:'.length))!;
            writeFileSync(path.join(file.parentPath, file.name), body);
          },
        };
      },
    ],
    [
      'PostgreSQL',
      () => {
        const table = `blobs_${++tables}`;
        return {
          bodies: new PostgresBlobStore({ url: pg.url, table }),
          overwrite: async (id, body) => {
            const db = new Client({ connectionString: pg.url });
            await db.connect();
            try {
              const { rowCount } = await db.query(`UPDATE ${table} SET body = $1 WHERE scope = $2 AND id = $3`, [body, SCOPE, id]);
              expect(rowCount).toBe(1);
            } finally {
              await db.end();
            }
          },
        };
      },
    ],
  ];

  describe.each(places)('%s', (_name, place) => {
    test('plain store: other text under the id is refused; so is it through the read cache, which then keeps nothing', async () => {
      const { bodies, overwrite } = place();
      try {
        const id = await bodies.put(SCOPE, approved);
        await overwrite(id, Buffer.from(swapped));
        const err = await bodies.get(SCOPE, id).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(BlobTamperedError);
        expect(err).toMatchObject({ scope: SCOPE, id });
        expect((err as Error).message).toContain(id);
        expect((err as Error).message).toContain(bodies.description);
        const cached = new CachedBlobStore(bodies);
        await expect(cached.get(SCOPE, id)).rejects.toBeInstanceOf(BlobTamperedError);
        expect(cached.cachedBytes).toBe(0);
        // Put back, the original reads again: the check is against the content, not a flag.
        await overwrite(id, Buffer.from(approved));
        expect(await bodies.get(SCOPE, id)).toBe(approved);
      } finally {
        await bodies.close();
      }
    });

    test('encrypted store: a plain body (even the original text) is refused; other text sealed under the right scope and id is refused by its hash', async () => {
      const { bodies, overwrite } = place();
      const store = new EncryptedBlobStore(bodies, keyring);
      try {
        const id = await store.put(SCOPE, approved);
        await overwrite(id, Buffer.from(swapped));
        await expect(store.get(SCOPE, id)).rejects.toThrow(/stored unencrypted while encryption keys are configured/);
        await overwrite(id, Buffer.from(approved));
        await expect(store.get(SCOPE, id)).rejects.toBeInstanceOf(BlobTamperedError);
        await overwrite(id, seal(keyring, SCOPE, id, swapped));
        await expect(store.get(SCOPE, id)).rejects.toThrow(/its content hashes to sha256:/);
        await overwrite(id, seal(keyring, SCOPE, id, approved));
        expect(await store.get(SCOPE, id)).toBe(approved);
      } finally {
        await store.close();
      }
    });
  });
});

describe('local folder', () => {
  test('no scope, however hostile, writes outside the folder, and no temp file is left behind', async () => {
    const parent = tmp();
    const root = path.join(parent, 'blobs');
    const store = new LocalBlobStore(root);
    for (const scope of HOSTILE_SCOPES) await store.put(scope, 'x');
    expect(readdirSync(parent)).toEqual(['blobs']);
    const files = readdirSync(root, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
    expect(files.filter((f) => f.name.startsWith('~tmp-'))).toEqual([]);
    for (const f of files) expect(path.resolve(f.parentPath).startsWith(root + path.sep)).toBe(true);
  });
});

describe('PostgreSQL', () => {
  test('creates its table with the documented columns on first use', async () => {
    const store = new PostgresBlobStore({ url: pg.url, table: 'blobs_schema' });
    await store.put('t/r', 'x');
    await store.close();
    const client = new Client({ connectionString: pg.url });
    await client.connect();
    const { rows } = await client.query<{ column_name: string }>("SELECT column_name FROM information_schema.columns WHERE table_name = 'blobs_schema' ORDER BY ordinal_position");
    const stored = await client.query<{ bytes: number }>('SELECT bytes FROM blobs_schema');
    await client.end();
    expect(rows.map((r) => r.column_name)).toEqual(['scope', 'id', 'body', 'bytes', 'created_at']);
    expect(stored.rows).toEqual([{ bytes: 1 }]);
  });

  test('workers starting together on a fresh database do not race on CREATE TABLE', async () => {
    const url = await pg.createDatabase('fresh_start');
    const workers = Array.from({ length: 6 }, () => new PostgresBlobStore({ url }));
    const ids = await Promise.all(workers.map((s, i) => s.put(`t/${i}`, 'first')));
    expect(new Set(ids).size).toBe(1);
    await Promise.all(workers.map((s) => s.close()));
  });

  test('an unreachable server is an error naming the store without its password, not a crash', async () => {
    const store = new PostgresBlobStore({ url: 'postgres://agent:s3cret@127.0.0.1:1/nowhere' });
    expect(store.description).not.toContain('s3cret');
    await expect(store.get('t/r', blobIdOf('x'))).rejects.toThrow(/ECONNREFUSED|connect/);
    await store.close();
  });

  test('workers on two stores (two processes in production) share blobs through the server', async () => {
    const writer = new PostgresBlobStore({ url: pg.url, table: 'blobs_shared' });
    const reader = new PostgresBlobStore({ url: pg.url, table: 'blobs_shared' });
    const id = await writer.put('task/run', 'written by one worker');
    expect(await reader.get('task/run', id)).toBe('written by one worker');
    await Promise.all([writer.close(), reader.close()]);
  });
});

describe('LRU cache', () => {
  test('a cached blob is served without the store; the cache stays within its byte bound', async () => {
    const inner = new LocalBlobStore(tmp());
    const cache = new CachedBlobStore(inner, 1_000); // 500 characters
    const a = await cache.put('t/r', 'a'.repeat(200));
    const b = await cache.put('t/r', 'b'.repeat(200));
    await cache.get('t/r', a); // a is now the most recently used
    await cache.put('t/r', 'c'.repeat(200)); // evicts b
    expect(cache.cachedBytes).toBeLessThanOrEqual(1_000);
    await inner.purge('t/'); // behind the cache's back
    expect(await cache.get('t/r', a)).toBe('a'.repeat(200));
    await expect(cache.get('t/r', b)).rejects.toBeInstanceOf(BlobMissingError);
  });

  test("purgeScope through the cache forgets that scope's cached copies and keeps the others", async () => {
    const cache = new CachedBlobStore(new LocalBlobStore(tmp()));
    const gone = await cache.put('team/run', 'cached');
    const kept = await cache.put('team/alpha/run', 'kept');
    expect(await cache.purgeScope('team/run')).toBe(1);
    await expect(cache.get('team/run', gone)).rejects.toBeInstanceOf(BlobMissingError);
    expect(await cache.get('team/alpha/run', kept)).toBe('kept');
  });

  test('purge through the cache also forgets the cached copies', async () => {
    const cache = new CachedBlobStore(new LocalBlobStore(tmp()));
    const id = await cache.put('t/r', 'cached');
    expect(await cache.purge('t/')).toBe(1);
    await expect(cache.get('t/r', id)).rejects.toBeInstanceOf(BlobMissingError);
  });
});

describe('openBlobStore', () => {
  test('chooses the store from the spec, with a read cache unless told not to', async () => {
    const dir = tmp();
    const local = openBlobStore(`file:${dir}`, { cacheBytes: 0 });
    expect(local).toBeInstanceOf(LocalBlobStore);
    expect(local.description).toBe(`folder ${dir}`);
    const shared = openBlobStore(pg.url);
    expect(shared).toBeInstanceOf(CachedBlobStore);
    expect((shared as CachedBlobStore).inner).toBeInstanceOf(PostgresBlobStore);
    const id = await shared.put('t/r', 'via spec');
    expect(await shared.get('t/r', id)).toBe('via spec');
    await shared.close();
  });

  test('a relative folder or an unknown scheme is refused with the variable named, without a password', () => {
    expect(() => openBlobStore('file:relative/dir')).toThrow(/absolute path \(DURABLE_AGENT_BLOB_STORE=file:/);
    expect(() => openBlobStore('s3://user:pw@bucket')).toThrow(/expected DURABLE_AGENT_BLOB_STORE=file:\/abs\/dir or postgres:/);
    expect(() => openBlobStore('s3://user:pw@bucket')).not.toThrow(/pw/);
  });

  test('defaults to <state dir>/blobs', () => {
    const home = tmp();
    const saved = process.env.DURABLE_AGENT_HOME;
    process.env.DURABLE_AGENT_HOME = home;
    try {
      expect(openBlobStore(undefined, { cacheBytes: 0 }).description).toBe(`folder ${path.join(home, 'blobs')}`);
    } finally {
      if (saved === undefined) delete process.env.DURABLE_AGENT_HOME;
      else process.env.DURABLE_AGENT_HOME = saved;
    }
  });
});
