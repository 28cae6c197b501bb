/**
 * One throughput measurement in a process of its own, for `npm run bench -- throughput --against REF`
 * (throughput-against.ts): N tasks at once on one worker of the build this file sits in, against a
 * server someone else started. The same file is copied into the older build's tree, so it uses only
 * what both have: createAgentWorker, TaskClient, the bench agent and that build's own
 * measureThroughput (a harness needs only client, taskId and worker for it).
 *
 *   tsx bench/throughput-run.ts ADDRESS TASKS MAX_CACHED_WORKFLOWS
 *
 * Prints one line `THROUGHPUT {json}` (a ThroughputRow and the worker's CPU seconds) and exits.
 */
import { randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import type { Harness } from '../test/support/harness';
import { connectClient } from '../src/client/client-connection';
import { TaskClient } from '../src/client/task-client';
import { createDataConverter } from '../src/codec';
import { createAgentWorker } from '../src/worker/create-worker';
import { measureThroughput } from './throughput';

async function main(): Promise<void> {
  const [address, tasks, cache] = process.argv.slice(2);
  if (!address || !tasks || !cache) throw new Error('usage: throughput-run.ts ADDRESS TASKS MAX_CACHED_WORKFLOWS');
  // ERROR only, as the tests' quiet runtime: a warning per task would cost the run its own time.
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const [connection, clientConnection] = await Promise.all([NativeConnection.connect({ address }), connectClient({ address })]);
  const taskQueue = `throughput-${randomUUID().slice(0, 8)}`;
  const client = new TaskClient(new Client({ connection: clientConnection, dataConverter: createDataConverter() }), taskQueue);
  // What measureThroughput reads of a harness; each build makes its worker with its own defaults.
  const harness = {
    client,
    taskId: (prefix = 'task') => `${prefix}-${randomUUID().slice(0, 8)}`,
    worker: async (agents: Parameters<typeof createAgentWorker>[0]['agents'], options: Partial<Parameters<typeof createAgentWorker>[0]> = {}) => {
      const worker = await createAgentWorker({ agents, connection, namespace: 'default', taskQueue, ...options });
      cpuFrom = process.cpuUsage();
      return worker;
    },
  } as unknown as Harness;
  // The worker process's CPU (every thread) from its worker's creation to its shutdown: on a busy
  // machine the wall time also counts other processes, its own CPU time far less so.
  let cpuFrom: NodeJS.CpuUsage | undefined;
  try {
    const [row] = await measureThroughput(harness, [Number(tasks)], Number(cache));
    const cpu = process.cpuUsage(cpuFrom);
    console.log(`THROUGHPUT ${JSON.stringify({ ...row, workerCpuSeconds: Number(((cpu.user + cpu.system) / 1e6).toFixed(2)) })}`);
  } finally {
    await clientConnection.close();
    await connection.close();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : err);
    process.exit(1);
  },
);
