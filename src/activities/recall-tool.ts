/**
 * Results kept out of history: a huge one is cut (the model gets the start and how to ask for the
 * rest), and the recall tool reads back a stored result a compacted turn names by its ref.
 */
import type { ToolOutcome } from '../protocol/activity-contracts';
import { isBlobId } from '../protocol/blob-marker';
import { toolError } from '../protocol/tool-error';
import { toApplicationFailure } from './failure';
import type { WorkerResources } from './worker-resources';

/** Keeps a huge result out of history: the model gets the start and how to ask for the rest. */
export function cutIfLarge(outcome: ToolOutcome, maxChars: number): ToolOutcome {
  const text = JSON.stringify(outcome.output) ?? '';
  if (text.length <= maxChars) return outcome;
  const output = {
    cut_result: text.slice(0, maxChars),
    note: `Result cut: the first ${maxChars} of ${text.length} characters are shown (${text.length - maxChars} cut). Ask for the rest with narrower arguments (an offset, a page, a filter).`,
  };
  return outcome.kind === 'flagged' ? { ...outcome, output } : { kind: 'ok', output };
}

/** The recall tool's call: the stored content `ref` names in the task's scope, cut if large. */
export async function recall(worker: Pick<WorkerResources, 'store' | 'withBlobs' | 'maxResultChars'>, input: unknown, scope: string): Promise<ToolOutcome> {
  const ref = (input as { ref?: unknown } | null)?.ref;
  if (!isBlobId(ref)) {
    throw toApplicationFailure({ error: toolError('model', 'invalid_arguments', '`ref` must be the sha256:... ref shown in a compacted result', 'Copy the ref exactly.') }, 1);
  }
  const text = await worker.withBlobs(() => worker.store().get(scope, ref));
  return cutIfLarge({ kind: 'ok', output: { ref, content: text } }, worker.maxResultChars);
}
