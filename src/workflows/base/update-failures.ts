/**
 * How a message handler says no without wedging the task: validators reject by throwing (nothing
 * reaches history); an accepted update whose handler hits something unexpected fails that update
 * (the caller sees why), never the workflow task, which a plain exception would retry forever.
 */
import { ApplicationFailure, isCancellation } from '@temporalio/workflow';

export function rejectIf(problem: string | undefined): void {
  if (problem) throw new Error(problem);
}

export function failAsUpdate<T>(handler: () => T): T {
  try {
    return handler();
  } catch (err) {
    throw asUpdateFailure(err);
  }
}

export async function failAsUpdateAsync<T>(handler: () => Promise<T>): Promise<T> {
  try {
    return await handler();
  } catch (err) {
    throw asUpdateFailure(err);
  }
}

function asUpdateFailure(err: unknown): unknown {
  if (err instanceof ApplicationFailure || isCancellation(err)) return err;
  return ApplicationFailure.create({ message: `the update could not be applied: ${err instanceof Error ? err.message : String(err)}`, type: 'update_failed', nonRetryable: true });
}
