/**
 * Where live output waits for its subscribers: an append-only log per task id. Appends come from the
 * worker running the task's model call; reads come from any process (`watch`, the inbox, a
 * TaskClient), polling from an offset. Records are kept as lines in a LineStore (a folder or
 * PostgreSQL, beside the blob store); with encryption keys each line is sealed with them, bound to
 * its task id, so model output is no more readable at rest than the blobs are.
 */
import { open as openSealed, seal } from '../blobs/blob-envelope';
import type { Keyring } from '../codec/encryption-keys';
import { LIVE_OUTPUT_KINDS, type LiveOutputEvent, type LiveOutputRecord } from '../protocol/live-output';

export interface LiveOutputLog {
  /** Where it keeps the output, for messages: a folder, or a database without its password. */
  readonly description: string;
  /** Appends the records in order, after everything appended before. */
  append(taskId: string, records: readonly LiveOutputRecord[]): Promise<void>;
  /**
   * Events whose offset is at least `from`, in order, at most `limit` of them. An offset that falls
   * inside an event (the last one seen plus one) starts at the next event.
   */
  read(taskId: string, from: number, limit?: number): Promise<LiveOutputEvent[]>;
  /** Deletes the task's output (purge). Returns whether there was any. */
  remove(taskId: string): Promise<boolean>;
  close(): Promise<void>;
}

/** Lines of text per task id, each at an offset that only grows. */
export interface LineStore {
  readonly description: string;
  append(taskId: string, lines: readonly string[]): Promise<void>;
  /** Complete lines at offsets >= `from` (see LiveOutputLog.read), at most `limit`. */
  read(taskId: string, from: number, limit: number): Promise<{ offset: number; line: string }[]>;
  remove(taskId: string): Promise<boolean>;
  close(): Promise<void>;
}

/** The most events one read returns by default: a subscriber far behind catches up in pages. */
export const LIVE_OUTPUT_PAGE = 500;

/** The envelope's id for a live output line: with the task id as its scope, a line sealed for one task does not open as another's. */
const SEALED_ID = 'live-output';
const SEALED_PREFIX = 's:';

export class RecordLog implements LiveOutputLog {
  readonly description: string;

  constructor(
    private readonly lines: LineStore,
    private readonly keyring?: Keyring,
  ) {
    this.description = lines.description + (keyring ? ' (encrypted)' : '');
  }

  append(taskId: string, records: readonly LiveOutputRecord[]): Promise<void> {
    if (records.length === 0) return Promise.resolve();
    return this.lines.append(
      taskId,
      records.map((r) => {
        const json = JSON.stringify(r);
        return this.keyring ? SEALED_PREFIX + seal(this.keyring, taskId, SEALED_ID, json).toString('base64') : json;
      }),
    );
  }

  async read(taskId: string, from: number, limit = LIVE_OUTPUT_PAGE): Promise<LiveOutputEvent[]> {
    const out: LiveOutputEvent[] = [];
    for (const { offset, line } of await this.lines.read(taskId, Math.max(0, Math.floor(from)), limit)) {
      const record = this.recordOf(taskId, line);
      if (record) out.push({ ...record, offset });
    }
    return out;
  }

  /**
   * A line this log wrote, or undefined: with keys, a line that is not sealed for this task (written
   * by someone who can write the folder or table, not by a worker) is not shown as the model's output.
   */
  private recordOf(taskId: string, line: string): LiveOutputRecord | undefined {
    let json = line;
    if (this.keyring) {
      if (!line.startsWith(SEALED_PREFIX)) return undefined;
      try {
        json = openSealed(this.keyring, Buffer.from(line.slice(SEALED_PREFIX.length), 'base64'), taskId, SEALED_ID).toString('utf8');
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
