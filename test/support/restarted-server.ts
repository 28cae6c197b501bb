/**
 * A harness's dev server started again on its state file (after `h.close()`): a client and a worker
 * on the same task queue, bundle and blob store, as a restart of the embedded server leaves them.
 */
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { TaskClient } from '../../src/client/task-client';
import { createDataConverter } from '../../src/codec';
import type { AgentDefinition } from '../../src/agents/define-agent';
import { startDevServer } from '../../src/server/dev-server';
import { createAgentWorker, type AgentWorker, type AgentWorkerOptions } from '../../src/worker/create-worker';
import type { Harness } from './harness';

export interface RestartedServer {
  client: TaskClient;
  worker(agents: AgentDefinition[], options?: Partial<AgentWorkerOptions>): Promise<AgentWorker>;
  close(): Promise<void>;
}

export async function restartServer(h: Harness, dbFile: string, logDir: string): Promise<RestartedServer> {
  const server = await startDevServer({ dbFile, logFile: path.join(logDir, 'after-restart.log') });
  const clientConnection = await Connection.connect({ address: server.address });
  const workerConnection = await NativeConnection.connect({ address: server.address });
  return {
    client: new TaskClient(new Client({ connection: clientConnection, dataConverter: createDataConverter() }), h.taskQueue),
    worker: (agents, options = {}) => createAgentWorker({ agents, connection: workerConnection, namespace: 'default', taskQueue: h.taskQueue, workflowBundle: h.bundle, ...options }),
    async close() {
      await workerConnection.close();
      await clientConnection.close();
      // Nothing reads the state file after this restart: no clean stop (at least 1 s of drain) is owed to it.
      await server.kill();
    },
  };
}
