/**
 * Live output lines in a folder: one file per task id (named by its hash: ids never become file
 * names), appended with O_APPEND in one write per batch. An offset is the byte where a line starts,
 * so a reader seeks straight to it; a line still being written (no newline yet) is left for the
 * next read.
 */
import { createHash } from 'node:crypto';
import { appendFile, mkdir, open, rm } from 'node:fs/promises';
import path from 'node:path';
import type { LineStore } from './live-output-log';

/** Bytes read per step: a page of events is rarely more. */
const CHUNK_BYTES = 256 * 1024;

export class LocalLineStore implements LineStore {
  readonly description: string;

  constructor(readonly root: string) {
    this.root = path.resolve(root);
    this.description = `folder ${this.root}`;
  }

  private fileOf(taskId: string): string {
    return path.join(this.root, `${createHash('sha256').update(taskId, 'utf8').digest('hex')}.jsonl`);
  }

  async append(taskId: string, lines: readonly string[]): Promise<void> {
    if (lines.length === 0) return;
    await mkdir(this.root, { recursive: true });
    await appendFile(this.fileOf(taskId), lines.map((l) => `${l.replace(/\n/g, ' ')}\n`).join(''), { flag: 'a' });
  }

  async read(taskId: string, from: number, limit: number): Promise<{ offset: number; line: string }[]> {
    const file = await open(this.fileOf(taskId), 'r').catch((err: NodeJS.ErrnoException) => {
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

  async remove(taskId: string): Promise<boolean> {
    const file = this.fileOf(taskId);
    const existed = await open(file, 'r').then(
      (f) => f.close().then(() => true),
      () => false,
    );
    await rm(file, { force: true });
    return existed;
  }

  async close(): Promise<void> {}
}
