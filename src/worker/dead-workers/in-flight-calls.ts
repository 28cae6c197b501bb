/**
 * The calls this process is running, written where the other workers on this machine can read them
 * (one file per call, holding its task token): if this process is SIGKILLed, another worker finds
 * them and fails them on its behalf (dead-worker-watch.ts), so they are retried at once instead of
 * after the heartbeat timeout. Nothing here is fsynced: a SIGKILL keeps what was written, and a
 * machine that crashed takes its watchers with it.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, rm, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { currentProcess, type ProcessIdentity } from './process-liveness';

export const OWNER_FILE = 'owner.json';
export const CALL_SUFFIX = '.call';

/** One running call as recorded: enough for another worker to fail this attempt, and to say what it was. */
export interface RecordedCall {
  /** The attempt's task token, base64. */
  taskToken: string;
  activityType: string;
  attempt: number;
}

export class InFlightCalls {
  /** This process's folder: `<namespace folder>/<pid>-<random>`, made at the first call. */
  readonly dir: string;
  private ready: Promise<boolean> | undefined;
  private seq = 0;
  private closed = false;

  constructor(
    namespaceDir: string,
    private readonly warn: (message: string) => void,
    readonly owner: ProcessIdentity = currentProcess(),
  ) {
    this.dir = path.join(namespaceDir, `${owner.pid}-${randomBytes(4).toString('hex')}`);
  }

  /**
   * Records a running call; the returned function forgets it. A call recorded after a failure to
   * write (a full disk, a read-only folder) is simply not recorded: its worker's death is then
   * noticed by the heartbeat timeout, as without this record.
   */
  track(call: RecordedCall): () => Promise<void> {
    const file = path.join(this.dir, `${++this.seq}${CALL_SUFFIX}`);
    const written = this.open()
      .then((ok) => (ok && !this.closed ? writeFile(file, JSON.stringify(call), { mode: 0o600 }).then(() => true) : false))
      .catch(() => false);
    return async () => {
      if (await written) await unlink(file).catch(() => undefined);
    };
  }

  /** Runs every non-local activity attempt under track (a local activity has no task token of its own to fail). */
  interceptor(): ActivityInterceptorsFactory {
    return (ctx) => ({
      inbound: {
        execute: async (input, next) => {
          if (ctx.info.isLocal) return next(input);
          const { taskToken, activityType, attempt } = ctx.info;
          const forget = this.track({ taskToken: Buffer.from(taskToken).toString('base64'), activityType, attempt });
          try {
            return await next(input);
          } finally {
            void forget();
          }
        },
      },
    });
  }

  /** Removes the folder: a worker that stopped in order leaves nothing to fail. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.ready) await this.ready;
    await rm(this.dir, { recursive: true, force: true });
  }

  private open(): Promise<boolean> {
    this.ready ??= (async () => {
      try {
        await mkdir(this.dir, { recursive: true, mode: 0o700 });
        await writeFile(path.join(this.dir, OWNER_FILE), JSON.stringify(this.owner), { mode: 0o600 });
        return true;
      } catch (err) {
        this.warn(`cannot record running calls in ${this.dir} (${(err as Error).message}): a call of this worker, if it dies, is retried after the heartbeat timeout`);
        return false;
      }
    })();
    return this.ready;
  }
}
