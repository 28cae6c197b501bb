/**
 * Heartbeats for an activity that runs a tool or a model call: a timer keeps the activity alive
 * (a dead worker is noticed within the heartbeat timeout, a cancellation is delivered), and a
 * tool's own progress details survive both the timer and a retry.
 */
import type { Context } from '@temporalio/activity';

/** How often the timer beats, as a share of the heartbeat timeout: three chances per timeout. */
const BEATS_PER_TIMEOUT = 3;
const MIN_INTERVAL_MS = 200;

/**
 * Runs `work` while heartbeating. `work` gets `beat(details)`, which records the details the tool
 * wants to survive a crash, and `previous`: what the last attempt reported (Temporal hands back the
 * last heartbeat's details to the next attempt), undefined on a first attempt.
 *
 * The timer re-sends the last details given, never an empty heartbeat: an empty one would replace
 * the tool's details, and the next attempt would start from nothing. Until the tool beats, the
 * previous attempt's details are the ones re-sent, so an attempt that dies before reporting
 * progress does not erase the progress of the one before it.
 */
export async function withHeartbeats<T>(ctx: Context, work: (beat: (details?: unknown) => void, previous: unknown) => Promise<T>): Promise<T> {
  const previous: unknown = ctx.info.heartbeatDetails;
  let last: unknown = previous;
  const send = () => ctx.heartbeat(last);
  const beat = (details?: unknown) => {
    // A bare beat() only says "alive": it keeps what was reported.
    if (details !== undefined) last = details;
    send();
  };
  const timeoutMs = ctx.info.heartbeatTimeoutMs;
  // Local activities have no heartbeat timeout (and no server to beat to).
  const timer = timeoutMs && !ctx.info.isLocal ? setInterval(send, Math.max(MIN_INTERVAL_MS, timeoutMs / BEATS_PER_TIMEOUT)) : undefined;
  try {
    return await work(beat, previous);
  } finally {
    clearInterval(timer);
  }
}
