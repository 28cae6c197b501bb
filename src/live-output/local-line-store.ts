/**
 * Live output lines in a folder: a folder per task id and a file per task that held it (its first
 * run), both named by hashes (ids never become file names), appended with O_APPEND in one write per
 * batch. An offset is the byte where a line starts, so a reader seeks straight to it; a line still
 * being written (no newline yet) is left for the next read.
 *
 * A line is made knowing its offset (a sealed line is bound to it): the file's size is read, then
 * the batch is appended. Appends to one stream from this process wait for each other; two
 * processes appending to one stream at the same instant (an attempt still streaming beside its
 * retry, an interrupted call beside the next) can each read the same size, and the batch that
 * lands second is then at other offsets than it was made for: with keys, its lines do not open
 * and are not shown (the view loses them; the answer in history is untouched).
 */
import { mkdir, open, rm } from 'node:fs/promises';
import path from 'node:path';
import { exists, hashName as hash } from '../storage/folder';
import type { LineAt, LineStore, LiveStream } from './live-output-log';

/** Bytes read per step: a page of events is rarely more. */
const CHUNK_BYTES = 256 * 1024;

export class LocalLineStore implements LineStore {
  readonly description: string;

  constructor(readonly root: string) {
    this.root = path.resolve(root);
    this.description = `folder ${this.root}`;
  }

  private folderOf(taskId: string): string {
    return path.join(this.root, hash(taskId));
  }

  private fileOf(stream: LiveStream): string {
    return path.join(this.folderOf(stream.taskId), `${hash(stream.firstRunId)}.jsonl`);
  }

  /** This process's appends, per file: each waits for the one before it. */
  private readonly appending = new Map<string, Promise<void>>();

  append(stream: LiveStream, lines: readonly LineAt[]): Promise<void> {
    if (lines.length === 0) return Promise.resolve();
    const file = this.fileOf(stream);
    const previous = this.appending.get(file) ?? Promise.resolve();
    const next = previous.then(() => this.appendNow(file, lines));
    const settled = next.catch(() => undefined);
    this.appending.set(file, settled);
    void settled.then(() => {
      if (this.appending.get(file) === settled) this.appending.delete(file);
    });
    return next;
  }

  private async appendNow(file: string, lines: readonly LineAt[]): Promise<void> {
    await mkdir(path.dirname(file), { recursive: true });
    const handle = await open(file, 'a');
    try {
      let offset = (await handle.stat()).size;
      const text: string[] = [];
      for (const make of lines) {
        const line = `${make(offset).replace(/\n/g, ' ')}\n`;
        text.push(line);
        offset += Buffer.byteLength(line, 'utf8');
      }
      await handle.write(text.join(''));
    } finally {
      await handle.close();
    }
  }

  async read(stream: LiveStream, from: number, limit: number): Promise<{ offset: number; line: string }[]> {
    const file = await open(this.fileOf(stream), 'r').catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return undefined;
      throw err;
    });
    if (!file) return [];
    try {
      // Reading from the byte before `from` tells whether `from` starts a line (that byte is a newline).
      let position = Math.max(0, from - 1);
      let pending = Buffer.alloc(0);
      let pendingAt = position;
      let skipFirst = from > 0;
      const out: { offset: number; line: string }[] = [];
      while (out.length < limit) {
        const chunk = Buffer.alloc(CHUNK_BYTES);
        const { bytesRead } = await file.read(chunk, 0, CHUNK_BYTES, position);
        if (bytesRead === 0) break;
        position += bytesRead;
        pending = Buffer.concat([pending, chunk.subarray(0, bytesRead)]);
        let start = 0;
        for (let nl = pending.indexOf(10, start); nl !== -1 && out.length < limit; nl = pending.indexOf(10, start)) {
          const offset = pendingAt + start;
          const line = pending.subarray(start, nl).toString('utf8');
          start = nl + 1;
          // The first piece read ends at `from`'s line start (the newline before it) or runs inside an earlier line.
          if (skipFirst) {
            skipFirst = false;
            continue;
          }
          out.push({ offset, line });
        }
        pending = pending.subarray(start);
        pendingAt += start;
      }
      return out;
    } finally {
      await file.close();
    }
  }

  /** Every stream of the id, and the one file of the id that versions before streams were keyed by first run kept. */
  async remove(taskId: string): Promise<boolean> {
    const folder = this.folderOf(taskId);
    const legacy = `${folder}.jsonl`;
    const existed = (await exists(folder)) || (await exists(legacy));
    await rm(folder, { recursive: true, force: true });
    await rm(legacy, { force: true });
    return existed;
  }

  async close(): Promise<void> {}
}
