/**
 * A Temporal server new enough for upgrade at continue-as-new (server 1.30, from go/versioning-server):
 * built with Go into the project's cache on first use, started in memory on a free loopback port,
 * with the project's search attributes registered. Tests and the deploy benchmark use it only where
 * the embedded dev server (server 1.29.1) lacks the feature they prove.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { connectClient } from '../../src/client/client-connection';
import { TaskClient } from '../../src/client/task-client';
import { createDataConverter } from '../../src/codec';
import { ensureSearchAttributes } from '../../src/server/search-attributes';
import { provisionVersioningServer } from './versioning-server-build';

export { VERSIONING_SERVER_VERSION } from './versioning-server-build';

export interface VersioningServer {
  address: string;
  namespace: string;
  stop(): Promise<void>;
}

export async function startVersioningServer(options: { dynamicConfig?: Record<string, unknown>; readyTimeoutMs?: number } = {}): Promise<VersioningServer> {
  const binary = await provisionVersioningServer();
  const args = Object.entries(options.dynamicConfig ?? {}).flatMap(([key, value]) => ['-dynamic', `${key}=${JSON.stringify(value)}`]);
  const child = spawn(binary, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const { address, namespace } = await readyLine(child, options.readyTimeoutMs ?? 60_000);
  const connection = await Connection.connect({ address });
  const registered = await ensureSearchAttributes(connection, namespace).finally(() => connection.close());
  if (registered.error) {
    child.kill('SIGKILL');
    throw new Error(`versioning server: search attributes not registered: ${registered.error}`);
  }
  return {
    address,
    namespace,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      // Nothing is kept (SQLite in memory), so there is nothing a clean stop would save.
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** A worker connection and a task client on the server's namespace (the client's default queue is unused: callers name theirs). */
export async function connectTo(server: VersioningServer): Promise<{ connection: NativeConnection; client: TaskClient; close(): Promise<void> }> {
  const connection = await NativeConnection.connect({ address: server.address });
  const clientConnection = await connectClient({ address: server.address });
  const client = new TaskClient(new Client({ connection: clientConnection, namespace: server.namespace, dataConverter: createDataConverter() }), 'unused');
  return {
    connection,
    client,
    close: async () => {
      await clientConnection.close();
      await connection.close();
    },
  };
}

function readyLine(child: ChildProcessWithoutNullStreams, timeoutMs: number): Promise<{ address: string; namespace: string }> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`versioning server not ready in ${timeoutMs} ms: ${err.trim().slice(-500)}`));
    }, timeoutMs);
    child.stderr.on('data', (chunk: Buffer) => {
      err = (err + chunk.toString()).slice(-4_000);
    });
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /^ready (\S+) (\S+)$/m.exec(out);
      if (!match) return;
      clearTimeout(timer);
      resolve({ address: match[1]!, namespace: match[2]! });
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`versioning server exited (${code ?? signal}) before it was ready: ${err.trim().slice(-500)}`));
    });
  });
}
