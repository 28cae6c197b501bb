/**
 * When did the server record a decision sent as a signal? A signal can wait in history for hours
 * while no worker runs; its proof is judged at the time it was recorded, not when a worker got to
 * it, so an approval made during an outage still counts and a stale proof sent later does not.
 */
import { Context } from '@temporalio/activity';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import type { DecisionReceivedAtInput } from '../protocol/activity-contracts';

/** Pages of history read from the newest event back before giving up (a signal is normally near the end). */
const MAX_PAGES = 20;

export async function decisionReceivedAt({ signal, signature }: DecisionReceivedAtInput): Promise<number | null> {
  const ctx = Context.current();
  const { client } = ctx;
  const task = ctx.info.workflowExecution;
  if (!task) return null;
  const execution = { workflowId: task.workflowId, runId: task.runId };
  let nextPageToken: Uint8Array | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const response = await client.workflowService.getWorkflowExecutionHistoryReverse({
      namespace: ctx.info.namespace,
      execution,
      maximumPageSize: 200,
      ...(nextPageToken ? { nextPageToken } : {}),
    });
    for (const event of response.history?.events ?? []) {
      const signalled = event.workflowExecutionSignaledEventAttributes;
      if (!signalled || signalled.signalName !== signal || !signalled.input?.payloads?.length) continue;
      const request = await decodeFromPayloadsAtIndex<{ proof?: { signature?: unknown } } | null>(client.options.loadedDataConverter, 0, signalled.input.payloads).catch(() => null);
      if (request?.proof?.signature !== signature) continue;
      const time = event.eventTime;
      if (!time) return null;
      return Number(time.seconds ?? 0) * 1000 + Math.floor((time.nanos ?? 0) / 1e6);
    }
    if (!response.nextPageToken?.length) return null;
    nextPageToken = response.nextPageToken;
    ctx.heartbeat();
  }
  return null;
}
