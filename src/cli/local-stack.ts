/**
 * The embedded default in one process: the Temporal dev server (started unless one already answers
 * on the port), the demo environment, and a worker. Used by `dev` and `demo`.
 */
import path from 'node:path';
import { NativeConnection } from '@temporalio/worker';
import { createPayloadCodecs, encryptionEnabled } from '../codec';
import { startCodecServer, type RunningCodecServer } from '../codec/codec-server';
import { startDevServer, isTemporalServing, type DevServer } from '../server/dev-server';
import { ensureSearchAttributes } from '../server/search-attributes';
import { stateDir } from '../server/state-dir';
import { createAgentWorker, type AgentWorker } from '../worker/create-worker';
import { startDemoEnvironment, type DemoEnvironment } from '../demo/demo-environment';
import { unreachableError } from './connect';

export interface LocalStackOptions {
  port: number;
  uiPort?: number | false;
  /** One queue for the demo agent instead of its own (durable-agent.demo) and the legacy shared one. */
  taskQueue?: string;
  workspaceDir?: string;
  faults?: string[];
  log: (line: string) => void;
}

export interface LocalStack {
  address: string;
  /** Set when this process started the server (and so stops it). */
  server?: DevServer;
  /** True when a server already answered on the port and this process only connected to it. */
  reused: boolean;
  /** With encryption on and a Web UI: the codec server the UI decodes payloads through. */
  codecServer?: RunningCodecServer;
  env: DemoEnvironment;
  worker: AgentWorker;
  /** The explicit queue (options.taskQueue); undefined when the demo agent is on its own derived queue. */
  taskQueue?: string;
  /** Resolves when the worker stops (SIGINT/SIGTERM or stop()). */
  running: Promise<void>;
  stop(): Promise<void>;
}

export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const address = `127.0.0.1:${options.port}`;
  let server: DevServer | undefined;
  let codecServer: RunningCodecServer | undefined;
  if (await isTemporalServing(address)) {
    options.log(`Temporal: reusing the server already running at ${address}`);
    if (encryptionEnabled()) options.log("Encryption: on; for its Web UI, run `durable-agent codec-server` and set it as the UI's codec endpoint");
  } else {
    const dbFile = path.join(stateDir(), 'temporal.db');
    options.log(`Temporal: starting the embedded dev server on ${address} (state: ${path.relative(process.cwd(), dbFile) || dbFile})`);
    const uiPort = options.uiPort ?? false;
    // Encrypted payloads are unreadable in the Web UI unless it decodes them through a codec server with the keys.
    if (uiPort && encryptionEnabled()) {
      codecServer = await startCodecServer({ codecs: createPayloadCodecs(), corsOrigins: [`http://127.0.0.1:${uiPort}`, `http://localhost:${uiPort}`] });
      options.log(`Encryption: on; the Web UI decodes payloads through the codec server at ${codecServer.url}`);
    }
    server = await startDevServer({ port: options.port, uiPort, dbFile, ...(codecServer ? { uiCodecEndpoint: codecServer.url } : {}) }).catch(async (err: unknown) => {
      await codecServer?.close();
      throw err;
    });
  }
  const env = await startDemoEnvironment({
    ...(options.workspaceDir ? { workspaceDir: options.workspaceDir } : {}),
    ...(options.faults ? { faults: options.faults } : {}),
  });
  const connection = await NativeConnection.connect({ address }).catch(async (err: unknown) => {
    // The server answered a moment ago (or was just started): say so in the CLI's terms, exit 4.
    await env.stop();
    await server?.stop();
    await codecServer?.close();
    throw unreachableError(address, 'default', err);
  });
  const attrs = await ensureSearchAttributes(connection, 'default');
  if (attrs.added.length) options.log(`Temporal: registered search attributes ${attrs.added.join(', ')}`);
  const taskQueue = options.taskQueue;
  const worker = await createAgentWorker({ agents: [env.agent], connection, namespace: 'default', ...(taskQueue ? { taskQueue } : {}) });
  const running = worker.run();
  let stopped = false;
  return {
    address,
    reused: !server,
    ...(server ? { server } : {}),
    ...(codecServer ? { codecServer } : {}),
    env,
    worker,
    ...(taskQueue ? { taskQueue } : {}),
    running,
    async stop() {
      if (stopped) return;
      stopped = true;
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running.catch(() => undefined);
      await connection.close();
      await env.stop();
      await server?.stop();
      await codecServer?.close();
    },
  };
}
