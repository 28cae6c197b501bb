/**
 * The arguments a person approves, as they will run. A call's validated arguments above the claim
 * check's size travel as a blob marker in workflow state (the workflow never holds them); every
 * front end resolves the marker here, from the blob store the workers write to, and checks that the
 * content is the one the marker names (its sha256) before anyone sees it. The approval itself stays
 * bound to the marker, and through it to that hash.
 */
import type { Client } from '@temporalio/client';
import type { BlobStore } from '../blobs/blob-store';
import { isMarker, MARKER_PATTERN, MARKER_PREFIX, type Marker } from '../protocol/blob-marker';
import type { Message } from '../protocol/messages';
import type { ApprovalRecord, ApprovalRequest, TaskStatus } from '../protocol/task';
import { argumentsLine } from './arguments-view';
import { readStoredArguments, StoredArgumentsError, taskBlobScope } from '../history/stored-arguments';

// Their home is src/history (activities read them too); front ends keep importing them from here.
export { readStoredArguments, StoredArgumentsError, taskBlobScope };

/** An approval as a front end shows it: `input` resolved, or why it could not be. */
export type ShownApproval<A extends ApprovalRequest = ApprovalRequest> = A & {
  /** Set when the arguments were stored in the blob store: the marker the task holds (its id is their sha256). */
  storedAs?: Marker;
  /** Why the stored arguments cannot be shown here; `input` is then still the marker. Nobody should approve what they cannot read. */
  argumentsProblem?: string;
};

/**
 * `text` with each stored-arguments reference in it (an event's detail, a notice) replaced by the
 * arguments on one line, shortened to about `maxChars` with every key kept. `read` returns the
 * stored JSON, hash-checked; a reference it cannot read becomes a sentence that says so.
 */
export async function replaceStoredArguments(text: string, read: (marker: Marker) => Promise<unknown>, maxChars = 1_200): Promise<string> {
  if (!text.includes(MARKER_PREFIX)) return text;
  const shown = new Map<string, string>();
  for (const match of text.matchAll(MARKER_PATTERN)) {
    if (shown.has(match[0])) continue;
    const marker: Marker = { $blob: match[1]!, bytes: Number(match[2]) };
    shown.set(
      match[0],
      await read(marker).then(
        (value) => argumentsLine(value, maxChars),
        (err: Error) => `(arguments of ${marker.bytes.toLocaleString('en-US')} characters, not readable here: ${err.message.slice(0, 200)}; read them in the inbox before deciding)`,
      ),
    );
  }
  return text.replace(MARKER_PATTERN, (m) => shown.get(m) ?? m);
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

  /** Scopes by task id: a task's scope never changes, and a live view asks every second. */
  private readonly scopes = new Map<string, Promise<string>>();

  private scopeFor(taskId: string, status?: TaskStatus): Promise<string> {
    if (status?.archive?.scope) return Promise.resolve(status.archive.scope);
    let scope = this.scopes.get(taskId);
    if (!scope) {
      if (this.scopes.size >= 1_000) this.scopes.clear();
      scope = taskBlobScope(this.client, taskId);
      scope.catch(() => this.scopes.delete(taskId));
      this.scopes.set(taskId, scope);
    }
    return scope;
  }

  /** The stored JSON a marker of this task stands for, hash-checked. */
  async read(taskId: string, marker: Marker, status?: TaskStatus): Promise<unknown> {
    const store = this.blobStore();
    if (!store) throw new StoredArgumentsError('no blob store is configured here (DURABLE_AGENT_BLOB_STORE, or --blob-store: the one the workers use)');
    return readStoredArguments(store, await this.scopeFor(taskId, status), marker);
  }

  /** The model's tool calls in these messages with their stored arguments read back (the inbox's transcript). */
  async resolveMessages(taskId: string, messages: Message[]): Promise<Message[]> {
    if (!messages.some((m) => typeof m.content !== 'string' && JSON.stringify(m.content).includes(MARKER_PREFIX))) return messages;
    return Promise.all(
      messages.map(async (m) => {
        if (typeof m.content === 'string') return m;
        const content = await Promise.all(
          (m.content as unknown as Record<string, unknown>[]).map(async (block) => {
            if (block.type !== 'tool_use' || !isMarker(block.input)) return block;
            const input = await this.read(taskId, block.input).catch((err: Error) => `(stored arguments, not readable here: ${err.message.slice(0, 200)})`);
            return { ...block, input };
          }),
        );
        return { ...m, content } as unknown as Message;
      }),
    );
  }

  async resolveStatus(taskId: string, status: TaskStatus): Promise<TaskStatus> {
    const hasMarker =
      [...status.pendingApprovals, ...status.approvals].some((a) => isMarker(a.input) || isMarker((a as ApprovalRecord).editedInput)) || status.events.some((e) => e.detail.includes(MARKER_PREFIX));
    if (!hasMarker) return status;
    const resolve = async <A extends ApprovalRequest>(a: A): Promise<ShownApproval<A>> => {
      const edited = (a as unknown as ApprovalRecord).editedInput;
      if (!isMarker(a.input) && !isMarker(edited)) return a;
      try {
        const out: ShownApproval<A> = { ...a };
        if (isMarker(a.input)) {
          out.input = await this.read(taskId, a.input, status);
          out.storedAs = a.input;
        }
        if (isMarker(edited)) (out as unknown as ApprovalRecord).editedInput = await this.read(taskId, edited, status);
        return out;
      } catch (err) {
        return {
          ...a,
          argumentsProblem: `the arguments (${isMarker(a.input) ? a.input.bytes.toLocaleString('en-US') : '?'} characters) are stored in the blob store and cannot be read here: ${(err as Error).message}`,
        };
      }
    };
    // Events name a call with its arguments too (`approval_requested cancel_order: …`).
    const events = Promise.all(
      status.events.map(async (e) => (e.detail.includes(MARKER_PREFIX) ? { ...e, detail: await replaceStoredArguments(e.detail, (m) => this.read(taskId, m, status), 600) } : e)),
    );
    const [pendingApprovals, approvals] = await Promise.all([Promise.all(status.pendingApprovals.map(resolve)), Promise.all(status.approvals.map(resolve))]);
    return { ...status, pendingApprovals, approvals, events: await events };
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
