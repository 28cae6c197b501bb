/**
 * The engine as a Temporal plugin on a real dev server: a Worker made with nothing but
 * `plugins: [durableAgent({ agents })]` runs the scripted demo task to completion (activities,
 * workflow bundle, data converter all from the plugin), a Client made with `durableAgentClient`
 * reads its result, and the finished history replays with the same plugin. Payloads are encrypted,
 * so a Client without the plugin cannot read that result: the client plugin is what decodes it.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Client, type Connection } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { DEMO_PROMPT, DEMO_SCRIPT, createDemoAgent } from '../../src/demo/demo-agent';
import { connectClient } from '../../src/client/client-connection';
import { TaskClient } from '../../src/client/task-client';
import type { CodecOptions } from '../../src/codec';
import type { TaskResult } from '../../src/protocol/task';
import { durableAgent, durableAgentClient } from '../../src/worker/plugin';
import { useHarness } from '../support/harness';

// The plugin's default bundle (with the encoded failure converter) may be built on first use.
jest.setTimeout(240_000);

const codec: CodecOptions = { encryption: { keys: [{ id: 'plugin-test', key: randomBytes(32) }] }, env: {} };

// Closed while the server is up: afterAll hooks run in the order they are declared, the harness's below.
afterAll(async () => {
  await connection?.close();
});
const h = useHarness();
let connection: Connection;
let taskId: string;

beforeAll(async () => {
  connection = await connectClient({ address: h.server.address });
});

function demoPlugin() {
  return durableAgent({ agents: [createDemoAgent({ workspaceDir: h.workspaceDir, ordersUrl: h.orders.url })], codec, blobStore: h.blobStore });
}

test('a Worker with plugins: [durableAgent({ agents })] runs the scripted demo task to completion; a Client with durableAgentClient reads the result', async () => {
  const worker = await Worker.create({ connection: h.connection, namespace: 'default', taskQueue: h.taskQueue, plugins: [demoPlugin()] });
  const client = new Client({ connection, namespace: 'default', plugins: [durableAgentClient({ codec })] });
  taskId = h.taskId('plugin');
  const result = await worker.runUntil(async () => {
    await new TaskClient(client, h.taskQueue).start({ agent: 'demo', prompt: DEMO_PROMPT, model: { provider: 'scripted', script: DEMO_SCRIPT } }, { taskId });
    return client.workflow.getHandle(taskId).result() as Promise<TaskResult>;
  });
  expect(result.outcome).toBe('answered');
  expect(result.text).toContain('outbox/C-9921-shipped.md');
  expect(result.toolCalls).toBeGreaterThanOrEqual(5);
  // The tools ran in this process, on the harness's workspace.
  expect(existsSync(path.join(h.workspaceDir, 'outbox', 'C-9921-shipped.md'))).toBe(true);

  // Without the plugin the same result is an encrypted payload no default converter can read.
  const plain = new Client({ connection, namespace: 'default' });
  await expect(plain.workflow.getHandle(taskId).result()).rejects.toThrow();
});

test('the finished history replays with the same plugin giving the workflow code and the data converter', async () => {
  expect(taskId).toBeDefined();
  const client = new Client({ connection, namespace: 'default', plugins: [durableAgentClient({ codec })] });
  const history = await client.workflow.getHandle(taskId).fetchHistory();
  await expect(Worker.runReplayHistory({ plugins: [demoPlugin()] }, history, taskId)).resolves.toBeUndefined();
});
