/**
 * The calls this process is running, written where the other workers on this machine can read them
 * (one file per call, holding its task token): if this process is SIGKILLed, another worker finds
 * them and fails them on its behalf (dead-worker-watch.ts), so they are retried at once instead of
 * after the heartbeat timeout. A call is written only once it has run for RECORD_AFTER_MS: most
 * calls end sooner (a fast tool, a cached read), and writing and removing a file for each of them
 * cost a worker running 1,000 tasks about 5 ms of CPU a task. The writes are synchronous (a few
 * microseconds into the page cache, no promise or file handle per call) and not fsynced: a SIGKILL
 * keeps what was written, and a machine that crashed takes its watchers with it.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { currentProcess, type ProcessIdentity } from './process-liveness';

export const OWNER_FILE = 'owner.json';
export const CALL_SUFFIX = '.call';

/** A call killed sooner than this after it started is left to the heartbeat timeout (3 s). */
export const RECORD_AFTER_MS = 100;

/** One running call as recorded: enough for another worker to fail this attempt, and to say what it was. */
export interface RecordedCall {
  /** The attempt's task token, base64. */
  taskToken: string;
  activityType: string;
  attempt: number;
}

/** A running call as the activity knows it; encoded into a RecordedCall only if it is written. */
export interface RunningCall {
  taskToken: Uint8Array;
  activityType: string;
  attempt: number;
}

export class InFlightCalls {
  /** This process's folder: `<namespace folder>/<pid>-<random>`, made at the first call written. */
  readonly dir: string;
  private ready: boolean | undefined;
  private seq = 0;
  private closed = false;

  constructor(
    namespaceDir: string,
    private readonly warn: (message: string) => void,
    readonly owner: ProcessIdentity = currentProcess(),
    private readonly recordAfterMs = RECORD_AFTER_MS,
  ) {
    this.dir = path.join(namespaceDir, `${owner.pid}-${randomBytes(4).toString('hex')}`);
  }

  /**
   * Records a running call once it has run for `recordAfterMs`; the returned function forgets it. A
   * call that could not be written (a full disk, a read-only folder) is simply not recorded: its
   * worker's death is then noticed by the heartbeat timeout, as without this record.
   */
  track(call: RunningCall): () => void {
    let file: string | undefined;
    const timer = setTimeout(() => {
      file = this.write(call);
    }, this.recordAfterMs);
    timer.unref();
    return () => {
      clearTimeout(timer);
      if (file) removeQuietly(file);
    };
  }

  /** Runs every non-local activity attempt under track (a local activity has no task token of its own to fail). */
  interceptor(): ActivityInterceptorsFactory {
    return (ctx) => ({
      inbound: {
        execute: async (input, next) => {
          if (ctx.info.isLocal) return next(input);
          const forget = this.track(ctx.info);
          try {
            return await next(input);
          } finally {
            forget();
          }
        },
      },
    });
  }

  /** Removes the folder: a worker that stopped in order leaves nothing to fail. */
  close(): void {
    this.closed = true;
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** The call's file, or undefined when nothing was written. */
  private write({ taskToken, activityType, attempt }: RunningCall): string | undefined {
    if (this.closed || !this.open()) return undefined;
    const file = path.join(this.dir, `${++this.seq}${CALL_SUFFIX}`);
    const recorded: RecordedCall = { taskToken: Buffer.from(taskToken).toString('base64'), activityType, attempt };
    try {
      writeFileSync(file, JSON.stringify(recorded), { mode: 0o600 });
      return file;
    } catch {
      return undefined;
    }
  }

  private open(): boolean {
    if (this.ready === undefined) {
      try {
        mkdirSync(this.dir, { recursive: true, mode: 0o700 });
        writeFileSync(path.join(this.dir, OWNER_FILE), JSON.stringify(this.owner), { mode: 0o600 });
        this.ready = true;
      } catch (err) {
        this.warn(`cannot record running calls in ${this.dir} (${(err as Error).message}): a call of this worker, if it dies, is retried after the heartbeat timeout`);
        this.ready = false;
      }
    }
    return this.ready;
  }
}

function removeQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // Already gone (the folder was closed): nothing to forget.
  }
}
