/**
 * Reads what a task's runs put into Temporal's history: every run in order, each payload's size as
 * the application sees it (decompressed), and bytes per turn (a turn starts where a callModel
 * activity is scheduled).
 */
import { gunzipSync } from 'node:zlib';
import { temporal } from '@temporalio/proto';
import type { TaskClient } from '../../src/client/task-client';

type History = temporal.api.history.v1.IHistory;

export interface RunHistory {
  runId: string;
  history: History;
  historyBytes: number;
}

export async function runsOf(client: TaskClient, taskId: string): Promise<RunHistory[]> {
  const runs: { runId: string; start: number }[] = [];
  for await (const execution of client.client.workflow.list({ query: `WorkflowId = '${taskId}'` })) {
    runs.push({ runId: execution.runId, start: execution.startTime.getTime() });
  }
  runs.sort((a, b) => a.start - b.start);
  const out: RunHistory[] = [];
  for (const run of runs) {
    const handle = client.client.workflow.getHandle(taskId, run.runId);
    const history = await handle.fetchHistory();
    const historyBytes = temporal.api.history.v1.History.encode(history as temporal.api.history.v1.History).finish().length;
    out.push({ runId: run.runId, history, historyBytes });
  }
  return out;
}

function decodedSize(payload: { metadata?: Record<string, Uint8Array> | null; data?: Uint8Array | null }): number {
  const encoding = Buffer.from(payload.metadata?.encoding ?? []).toString();
  const data = payload.data ?? new Uint8Array();
  return encoding === 'binary/gzip' ? gunzipSync(data).length : data.length;
}

/** Every payload in an object tree (event attributes), by its decompressed size. */
function payloadSizes(node: unknown, sizes: number[]): void {
  if (!node || typeof node !== 'object') return;
  if (node instanceof Uint8Array) return;
  const n = node as Record<string, unknown>;
  if (n.data instanceof Uint8Array && n.metadata && typeof n.metadata === 'object') {
    sizes.push(decodedSize(n as never));
    return;
  }
  for (const value of Object.values(n)) payloadSizes(value, sizes);
}

export function largestPayload(history: History): number {
  const sizes: number[] = [];
  payloadSizes(history.events, sizes);
  return Math.max(0, ...sizes);
}

/** Encoded bytes of history per turn, across runs in order. */
export function bytesPerTurn(runs: RunHistory[]): number[] {
  const turns: number[] = [];
  for (const run of runs) {
    for (const event of run.history.events ?? []) {
      const scheduled = event.activityTaskScheduledEventAttributes;
      if (scheduled?.activityType?.name === 'callModel') turns.push(0);
      if (turns.length === 0) continue;
      turns[turns.length - 1]! += temporal.api.history.v1.HistoryEvent.encode(event as temporal.api.history.v1.HistoryEvent).finish().length;
    }
  }
  return turns;
}
