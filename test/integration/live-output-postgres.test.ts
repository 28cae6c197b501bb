/**
 * Live output on PostgreSQL (the cluster's store): the same offset promises as the folder store
 * (resume from the last offset + 1 gets exactly the rest, tasks apart, purge), and appends from
 * two writers to one task (a timed-out attempt still streaming beside its retry) are never seen
 * out of order, so a reader that resumes never skips a line.
 */
import { createKeyring } from '../../src/codec/encryption-keys';
import { RecordLog } from '../../src/live-output/live-output-log';
import { openLiveOutputLog } from '../../src/live-output/open-live-output-log';
import { PostgresLineStore } from '../../src/live-output/postgres-line-store';
import type { LiveOutputEvent, LiveOutputRecord } from '../../src/protocol/live-output';
import { startPostgres, type PostgresServer } from '../support/postgres';

let pg: PostgresServer;
let log: RecordLog;
jest.setTimeout(120_000);
beforeAll(async () => {
  pg = await startPostgres();
  log = new RecordLog(new PostgresLineStore({ url: pg.url }));
});
afterAll(async () => {
  await log?.close();
  await pg?.stop();
});

const text = (attempt: number, t: string): LiveOutputRecord => ({ kind: 'text', callId: 'run/1', attempt, block: 0, text: t });
/** A task's stream: its id and its first run. */
const st = (taskId: string, firstRunId = 'run-1') => ({ taskId, firstRunId });

test('offsets grow, a read from the last offset + 1 gets exactly the rest, tasks stay apart, and remove deletes one task', async () => {
  for (let i = 0; i < 12; i += 3) await log.append(st('pg-a'), [text(1, `${i} `), text(1, `${i + 1} `), text(1, `${i + 2} `)]);
  await log.append(st('pg-b'), [text(1, 'other task')]);
  const all = await log.read(st('pg-a'), 0);
  expect(all.map((e) => (e.kind === 'text' ? e.text : ''))).toEqual(Array.from({ length: 12 }, (_, i) => `${i} `));
  for (const cut of [0, 5, 11]) expect(await log.read(st('pg-a'), all[cut]!.offset + 1)).toEqual(all.slice(cut + 1));
  expect(await log.read(st('pg-a'), 0, 4)).toEqual(all.slice(0, 4));
  expect(await log.remove('pg-a')).toBe(true);
  expect(await log.read(st('pg-a'), 0)).toEqual([]);
  expect(await log.read(st('pg-b'), 0)).toHaveLength(1);
});

test('two writers appending to one task while a reader follows: the reader sees every line once, in offset order', async () => {
  const seen: LiveOutputEvent[] = [];
  let from = 0;
  let writing = true;
  const reader = (async () => {
    while (writing || (await log.read(st('pg-c'), from)).length > 0) {
      for (const event of await log.read(st('pg-c'), from)) {
        seen.push(event);
        from = event.offset + 1;
      }
    }
  })();
  const writer = async (attempt: number) => {
    for (let i = 0; i < 40; i++) await log.append(st('pg-c'), [text(attempt, `${attempt}:${i}`)]);
  };
  await Promise.all([writer(1), writer(2)]);
  writing = false;
  await reader;
  const stored = await log.read(st('pg-c'), 0, 1_000);
  expect(stored).toHaveLength(80);
  expect(seen).toEqual(stored);
});

test('a later task under the same id streams apart; with keys a line moved to another offset or first run does not open', async () => {
  await log.append(st('pg-reused', 'run-first'), [text(1, 'the earlier task')]);
  expect(await log.read(st('pg-reused', 'run-second'), 0)).toEqual([]);
  await log.append(st('pg-reused', 'run-second'), [text(1, 'the new task')]);
  expect((await log.read(st('pg-reused', 'run-second'), 0)).map((e) => (e.kind === 'text' ? e.text : ''))).toEqual(['the new task']);
  expect(await log.remove('pg-reused')).toBe(true);
  expect(await log.read(st('pg-reused', 'run-first'), 0)).toEqual([]);

  const lines = new PostgresLineStore({ url: pg.url });
  const sealed = new RecordLog(lines, createKeyring([{ id: 'k1', key: Buffer.alloc(32, 7) }]));
  try {
    await sealed.append(st('pg-sealed', 'run-a'), [text(1, 'first'), text(1, 'second')]);
    const [first] = await lines.read(st('pg-sealed', 'run-a'), 0, 10);
    await lines.append(st('pg-sealed', 'run-a'), [() => first!.line]);
    await lines.append(st('pg-sealed', 'run-b'), [() => first!.line]);
    expect((await sealed.read(st('pg-sealed', 'run-a'), 0)).map((e) => (e.kind === 'text' ? e.text : ''))).toEqual(['first', 'second']);
    expect(await sealed.read(st('pg-sealed', 'run-b'), 0)).toEqual([]);
  } finally {
    await sealed.close();
  }
});

test('openLiveOutputLog keeps live output in the database the blob store setting names, without its password in messages', () => {
  const opened = openLiveOutputLog('postgres://user:secret@127.0.0.1:1/db');
  expect(opened.description).toContain('PostgreSQL');
  expect(opened.description).not.toContain('secret');
  void opened.close();
});
