/**
 * A task's stored content, as activities and front ends reach it: the task's blob scope (named by
 * the first event of any of its runs) and the arguments a blob marker stands for, hash-checked.
 * Here, beside the history reader, so activities read it without importing the client room.
 */
import type { Client } from '@temporalio/client';
import { resolveValue } from '../blobs/claim-check';
import type { BlobStore } from '../blobs/blob-store';
import { DurableAgentError } from '../errors/durable-agent-error';
import type { Marker } from '../protocol/blob-marker';
import { TaskHistory } from './task-history';

export class StoredArgumentsError extends DurableAgentError {
  readonly code = 'stored_arguments_unreadable';
}

/**
 * The task's blob scope, `<taskId>/<firstExecutionRunId>`: the first event of any run of the task
 * names the chain's first run, so this holds after continue-as-new too.
 */
export async function taskBlobScope(client: Client, taskId: string): Promise<string> {
  const first = (await new TaskHistory(client).firstEvent(taskId))?.workflowExecutionStartedEventAttributes?.firstExecutionRunId;
  if (!first) throw new StoredArgumentsError(`cannot tell the blob scope of task ${taskId}: its history does not name its first run`);
  return `${taskId}/${first}`;
}

/** The stored JSON a marker stands for, after checking it is the content the marker's hash names. */
export async function readStoredArguments(store: BlobStore, scope: string, marker: Marker): Promise<unknown> {
  // A store anyone can write to must not change what a person reads: the id is the content's hash
  // (resolveValue checks it, as the worker does before the call runs).
  return resolveValue(store, scope, marker);
}
