/**
 * Follows a task's live output from an offset until the task closes: reads what is there, then
 * polls. The offsets make a resumed subscription exact: start from the last event's offset + 1.
 * The stream is one task's (its id and first run): a later task under the same id is not followed.
 */
import type { LiveOutputEvent } from '../protocol/live-output';
import type { LiveOutputLog, LiveStream } from './live-output-log';

export interface FollowOptions {
  /** The first offset wanted (the last event seen + 1). Default 0: from the task's first output. */
  from?: number;
  /** Whether this task (this stream's, not a later one under its id) still runs; following ends once it does not and its output is read to the end. */
  isOpen(): Promise<boolean>;
  /** Stops following (the iteration then ends). */
  signal?: AbortSignal;
  /** How often an idle log is read again. Default 25 ms: the wait a subscriber adds to a token. */
  pollMs?: number;
  /** How often an idle follower asks whether the task still runs. Default 1 s. */
  openCheckMs?: number;
}

export async function* followLiveOutput(log: LiveOutputLog, stream: LiveStream, options: FollowOptions): AsyncGenerator<LiveOutputEvent> {
  let from = Math.max(0, Math.floor(options.from ?? 0));
  const pollMs = options.pollMs ?? 25;
  const openCheckMs = options.openCheckMs ?? 1_000;
  let checkedAt = Date.now();
  let closed = false;
  while (!options.signal?.aborted) {
    const page = await log.read(stream, from);
    for (const event of page) {
      yield event;
      from = event.offset + 1;
    }
    if (page.length > 0) continue;
    // Read to the end after the task closed: what its last call appended before the close is there.
    if (closed) return;
    if (Date.now() - checkedAt >= openCheckMs) {
      checkedAt = Date.now();
      // A server that cannot say (restarting, unreachable) leaves the task open: the log is read on.
      closed = !(await options.isOpen().catch(() => true));
      if (closed) continue;
    }
    await pause(pollMs, options.signal);
  }
}

function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
  });
}
