/**
 * The one heartbeat helper of the activities: a timer keeps an activity alive (a dead worker is
 * noticed within the heartbeat timeout, a cancellation is delivered on ctx.cancellationSignal), and
 * the details an activity reports (a tool's progress, a model's streamed answer) survive the timer,
 * and for a tool a retry too.
 */
import { Context } from '@temporalio/activity';
import { releaseDeadWorkersRun } from './sticky-release';

/** How often the timer beats, as a share of the heartbeat timeout: three chances per timeout. */
const BEATS_PER_TIMEOUT = 3;
const MIN_INTERVAL_MS = 200;

/**
 * The timer's interval for a heartbeat timeout. The worker's maxHeartbeatThrottleInterval is set to
 * it (plugin.ts): the SDK otherwise holds beats back for 80% of the timeout, so a 1 s timeout would
 * see one beat every 0.8 s, and a beat 0.2 s late would time a live call out.
 */
export function heartbeatIntervalMs(timeoutMs: number): number {
  return Math.max(MIN_INTERVAL_MS, timeoutMs / BEATS_PER_TIMEOUT);
}

export interface Heartbeats {
  /** Records the details to keep and sends them now; a bare beat() only says "alive" and keeps what was reported. */
  beat(details?: unknown): void;
  /** Records the details the timer sends next, without a heartbeat of its own (a model's progress, reported per token). */
  note(details: unknown): void;
  /** What the last attempt reported (Temporal hands the last heartbeat's details to the next attempt), undefined on a first attempt. */
  previous: unknown;
}

export interface HeartbeatOptions {
  /**
   * Whether the timer re-sends the previous attempt's details until new ones are reported (default
   * true: a tool resumes from them). False for a model call, whose progress starts afresh each attempt.
   */
  keepPrevious?: boolean;
}

/**
 * Runs `work` while heartbeating. The timer re-sends the last details given, never an empty
 * heartbeat: an empty one would replace the tool's details, and the next attempt would start from
 * nothing. Until the tool beats, the previous attempt's details are the ones re-sent, so an attempt
 * that dies before reporting progress does not erase the progress of the one before it.
 */
export async function withHeartbeats<T>(ctx: Context, work: (beat: Heartbeats['beat'], previous: unknown, heartbeats: Heartbeats) => Promise<T>, options: HeartbeatOptions = {}): Promise<T> {
  const previous: unknown = ctx.info.heartbeatDetails;
  let last: unknown = options.keepPrevious === false ? undefined : previous;
  const send = () => ctx.heartbeat(last);
  const note = (details: unknown) => {
    last = details;
  };
  const beat = (details?: unknown) => {
    if (details !== undefined) last = details;
    send();
  };
  const timeoutMs = ctx.info.heartbeatTimeoutMs;
  // Local activities have no heartbeat timeout (and no server to beat to).
  const timer = timeoutMs && !ctx.info.isLocal ? setInterval(send, heartbeatIntervalMs(timeoutMs)) : undefined;
  // A retry after a dead worker sends the task's next step past that worker's sticky queue; it runs
  // beside the work and is awaited before the result goes back (the result schedules the step).
  const release = releaseDeadWorkersRun(ctx);
  try {
    const result = await work(beat, previous, { beat, note, previous });
    await release;
    return result;
  } finally {
    clearInterval(timer);
  }
}

type Activity = (input: never) => Promise<unknown>;

/**
 * An activity that beats on the timer while it runs: new tasks schedule the short activities with a
 * heartbeat timeout (shortActivityOptions), so a slow one (listing MCP servers, reading the store)
 * must beat or it would time out.
 */
export function keepAlive<A extends Activity>(activity: A): A {
  return ((input: never) => withHeartbeats(Context.current(), () => activity(input))) as A;
}
