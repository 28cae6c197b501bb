/**
 * Where live output waits for its subscribers: an append-only log per task, keyed by the task id
 * and the task's first run (firstExecutionRunId), so a later task that reuses a freed id starts an
 * empty stream of its own and never shows the earlier task's text. Appends come from the worker
 * running the task's model call; reads come from any process (`watch`, the inbox, a TaskClient),
 * polling from an offset. Records are kept as lines in a LineStore (a folder or PostgreSQL, beside
 * the blob store); with encryption keys each line is sealed with them, bound to its task id, its
 * first run and its offset, so model output is no more readable at rest than the blobs are, and a
 * line moved to another task, another task under the same id, or another offset does not open.
 */
import { open as openSealed, seal } from '../blobs/blob-envelope';
import type { Keyring } from '../codec/encryption-keys';
import { LIVE_OUTPUT_KINDS, type LiveOutputEvent, type LiveOutputRecord } from '../protocol/live-output';

/** One task's stream: its id and its first run (what continue-as-new keeps, and a new task under the same id does not). */
export interface LiveStream {
  taskId: string;
  firstRunId: string;
}

export interface LiveOutputLog {
  /** Where it keeps the output, for messages: a folder, or a database without its password. */
  readonly description: string;
  /** Appends the records in order, after everything appended before. */
  append(stream: LiveStream, records: readonly LiveOutputRecord[]): Promise<void>;
  /**
   * Events whose offset is at least `from`, in order, at most `limit` of them. An offset that falls
   * inside an event (the last one seen plus one) starts at the next event.
   */
  read(stream: LiveStream, from: number, limit?: number): Promise<LiveOutputEvent[]>;
  /** Deletes the output of every task that held this id (purge). Returns whether there was any. */
  remove(taskId: string): Promise<boolean>;
  close(): Promise<void>;
}

/** Makes a line once the store knows the offset it will be written at (what a sealed line is bound to). */
export type LineAt = (offset: number) => string;

/** Lines of text per stream, each at an offset that only grows. */
export interface LineStore {
  readonly description: string;
  /** Appends one line per maker, in order; each maker is given the offset its line is written at. */
  append(stream: LiveStream, lines: readonly LineAt[]): Promise<void>;
  /** Complete lines at offsets >= `from` (see LiveOutputLog.read), at most `limit`. */
  read(stream: LiveStream, from: number, limit: number): Promise<{ offset: number; line: string }[]>;
  /** Removes every stream of the task id. */
  remove(taskId: string): Promise<boolean>;
  close(): Promise<void>;
}

/** The most events one read returns by default: a subscriber far behind catches up in pages. */
export const LIVE_OUTPUT_PAGE = 500;

/**
 * The envelope's id for a live output line, with the task id as its scope: a line sealed for one
 * task, for another task that held the same id, or for another offset does not open.
 */
const sealedId = (stream: LiveStream, offset: number): string => `live-output/${stream.firstRunId}/${offset}`;
const SEALED_PREFIX = 's:';

export class RecordLog implements LiveOutputLog {
  readonly description: string;

  constructor(
    private readonly lines: LineStore,
    private readonly keyring?: Keyring,
  ) {
    this.description = lines.description + (keyring ? ' (encrypted)' : '');
  }

  append(stream: LiveStream, records: readonly LiveOutputRecord[]): Promise<void> {
    if (records.length === 0) return Promise.resolve();
    return this.lines.append(
      stream,
      records.map((r) => {
        const json = JSON.stringify(r);
        const keyring = this.keyring;
        return keyring ? (offset: number) => SEALED_PREFIX + seal(keyring, stream.taskId, sealedId(stream, offset), json).toString('base64') : () => json;
      }),
    );
  }

  async read(stream: LiveStream, from: number, limit = LIVE_OUTPUT_PAGE): Promise<LiveOutputEvent[]> {
    const out: LiveOutputEvent[] = [];
    for (const { offset, line } of await this.lines.read(stream, Math.max(0, Math.floor(from)), limit)) {
      const record = this.recordOf(stream, offset, line);
      if (record) out.push({ ...record, offset });
    }
    return out;
  }

  /**
   * A line this log wrote, or undefined: with keys, a line that is not sealed for this task, this
   * first run and this offset (written by someone who can write the folder or table, not by a
   * worker, or moved there from elsewhere) is not shown as the model's output.
   */
  private recordOf(stream: LiveStream, offset: number, line: string): LiveOutputRecord | undefined {
    let json = line;
    if (this.keyring) {
      if (!line.startsWith(SEALED_PREFIX)) return undefined;
      try {
        json = openSealed(this.keyring, Buffer.from(line.slice(SEALED_PREFIX.length), 'base64'), stream.taskId, sealedId(stream, offset)).toString('utf8');
      } catch {
        return undefined;
      }
    }
    try {
      const record = JSON.parse(json) as LiveOutputRecord;
      return typeof record === 'object' && record !== null && (LIVE_OUTPUT_KINDS as readonly string[]).includes(record.kind) ? record : undefined;
    } catch {
      return undefined;
    }
  }

  remove(taskId: string): Promise<boolean> {
    return this.lines.remove(taskId);
  }

  close(): Promise<void> {
    return this.lines.close();
  }
}
