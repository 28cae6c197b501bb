/**
 * Steering a running task: an interrupt (or a message, under the agent's `interrupt` policy for
 * messages that arrive while it is busy) cancels the model call in flight and the model is called
 * again with the message. A running tool is never cancelled: a message that arrives then waits for
 * the next model call, as it always did.
 */
import { CancellationScope, isCancellation } from '@temporalio/workflow';

export class Steering {
  private modelCall: CancellationScope | undefined;
  private interrupted = false;

  /** Runs the model call where an interrupt can cancel it; undefined when one did (call again). */
  async interruptible<T>(call: () => Promise<T>): Promise<{ reply: T } | undefined> {
    const scope = new CancellationScope({ cancellable: true });
    this.modelCall = scope;
    try {
      return { reply: await scope.run(call) };
    } catch (err) {
      // Only this call was cancelled, by an interrupt: the task itself goes on.
      if (this.interrupted && isCancellation(err) && !CancellationScope.current().consideredCancelled) return undefined;
      throw err;
    } finally {
      this.modelCall = undefined;
      this.interrupted = false;
    }
  }

  /** Cancels the model call in flight; false when none is (the message waits for the next call). */
  interrupt(): boolean {
    if (!this.modelCall || this.interrupted) return false;
    this.interrupted = true;
    this.modelCall.cancel();
    return true;
  }
}
