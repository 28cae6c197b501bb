/**
 * A model call's live output, on its way to the task's log: deltas are batched for a few
 * milliseconds and appended one batch at a time, in order. The output is advisory (the answer in
 * history is the record), so a log that fails to take it costs the subscribers their view, never
 * the call: the first failure is logged and the rest of that call's output is dropped.
 */
import path from 'node:path';
import { LocalBlobStore } from '../blobs/local-blob-store';
import { RecordLog, type LiveOutputLog } from '../live-output/live-output-log';
import { LocalLineStore } from '../live-output/local-line-store';
import { openLiveOutputLog } from '../live-output/open-live-output-log';
import { encryptionKeyring } from '../codec';
import type { LiveOutputRecord, OutputDelta } from '../protocol/live-output';
import type { ActivityDependencies } from './dependencies';

/** How long deltas wait for company before they are appended: well under what a reader notices. */
const BATCH_MS = 10;
/** The longest a finished call waits for its last output to be appended. */
const END_WAIT_MS = 2_000;

/** The worker's live output log: the one given, none (`false`), beside a given folder store, or beside DURABLE_AGENT_BLOB_STORE. */
export function liveOutputOf(deps: Pick<ActivityDependencies, 'liveOutput' | 'blobStore'>): () => LiveOutputLog | undefined {
  if (deps.liveOutput === false) return () => undefined;
  let log: LiveOutputLog | undefined = deps.liveOutput;
  if (!log && deps.blobStore instanceof LocalBlobStore) log = new RecordLog(new LocalLineStore(path.join(deps.blobStore.root, '~live')), encryptionKeyring());
  return () => (log ??= openLiveOutputLog());
}

export interface LiveCall {
  taskId: string;
  /** The task's first run: its stream's key beside the id (a later task under the same id streams apart). */
  firstRunId: string;
  runId: string;
  callId: string;
  attempt: number;
  model: string;
}

export class LiveOutputWriter {
  private buffer: LiveOutputRecord[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private failed = false;

  constructor(
    private readonly log: LiveOutputLog,
    private readonly call: LiveCall,
    private readonly warn: (message: string) => void,
  ) {
    const { callId, attempt, runId, model } = call;
    this.push({ kind: 'call_started', callId, attempt, retry: attempt > 1, runId, model, at: new Date().toISOString() });
  }

  delta(d: OutputDelta): void {
    const { callId, attempt } = this.call;
    if (d.type === 'text') this.push({ kind: 'text', callId, attempt, block: d.block, text: d.text });
    else if (d.type === 'tool_use') this.push({ kind: 'tool_use', callId, attempt, block: d.block, name: d.name, toolUseId: d.toolUseId });
    else this.push({ kind: 'tool_input', callId, attempt, block: d.block, json: d.json });
  }

  /** The call's end: everything buffered is appended before this resolves. */
  async end(outcome: { stopReason?: string; error?: string }): Promise<void> {
    const { callId, attempt } = this.call;
    this.push({ kind: 'call_ended', callId, attempt, ...outcome });
    this.flush();
    // A log that hangs must not hold the answer back; what did not get there by then is dropped.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.writing, new Promise<void>((resolve) => (timer = setTimeout(resolve, END_WAIT_MS)))]);
    clearTimeout(timer);
  }

  private push(record: LiveOutputRecord): void {
    if (this.failed) return;
    this.buffer.push(record);
    this.timer ??= setTimeout(() => this.flush(), BATCH_MS);
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.buffer.length === 0 || this.failed) return;
    const batch = this.buffer;
    this.buffer = [];
    this.writing = this.writing.then(() =>
      this.log.append({ taskId: this.call.taskId, firstRunId: this.call.firstRunId }, batch).catch((err: unknown) => {
        this.failed = true;
        this.warn(`live output of ${this.call.taskId} stopped (${this.log.description}): ${err instanceof Error ? err.message : String(err)}`);
      }),
    );
  }
}
