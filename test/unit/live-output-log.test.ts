/**
 * The live output log's promises, on the folder store: offsets only grow, a read from the last
 * offset + 1 gets exactly what follows, a line still being written is not read, a task's stream is
 * its own (a later task under the same id reads none of it), and with encryption keys a line is
 * sealed for its task, first run and offset (not readable as another task's or at another offset,
 * not forgeable).
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
/** A task's stream: its id and its first run. */
const st = (taskId: string, firstRunId = 'run-1') => ({ taskId, firstRunId });
/** The one stream file in a store's folder. */
const onlyFile = (dir: string): string => {
  const [folder] = readdirSync(dir);
  const [file] = readdirSync(path.join(dir, folder!));
  return path.join(dir, folder!, file!);
};

test('offsets grow with every append, and reading from the last offset + 1 gives exactly the rest', async () => {
  const log = new RecordLog(new LocalLineStore(freshDir()));
  for (let i = 0; i < 30; i += 3) await log.append(st('t-1'), [text(i), text(i + 1), text(i + 2)]);
  const all = await log.read(st('t-1'), 0);
  expect(all.map((e) => (e.kind === 'text' ? e.text : ''))).toEqual(Array.from({ length: 30 }, (_, i) => `piece ${i} `));
  const offsets = all.map((e) => e.offset);
  expect(new Set(offsets).size).toBe(30);
  expect(offsets).toEqual([...offsets].sort((a, b) => a - b));
  for (const cut of [0, 1, 14, 28, 29]) expect(await log.read(st('t-1'), all[cut]!.offset + 1)).toEqual(all.slice(cut + 1));
  // An offset is inclusive: reading from one gets that event first.
  expect((await log.read(st('t-1'), all[7]!.offset))[0]).toEqual(all[7]);
  // Pages: a reader far behind catches up in steps of `limit`.
  expect(await log.read(st('t-1'), 0, 4)).toEqual(all.slice(0, 4));
  expect(await log.read(st('t-1'), all.at(-1)!.offset + 1)).toEqual([]);
});

test('tasks do not share output, text with newlines stays one event, and a task with none reads empty', async () => {
  const log = new RecordLog(new LocalLineStore(freshDir()));
  await log.append(st('a'), [text(1, 'line one\nline two\r\n')]);
  await log.append(st('team/b'), [text(2)]);
  expect((await log.read(st('a'), 0)).map((e) => (e.kind === 'text' ? e.text : ''))).toEqual(['line one\nline two\r\n']);
  expect(await log.read(st('team/b'), 0)).toHaveLength(1);
  expect(await log.read(st('nobody'), 0)).toEqual([]);
  expect(await log.remove('a')).toBe(true);
  expect(await log.read(st('a'), 0)).toEqual([]);
  expect(await log.remove('a')).toBe(false);
});

test('a line still being written (no newline yet) is not read until it is complete', async () => {
  const dir = freshDir();
  const log = new RecordLog(new LocalLineStore(dir));
  await log.append(st('t'), [text(1)]);
  const file = onlyFile(dir);
  const line = `${JSON.stringify(text(2))}\n`;
  appendFileSync(file, line.slice(0, 20));
  expect(await log.read(st('t'), 0)).toHaveLength(1);
  appendFileSync(file, line.slice(20));
  expect(await log.read(st('t'), 0)).toHaveLength(2);
});

test('with encryption keys, lines are sealed: no text at rest, unreadable as another task, and a planted plain line is not shown', async () => {
  const dir = freshDir();
  const keyring = createKeyring([{ id: 'k1', key: Buffer.alloc(32, 7) }]);
  const log = new RecordLog(new LocalLineStore(dir), keyring);
  await log.append(st('t'), [text(1, 'confidential-model-words')]);
  const file = onlyFile(dir);
  expect(readFileSync(file, 'utf8')).not.toContain('confidential');
  expect(await log.read(st('t'), 0)).toMatchObject([{ kind: 'text', text: 'confidential-model-words' }]);
  // Someone who can write the folder appends a plain line, and copies the sealed line under another task.
  appendFileSync(file, `${JSON.stringify(text(2, 'forged'))}\n`);
  expect(await log.read(st('t'), 0)).toHaveLength(1);
  const sealed = readFileSync(file, 'utf8').split('\n')[0]!;
  await new LocalLineStore(dir).append(st('other'), [() => sealed]);
  expect(await log.read(st('other'), 0)).toEqual([]);
  // Without the keys, a reader gets neither the sealed text nor its ciphertext as text: only the plain line.
  expect(await new RecordLog(new LocalLineStore(dir)).read(st('t'), 0)).toMatchObject([{ kind: 'text', text: 'forged' }]);
});

test('a later task under the same id (another first run) streams apart: none of the earlier task output is its', async () => {
  for (const keyring of [undefined, createKeyring([{ id: 'k1', key: Buffer.alloc(32, 7) }])]) {
    const log = new RecordLog(new LocalLineStore(freshDir()), keyring);
    await log.append(st('reused', 'run-first'), [text(1, 'the earlier task said this')]);
    expect(await log.read(st('reused', 'run-second'), 0)).toEqual([]);
    await log.append(st('reused', 'run-second'), [text(2, 'the new task')]);
    expect((await log.read(st('reused', 'run-second'), 0)).map((e) => (e.kind === 'text' ? e.text : ''))).toEqual(['the new task']);
    expect(await log.read(st('reused', 'run-first'), 0)).toHaveLength(1);
    // Purge removes every task that held the id.
    expect(await log.remove('reused')).toBe(true);
    expect(await log.read(st('reused', 'run-first'), 0)).toEqual([]);
    expect(await log.read(st('reused', 'run-second'), 0)).toEqual([]);
  }
});

test('with keys, a sealed line moved to another offset, or into another task that held the same id, does not open', async () => {
  const dir = freshDir();
  const keyring = createKeyring([{ id: 'k1', key: Buffer.alloc(32, 7) }]);
  const log = new RecordLog(new LocalLineStore(dir), keyring);
  await log.append(st('t', 'run-a'), [text(1, 'first'), text(2, 'second')]);
  const file = onlyFile(dir);
  const [first] = readFileSync(file, 'utf8').split('\n');
  // The first line replayed at the end of its own stream: same task and run, another offset.
  appendFileSync(file, `${first}\n`);
  expect((await log.read(st('t', 'run-a'), 0)).map((e) => (e.kind === 'text' ? e.text : ''))).toEqual(['first', 'second']);
  // The same line as the first line of a later task under the same id: same offset (0), another first run.
  await new LocalLineStore(dir).append(st('t', 'run-b'), [() => first!]);
  expect(await log.read(st('t', 'run-b'), 0)).toEqual([]);
});

test('appends from one process to one stream wait for each other: every line is at the offset it was sealed for', async () => {
  const keyring = createKeyring([{ id: 'k1', key: Buffer.alloc(32, 7) }]);
  const log = new RecordLog(new LocalLineStore(freshDir()), keyring);
  await Promise.all(Array.from({ length: 20 }, (_, i) => log.append(st('busy'), [text(i), text(i + 100)])));
  expect(await log.read(st('busy'), 0)).toHaveLength(40);
});
