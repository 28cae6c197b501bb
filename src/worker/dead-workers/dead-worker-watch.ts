/**
 * Watches the other workers' records of running calls (in-flight-calls.ts) on this machine and, when
 * one's process is certainly gone (process-liveness.ts), fails its calls on its behalf, so they are
 * retried now instead of after the heartbeat timeout. The failure says what the heartbeat timeout
 * would have said: a retryable `DeadWorker` failure carrying a transient `timeout` ToolError, which
 * the workflow reads as it reads a heartbeat timeout (the outcome of a write is unknown), and the
 * retry as a dead worker's (sticky-release.ts). The server takes only application failures here.
 * A task token names one attempt: one that already finished, or was already retried, is refused by
 * the server (ActivityNotFoundError) and nothing happens.
 */
import { readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { DEAD_WORKER_FAILURE_TYPE } from '../../activities/sticky-release';
import { toolError } from '../../protocol/tool-error';
import { currentProcess, isProcessIdentity, processGone, type ProcessIdentity } from './process-liveness';
import { CALL_SUFFIX, OWNER_FILE, type RecordedCall } from './in-flight-calls';

/** Fails one attempt by its task token (the client's activity.fail): resolves 'over' when the attempt had already ended. */
export type FailAttempt = (taskToken: Uint8Array, failure: ApplicationFailure) => Promise<'failed' | 'over'>;

const CLAIMED_PREFIX = '.reaping-';
/** A folder without a readable owner this long after it was made, or a claim this old, is left over: by now the heartbeat timeout has settled its calls. */
const LEFTOVER_MS = 60_000;
const ATTEMPTS_PER_CALL = 3;

export interface DeadWorkerWatchOptions {
  /** The folder of this namespace's records (one sub-folder per worker process). */
  namespaceDir: string;
  /** This process's own folder, never watched. */
  ownDir: string;
  fail: FailAttempt;
  /** This worker's identity, named in the failure. */
  identity: string;
  intervalMs: number;
  log: (message: string) => void;
}

export class DeadWorkerWatch {
  private timer: NodeJS.Timeout | undefined;
  private scanning: Promise<number> | undefined;
  private readonly here: ProcessIdentity = currentProcess();
  private readonly owners = new Map<string, ProcessIdentity>();

  constructor(private readonly o: DeadWorkerWatchOptions) {}

  /** Starts the watch with a pass at once: a worker started after another died finds it without waiting. */
  start(): void {
    if (this.timer) return;
    const pass = () => {
      this.scanning ??= this.scan().finally(() => (this.scanning = undefined));
    };
    this.timer = setInterval(pass, this.o.intervalMs);
    // The watch never keeps a process alive on its own.
    this.timer.unref();
    pass();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.scanning?.catch(() => undefined);
  }

  /** One pass over the records; resolves with how many calls of dead workers this pass failed. */
  async scan(): Promise<number> {
    const names = await readdir(this.o.namespaceDir).catch(() => [] as string[]);
    // Workers that stopped in order removed their folders: forget them too.
    for (const known of this.owners.keys()) if (!names.includes(known)) this.owners.delete(known);
    let failed = 0;
    for (const name of names) {
      const dir = path.join(this.o.namespaceDir, name);
      if (dir === this.o.ownDir) continue;
      if (name.startsWith(CLAIMED_PREFIX)) {
        // Another watcher's claim: it fails the calls; one left behind by a watcher that died is removed once old.
        if (await olderThan(dir, LEFTOVER_MS)) await rm(dir, { recursive: true, force: true });
        continue;
      }
      const owner = await this.ownerOf(name, dir);
      if (owner === 'leftover') await rm(dir, { recursive: true, force: true });
      if (!owner || owner === 'leftover' || !processGone(owner, this.here)) continue;
      failed += await this.reap(name, dir, owner);
    }
    return failed;
  }

  private async ownerOf(name: string, dir: string): Promise<ProcessIdentity | 'leftover' | undefined> {
    const known = this.owners.get(name);
    if (known) return known;
    const text = await readFile(path.join(dir, OWNER_FILE), 'utf8').catch(() => undefined);
    const owner = text === undefined ? undefined : parseOwner(text);
    if (owner) {
      this.owners.set(name, owner);
      return owner;
    }
    // Being made right now, or never finished: only an old one is given up.
    return (await olderThan(dir, LEFTOVER_MS)) ? 'leftover' : undefined;
  }

  /** Claims the dead worker's folder (one watcher wins the rename), fails each call it recorded, and removes it. */
  private async reap(name: string, dir: string, owner: ProcessIdentity): Promise<number> {
    this.owners.delete(name);
    const claimed = path.join(this.o.namespaceDir, `${CLAIMED_PREFIX}${name}-${randomBytes(4).toString('hex')}`);
    try {
      await rename(dir, claimed);
    } catch {
      return 0; // another watcher claimed it first
    }
    let failed = 0;
    try {
      const files = (await readdir(claimed)).filter((f) => f.endsWith(CALL_SUFFIX));
      const outcomes = await Promise.all(files.map(async (f) => this.failCall(parseCall(await readFile(path.join(claimed, f), 'utf8').catch(() => '')), owner)));
      failed = outcomes.filter(Boolean).length;
      if (failed > 0) this.o.log(`worker process ${owner.pid} on ${owner.host} is gone: ${failed} of its running call(s) failed on its behalf, to be retried now`);
    } finally {
      await rm(claimed, { recursive: true, force: true });
    }
    return failed;
  }

  /** True when the server took the failure; false when the attempt was already over, or the record unreadable. */
  private async failCall(call: RecordedCall | undefined, owner: ProcessIdentity): Promise<boolean> {
    if (!call) return false;
    const detail = `${call.activityType} (attempt ${call.attempt}) stopped: the worker running it died (process ${owner.pid} on ${owner.host} is gone, seen by ${this.o.identity}).`;
    const failure = ApplicationFailure.create({
      type: DEAD_WORKER_FAILURE_TYPE,
      message: detail,
      details: [toolError('transient', 'timeout', detail, undefined, call.attempt)],
    });
    for (let attempt = 1; ; attempt++) {
      try {
        return (await this.o.fail(Buffer.from(call.taskToken, 'base64'), failure)) === 'failed';
      } catch {
        if (attempt >= ATTEMPTS_PER_CALL) return false;
        await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
      }
    }
  }
}

function parseCall(text: string): RecordedCall | undefined {
  try {
    const v = JSON.parse(text) as RecordedCall;
    const ok = typeof v.taskToken === 'string' && typeof v.activityType === 'string' && Number.isSafeInteger(v.attempt);
    return ok ? v : undefined;
  } catch {
    return undefined;
  }
}

function parseOwner(text: string): ProcessIdentity | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return isProcessIdentity(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

async function olderThan(file: string, ms: number): Promise<boolean> {
  const s = await stat(file).catch(() => undefined);
  return s !== undefined && Date.now() - s.mtimeMs > ms;
}
