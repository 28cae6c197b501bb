/**
 * Does a server dispatch activities eagerly? Runs one bench-agent task on a worker in this process
 * and counts the activity tasks the worker received, split by the SDK's own `eager` label of its
 * `activity_task_received` metric: eager ones came back in a workflow task's response, the others
 * through a poll of the task queue. The SDK's metrics need a Runtime of their own, and a process has
 * one Runtime, so this runs as a child process (`probeEagerDispatch`), used by the overhead bench
 * and by test/integration/dev-server.test.ts.
 *
 *   tsx bench/eager-probe.ts <server address> [turns]   prints {"eager":N,"polled":M}
 */
import { execFile } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { createDataConverter } from '../src/codec';
import { TaskClient } from '../src/client/task-client';
import { createAgentWorker } from '../src/worker/create-worker';
import { createBenchAgent, EchoModel } from './bench-agent';

export interface EagerCounts {
  /** Activity tasks handed to the worker in a workflow task's response. */
  eager: number;
  /** Activity tasks the worker got by polling the task queue. */
  polled: number;
}

/** Runs the probe in a child process against the server at `address`. */
export async function probeEagerDispatch(address: string, turns = 5): Promise<EagerCounts> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--require', 'tsx/cjs', __filename, address, String(turns)], {
    cwd: path.resolve(__dirname, '..'),
    timeout: 120_000,
  });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as EagerCounts;
}

/** Sums `activity_task_received` samples by their `eager` label in a Prometheus text page. */
export function countReceived(page: string): EagerCounts {
  const counts: EagerCounts = { eager: 0, polled: 0 };
  for (const line of page.split('\n')) {
    if (line.startsWith('#') || !line.includes('activity_task_received')) continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (/eager="true"/.test(line)) counts.eager += value;
    else if (/eager="false"/.test(line)) counts.polled += value;
  }
  return counts;
}

async function main(address: string, turns: number): Promise<void> {
  const port = await freePort();
  Runtime.install({ logger: new DefaultLogger('ERROR'), telemetryOptions: { metrics: { prometheus: { bindAddress: `127.0.0.1:${port}` } } } });
  const connection = await NativeConnection.connect({ address });
  const clientConnection = await Connection.connect({ address });
  const taskQueue = `eager-probe-${randomUUID().slice(0, 8)}`;
  try {
    const client = new TaskClient(new Client({ connection: clientConnection, dataConverter: createDataConverter() }), taskQueue);
    // Every tool call through the task queue: the probe counts how activity tasks reach the worker.
    const agent = createBenchAgent({ local: false });
    const worker = await createAgentWorker({ agents: [agent], connection, namespace: 'default', taskQueue, models: { echo: new EchoModel(turns) } });
    await worker.runUntil(async () => {
      const taskId = `eager-probe-${randomUUID().slice(0, 8)}`;
      await client.start({ agent: agent.name, prompt: 'go', model: { provider: 'custom', name: 'echo' } }, { taskId });
      await client.result(taskId);
    });
    const page = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    console.log(JSON.stringify(countReceived(page)));
  } finally {
    await clientConnection.close();
    await connection.close();
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

if (require.main === module) {
  const [address, turns] = process.argv.slice(2);
  if (!address) {
    console.error('usage: tsx bench/eager-probe.ts <server address> [turns]');
    process.exit(2);
  }
  main(address, Number(turns ?? 5)).then(
    () => process.exit(0),
    (err) => {
      console.error(err instanceof Error ? (err.stack ?? err.message) : err);
      process.exit(1);
    },
  );
}
