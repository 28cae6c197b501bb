/**
 * Steering a running task: an interrupt (or a message, under the agent's `interrupt` policy for
 * messages that arrive while it is busy) cancels the model call in flight and the model is called
 * again with the message. A running tool is never cancelled: a message that arrives then waits for
 * the next model call, as it always did.
 */
import { CancellationScope, isCancellation } from '@temporalio/workflow';

export class Steering {
  /**
   * The scope model calls run in, one for every call until an interrupt cancels it: a scope costs
   * the workflow five promises to make and two to enter, and every turn pays for what it creates.
   */
  private scope: CancellationScope | undefined;
  private inFlight = false;
  private cancelled: CancellationScope | undefined;

  /** Starts the model call where an interrupt can cancel it (no command unless one does). */
  run<T>(call: () => Promise<T>): Promise<T> {
    this.scope ??= new CancellationScope({ cancellable: true });
    this.inFlight = true;
    return this.scope.run(call);
  }

  /** The model call ended (answered or failed): nothing is in flight for an interrupt to cancel. */
  settled(): void {
    this.inFlight = false;
  }

  /** Whether `err` ended the model call because an interrupt cancelled it (the task itself goes on). */
  interrupted(err: unknown): boolean {
    const cancelled = this.cancelled;
    this.cancelled = undefined;
    return cancelled !== undefined && isCancellation(err) && !CancellationScope.current().consideredCancelled;
  }

  /** Cancels the model call in flight; false when none is (the message waits for the next call). */
  interrupt(): boolean {
    if (!this.inFlight || !this.scope) return false;
    this.cancelled = this.scope;
    this.inFlight = false;
    // A cancelled scope stays cancelled: the next call gets a new one.
    this.scope = undefined;
    this.cancelled.cancel();
    return true;
  }
}
