/**
 * The live output log's promises, on the folder store: offsets only grow, a read from the last
 * offset + 1 gets exactly what follows, a line still being written is not read, and with
 * encryption keys a line is sealed for its task (not readable as another task's, not forgeable).
 */
import { appendFileSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createKeyring } from '../../src/codec/encryption-keys';
import { RecordLog } from '../../src/live-output/live-output-log';
import { LocalLineStore } from '../../src/live-output/local-line-store';
import type { LiveOutputRecord } from '../../src/protocol/live-output';

const text = (i: number, t = `piece ${i} `): LiveOutputRecord => ({ kind: 'text', callId: 'run/1', attempt: 1, block: 0, text: t });
const freshDir = () => mkdtempSync(path.join(os.tmpdir(), 'live-output-'));

test('offsets grow with every append, and reading from the last offset + 1 gives exactly the rest', async () => {
  const log = new RecordLog(new LocalLineStore(freshDir()));
  for (let i = 0; i < 30; i += 3) await log.append('t-1', [text(i), text(i + 1), text(i + 2)]);
  const all = await log.read('t-1', 0);
  expect(all.map((e) => (e.kind === 'text' ? e.text : ''))).toEqual(Array.from({ length: 30 }, (_, i) => `piece ${i} `));
  const offsets = all.map((e) => e.offset);
  expect(new Set(offsets).size).toBe(30);
  expect(offsets).toEqual([...offsets].sort((a, b) => a - b));
  for (const cut of [0, 1, 14, 28, 29]) expect(await log.read('t-1', all[cut]!.offset + 1)).toEqual(all.slice(cut + 1));
  // An offset is inclusive: reading from one gets that event first.
  expect((await log.read('t-1', all[7]!.offset))[0]).toEqual(all[7]);
  // Pages: a reader far behind catches up in steps of `limit`.
  expect(await log.read('t-1', 0, 4)).toEqual(all.slice(0, 4));
  expect(await log.read('t-1', all.at(-1)!.offset + 1)).toEqual([]);
});

test('tasks do not share output, text with newlines stays one event, and a task with none reads empty', async () => {
  const log = new RecordLog(new LocalLineStore(freshDir()));
  await log.append('a', [text(1, 'line one\nline two\r\n')]);
  await log.append('team/b', [text(2)]);
  expect((await log.read('a', 0)).map((e) => (e.kind === 'text' ? e.text : ''))).toEqual(['line one\nline two\r\n']);
  expect(await log.read('team/b', 0)).toHaveLength(1);
  expect(await log.read('nobody', 0)).toEqual([]);
  expect(await log.remove('a')).toBe(true);
  expect(await log.read('a', 0)).toEqual([]);
  expect(await log.remove('a')).toBe(false);
});

test('a line still being written (no newline yet) is not read until it is complete', async () => {
  const dir = freshDir();
  const log = new RecordLog(new LocalLineStore(dir));
  await log.append('t', [text(1)]);
  const [file] = readdirSync(dir);
  const line = `${JSON.stringify(text(2))}\n`;
  appendFileSync(path.join(dir, file!), line.slice(0, 20));
  expect(await log.read('t', 0)).toHaveLength(1);
  appendFileSync(path.join(dir, file!), line.slice(20));
  expect(await log.read('t', 0)).toHaveLength(2);
});

test('with encryption keys, lines are sealed: no text at rest, unreadable as another task, and a planted plain line is not shown', async () => {
  const dir = freshDir();
  const keyring = createKeyring([{ id: 'k1', key: Buffer.alloc(32, 7) }]);
  const log = new RecordLog(new LocalLineStore(dir), keyring);
  await log.append('t', [text(1, 'confidential-model-words')]);
  const [file] = readdirSync(dir);
  expect(readFileSync(path.join(dir, file!), 'utf8')).not.toContain('confidential');
  expect(await log.read('t', 0)).toMatchObject([{ kind: 'text', text: 'confidential-model-words' }]);
  // Someone who can write the folder appends a plain line, and copies the sealed line under another task.
  appendFileSync(path.join(dir, file!), `${JSON.stringify(text(2, 'forged'))}\n`);
  expect(await log.read('t', 0)).toHaveLength(1);
  const sealed = readFileSync(path.join(dir, file!), 'utf8').split('\n')[0]!;
  await new LocalLineStore(dir).append('other', [sealed]);
  expect(await log.read('other', 0)).toEqual([]);
  // Without the keys, a reader gets neither the sealed text nor its ciphertext as text: only the plain line.
  expect(await new RecordLog(new LocalLineStore(dir)).read('t', 0)).toMatchObject([{ kind: 'text', text: 'forged' }]);
});
