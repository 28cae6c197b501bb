/**
 * The arguments a person approves, as they will run. A call's validated arguments above the claim
 * check's size travel as a blob marker in workflow state (the workflow never holds them); every
 * front end resolves the marker here, from the blob store the workers write to, and checks that the
 * content is the one the marker names (its sha256) before anyone sees it. The approval itself stays
 * bound to the marker, and through it to that hash.
 */
import type { Client } from '@temporalio/client';
import { blobIdOf } from '../blobs/blob-id';
import type { BlobStore } from '../blobs/blob-store';
import { isMarker, type Marker } from '../protocol/blob-marker';
import type { ApprovalRecord, ApprovalRequest, TaskStatus } from '../protocol/task';

/** An approval as a front end shows it: `input` resolved, or why it could not be. */
export type ShownApproval<A extends ApprovalRequest = ApprovalRequest> = A & {
  /** Set when the arguments were stored in the blob store: the marker the task holds (its id is their sha256). */
  storedAs?: Marker;
  /** Why the stored arguments cannot be shown here; `input` is then still the marker. Nobody should approve what they cannot read. */
  argumentsProblem?: string;
};

export class StoredArgumentsError extends Error {
  override readonly name = 'StoredArgumentsError';
}

/**
 * The task's blob scope, `<taskId>/<firstExecutionRunId>`: the first event of any run of the task
 * names the chain's first run, so this holds after continue-as-new too.
 */
export async function taskBlobScope(client: Client, taskId: string): Promise<string> {
  const page = await client.workflowService.getWorkflowExecutionHistory({
    namespace: client.options.namespace,
    execution: { workflowId: taskId },
    maximumPageSize: 1,
  });
  const first = page.history?.events?.[0]?.workflowExecutionStartedEventAttributes?.firstExecutionRunId;
  if (!first) throw new StoredArgumentsError(`cannot tell the blob scope of task ${taskId}: its history does not name its first run`);
  return `${taskId}/${first}`;
}

/** The stored JSON a marker stands for, after checking it is the content the marker's hash names. */
export async function readStoredArguments(store: BlobStore, scope: string, marker: Marker): Promise<unknown> {
  const text = await store.get(scope, marker.$blob);
  // A store anyone can write to must not change what a person reads: the id is the content's hash.
  if (blobIdOf(text) !== marker.$blob) throw new StoredArgumentsError(`the stored arguments do not match their hash ${marker.$blob}: the blob store was altered`);
  return JSON.parse(text);
}

/**
 * Resolves the stored arguments of a task's approvals (pending and decided, and edited arguments),
 * reading the blob store only when there is a marker. Without a store, or when a read fails, the
 * approval keeps its marker and says why in `argumentsProblem`.
 */
export class ApprovalArguments {
  private opened?: BlobStore;

  /** `store`: the blob store, or how to open it (on the first marker: most statuses hold none). */
  constructor(
    private readonly client: Client,
    private readonly store: BlobStore | (() => BlobStore) | undefined,
  ) {}

  private blobStore(): BlobStore | undefined {
    if (typeof this.store !== 'function') return this.store;
    return (this.opened ??= this.store());
  }

  /** Closes a store this object opened (one passed in stays open). */
  async close(): Promise<void> {
    await this.opened?.close();
    this.opened = undefined;
  }

  async resolveStatus(taskId: string, status: TaskStatus): Promise<TaskStatus> {
    const hasMarker = [...status.pendingApprovals, ...status.approvals].some((a) => isMarker(a.input) || isMarker((a as ApprovalRecord).editedInput));
    if (!hasMarker) return status;
    let scope: Promise<string> | undefined;
    const scopeOf = () => (scope ??= status.archive?.scope ? Promise.resolve(status.archive.scope) : taskBlobScope(this.client, taskId));
    const resolve = async <A extends ApprovalRequest>(a: A): Promise<ShownApproval<A>> => {
      const edited = (a as unknown as ApprovalRecord).editedInput;
      if (!isMarker(a.input) && !isMarker(edited)) return a;
      try {
        const store = this.blobStore();
        if (!store) throw new StoredArgumentsError('no blob store is configured here (DURABLE_AGENT_BLOB_STORE, or --blob-store: the one the workers use)');
        const out: ShownApproval<A> = { ...a };
        if (isMarker(a.input)) {
          out.input = await readStoredArguments(store, await scopeOf(), a.input);
          out.storedAs = a.input;
        }
        if (isMarker(edited)) (out as unknown as ApprovalRecord).editedInput = await readStoredArguments(store, await scopeOf(), edited);
        return out;
      } catch (err) {
        return { ...a, argumentsProblem: `the arguments (${isMarker(a.input) ? a.input.bytes.toLocaleString('en-US') : '?'} characters) are stored in the blob store and cannot be read here: ${(err as Error).message}` };
      }
    };
    const [pendingApprovals, approvals] = await Promise.all([Promise.all(status.pendingApprovals.map(resolve)), Promise.all(status.approvals.map(resolve))]);
    return { ...status, pendingApprovals, approvals };
  }
}

/** The problem an approval carries, if a front end could not resolve its arguments. */
export function argumentsProblemOf(a: ApprovalRequest): string | undefined {
  return (a as ShownApproval).argumentsProblem;
}

/** The marker an approval's arguments were stored under, if they were. */
export function storedAsOf(a: ApprovalRequest): Marker | undefined {
  return (a as ShownApproval).storedAs;
}
