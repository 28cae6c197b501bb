/**
 * Steering a running task: an interrupt (or a message, under the agent's `interrupt` policy for
 * messages that arrive while it is busy) cancels the model call in flight and the model is called
 * again with the message. A running tool is never cancelled: a message that arrives then waits for
 * the next model call, as it always did.
 */
import { ActivityFailure, CancellationScope, isCancellation } from '@temporalio/workflow';

export class Steering {
  /**
   * The scope model calls run in, one for every call until an interrupt cancels it: a scope costs
   * the workflow five promises to make and two to enter, and every turn pays for what it creates.
   */
  private scope: CancellationScope | undefined;
  private inFlight = false;
  private cancelled: CancellationScope | undefined;
  /**
   * Set for a call the task does not wait for once interrupted (no token or cost budget): an interrupt calls it to start the next call at once, while the cancelled one stops
   * on the worker and reports its cost later. Cleared when the call settles.
   */
  onInterrupt: (() => void) | undefined;
  /** Interrupted calls the task went on without, whose cost the worker has yet to report. */
  unsettled = 0;

  /** Starts the model call where an interrupt can cancel it (no command unless one does). */
  run<T>(call: () => Promise<T>): Promise<T> {
    this.scope ??= new CancellationScope({ cancellable: true });
    this.inFlight = true;
    return this.scope.run(call);
  }

  /** The model call ended (answered or failed): nothing is in flight for an interrupt to cancel. */
  settled(): void {
    this.inFlight = false;
    this.onInterrupt = undefined;
  }

  /**
   * The model call answered. An interrupted call is waited for, and may answer all the same (it
   * finished before the worker saw the cancellation): the interrupt is spent.
   */
  answered(): void {
    this.inFlight = false;
    this.cancelled = undefined;
    this.onInterrupt = undefined;
  }

  /**
   * Whether `err` ended the model call because an interrupt cancelled it (the task itself goes on).
   * The call is waited for until the worker stops it, so it may also have failed or timed out while
   * being cancelled (its worker gone): it ended because of the interrupt all the same.
   */
  interrupted(err: unknown): boolean {
    const cancelled = this.cancelled;
    this.cancelled = undefined;
    const ended = isCancellation(err) || err instanceof ActivityFailure;
    return cancelled !== undefined && ended && !CancellationScope.current().consideredCancelled;
  }

  /** Cancels the model call in flight; false when none is (the message waits for the next call). */
  interrupt(): boolean {
    if (!this.inFlight || !this.scope) return false;
    this.cancelled = this.scope;
    this.inFlight = false;
    // A cancelled scope stays cancelled: the next call gets a new one.
    this.scope = undefined;
    this.cancelled.cancel();
    const detached = this.onInterrupt;
    this.onInterrupt = undefined;
    if (detached) {
      // The task goes on without the cancelled call: it settles later, apart (model-call.ts).
      this.cancelled = undefined;
      this.unsettled += 1;
      detached();
    }
    return true;
  }
}
