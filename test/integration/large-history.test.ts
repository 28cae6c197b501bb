/**
 * A run's history above gRPC's 4 MB default message size, read through TaskClient. The history is
 * made of signals to a task no worker polls (the server records signals without a worker), each
 * about 1 MB of incompressible text, so one page of history is about 6 MB after the codec.
 */
import { randomBytes } from 'node:crypto';
import { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { TaskClient } from '../../src/client/task-client';
import { messageSignal, WORKFLOW_TYPE } from '../../src/protocol/definitions';
import { useHarness } from '../support/harness';

const h = useHarness();

const SIGNALS = 8;
const SIGNAL_CHARS = 1_000_000;

/** A task whose latest run's history is about 6 MB in one page; returns its id. */
async function taskWithSixMegabyteHistory(): Promise<string> {
  const taskId = h.taskId('large-history');
  const handle = await h.client.client.workflow.start(WORKFLOW_TYPE, {
    workflowId: taskId,
    // No worker polls this queue: the run stays at its first workflow task while signals pile up.
    taskQueue: `${h.taskQueue}-no-worker`,
    args: [{ agent: 'demo', prompt: 'never runs', model: { provider: 'scripted', script: 'none.json' } }],
  });
  for (let i = 0; i < SIGNALS; i++) {
    await handle.signal(messageSignal, { by: 'loader', text: randomBytes(SIGNAL_CHARS * 0.75).toString('base64') });
  }
  return taskId;
}

const sizeOf = (history: temporal.api.history.v1.IHistory) => temporal.api.history.v1.History.encode(history).finish().length;

test('TaskClient.connect reads a 6 MB history in full (the receive limit reaches gRPC)', async () => {
  const taskId = await taskWithSixMegabyteHistory();
  const client = await TaskClient.connect({ address: h.server.address, namespace: 'default' });
  try {
    const history = await client.history(taskId);
    expect(sizeOf(history)).toBeGreaterThan(5.5 * 1024 * 1024);
    const signals = (history.events ?? []).filter((e) => e.workflowExecutionSignaledEventAttributes);
    expect(signals).toHaveLength(SIGNALS);
  } finally {
    await client.client.connection.close();
  }
});

// Documents the upstream defect this project works around (client-connection.ts). When this test
// fails, @temporalio/client passes its intended limit to gRPC and the workaround can go.
test('a connection with the SDK defaults still refuses the same history with RESOURCE_EXHAUSTED', async () => {
  const taskId = await taskWithSixMegabyteHistory();
  // No retry interceptor: the default one retries RESOURCE_EXHAUSTED for about 40 s before failing the same way.
  const plain = await Connection.connect({ address: h.server.address, interceptors: [] });
  try {
    const request = { namespace: 'default', execution: { workflowId: taskId } };
    await expect(plain.workflowService.getWorkflowExecutionHistory(request)).rejects.toThrow(/RESOURCE_EXHAUSTED|larger than max/);
  } finally {
    await plain.close();
  }
});
