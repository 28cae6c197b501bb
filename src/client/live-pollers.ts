/**
 * Whether the workers a task queue lists are still there. Temporal lists a poller for about five
 * minutes after its last poll, and an idle worker's long poll lasts up to a minute, so the list alone
 * cannot tell a worker killed a moment ago from one waiting for work: a query to the first waits out
 * its whole deadline (`status` took about 6 s). Two cheap checks tell most of them apart:
 * - a poller not seen for longer than a long poll (plus a margin) has stopped polling;
 * - a poller whose identity is the SDK's default `pid@host` on this host is alive only if its process is.
 * A worker on another machine, seen within the last minute, is taken to be there. A worker in a
 * container that shares this host's name but not its process ids would be taken for gone: `status`
 * then shows the memo view (with its note) instead of the live one, nothing worse.
 */
import os from 'node:os';

/** The server holds a poll for up to a minute (matching.longPollExpirationInterval); a poller not seen for longer has stopped. */
export const POLLER_SILENT_AFTER_MS = 75_000;

export interface PollerSeen {
  identity?: string | null;
  /** Seconds and nanoseconds since the epoch, as the API reports them. */
  lastAccessTime?: { seconds?: number | { toNumber(): number } | null; nanos?: number | null } | null;
}

export interface LiveCheck {
  now?: number;
  hostname?: string;
  isProcessAlive?: (pid: number) => boolean;
}

export function isPollerLive(poller: PollerSeen, check: LiveCheck = {}): boolean {
  const now = check.now ?? Date.now();
  const seen = seenAt(poller);
  if (seen !== undefined && now - seen > POLLER_SILENT_AFTER_MS) return false;
  const local = /^(\d+)@(.+)$/.exec(poller.identity ?? '');
  if (local && local[2] === (check.hostname ?? os.hostname())) return (check.isProcessAlive ?? processAlive)(Number(local[1]));
  return true;
}

function seenAt(poller: PollerSeen): number | undefined {
  const t = poller.lastAccessTime;
  if (!t || t.seconds == null) return undefined;
  const seconds = typeof t.seconds === 'number' ? t.seconds : t.seconds.toNumber();
  return seconds * 1000 + Math.floor((t.nanos ?? 0) / 1e6);
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: a process of another user holds the pid; it exists.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
