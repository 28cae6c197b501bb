/**
 * Live output on PostgreSQL (the cluster's store): the same offset promises as the folder store
 * (resume from the last offset + 1 gets exactly the rest, tasks apart, purge), and appends from
 * two writers to one task (a timed-out attempt still streaming beside its retry) are never seen
 * out of order, so a reader that resumes never skips a line.
 */
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

test('offsets grow, a read from the last offset + 1 gets exactly the rest, tasks stay apart, and remove deletes one task', async () => {
  for (let i = 0; i < 12; i += 3) await log.append('pg-a', [text(1, `${i} `), text(1, `${i + 1} `), text(1, `${i + 2} `)]);
  await log.append('pg-b', [text(1, 'other task')]);
  const all = await log.read('pg-a', 0);
  expect(all.map((e) => (e.kind === 'text' ? e.text : ''))).toEqual(Array.from({ length: 12 }, (_, i) => `${i} `));
  for (const cut of [0, 5, 11]) expect(await log.read('pg-a', all[cut]!.offset + 1)).toEqual(all.slice(cut + 1));
  expect(await log.read('pg-a', 0, 4)).toEqual(all.slice(0, 4));
  expect(await log.remove('pg-a')).toBe(true);
  expect(await log.read('pg-a', 0)).toEqual([]);
  expect(await log.read('pg-b', 0)).toHaveLength(1);
});

test('two writers appending to one task while a reader follows: the reader sees every line once, in offset order', async () => {
  const seen: LiveOutputEvent[] = [];
  let from = 0;
  let writing = true;
  const reader = (async () => {
    while (writing || (await log.read('pg-c', from)).length > 0) {
      for (const event of await log.read('pg-c', from)) {
        seen.push(event);
        from = event.offset + 1;
      }
    }
  })();
  const writer = async (attempt: number) => {
    for (let i = 0; i < 40; i++) await log.append('pg-c', [text(attempt, `${attempt}:${i}`)]);
  };
  await Promise.all([writer(1), writer(2)]);
  writing = false;
  await reader;
  const stored = await log.read('pg-c', 0, 1_000);
  expect(stored).toHaveLength(80);
  expect(seen).toEqual(stored);
});

test('openLiveOutputLog keeps live output in the database the blob store setting names, without its password in messages', () => {
  const opened = openLiveOutputLog('postgres://user:secret@127.0.0.1:1/db');
  expect(opened.description).toContain('PostgreSQL');
  expect(opened.description).not.toContain('secret');
  void opened.close();
});
