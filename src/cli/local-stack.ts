/**
 * The embedded default in one process: the Temporal dev server (started unless one already answers
 * on the port), the demo environment, and a worker. Used by `dev` and `demo`.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { NativeConnection } from '@temporalio/worker';
import { createPayloadCodecs, encryptionEnabled } from '../codec';
import { startCodecServer, type RunningCodecServer } from '../codec/codec-server';
import { startDevServer, isPortOpen, isTemporalServing, type DevServer } from '../server/dev-server';
import { ensureSearchAttributes } from '../server/search-attributes';
import { stateDir } from '../server/state-dir';
import { createAgentWorker, type AgentWorker } from '../worker/create-worker';
import { versioningFromEnvironment } from '../worker/versioning';
import { startDemoEnvironment, type DemoEnvironment } from '../demo/demo-environment';
import { connectWhenReady } from './connect';
import { CliError, EXIT } from './cli-error';

/**
 * The deployment of the dev stack's worker (`dev`, `demo`): its own, beside DEFAULT_DEPLOYMENT_NAME
 * (src/worker/versioning.ts), where `durable-agent worker --agents FILE` puts a user's agents. The
 * server routes each queue to the deployment that last made a build current for it, and dev makes
 * its build current at every start (bootstrap 'always'): in the user's deployment it would take the
 * user's worker's place. In its own, it serves only the demo agent's queue (docs/own-agents.md).
 */
export const DEV_DEPLOYMENT_NAME = 'durable-agent-dev';

export interface LocalStackOptions {
  port: number;
  uiPort?: number | false;
  /** One queue for the demo agent instead of its own (durable-agent.demo). */
  taskQueue?: string;
  workspaceDir?: string;
  faults?: string[];
  /**
   * What to do when something already listens on the port: `true` uses it (waiting, bounded, for a
   * server that is still starting); `false` refuses (exit 1), since a server this process did not
   * start may hold another project's tasks. `dev` refuses unless --reuse; `demo` reuses.
   */
  reuse: boolean;
  /** The verb, for the lines that say a server is waited for. Default "dev". */
  verb?: string;
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
  const earlier = await earlierDevServer(options.port);
  if (await isPortOpen(address)) {
    if (earlier)
      options.log(
        earlier.ownerAlive
          ? `Temporal: the server on port ${options.port} is the one the ${earlier.verb} running here as pid ${earlier.owner} started (server pid ${earlier.pid})`
          : `Temporal: the server on port ${options.port} is the one an earlier ${earlier.verb} here started and left running (server pid ${earlier.pid})`,
      );
    else if (!options.reuse) {
      const what = (await isTemporalServing(address)) ? 'a Temporal server' : 'something that is not (yet) a Temporal server';
      throw new CliError(`Port ${options.port} already holds ${what} that this command did not start. Use it with --reuse, or choose another port with --port N (README: "Ports").`, EXIT.failed);
    }
    // A server that is still starting answers on its port before it serves: wait for it, bounded.
    await connectWhenReady(
      async () => {
        if (!(await isTemporalServing(address))) throw new Error('timed out');
      },
      { address, namespace: 'default', who: options.verb ?? 'dev', log: options.log },
    );
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
    await recordDevServer(server, options.port, options.verb ?? 'dev');
  }
  const env = await startDemoEnvironment({
    ...(options.workspaceDir ? { workspaceDir: options.workspaceDir } : {}),
    ...(options.faults ? { faults: options.faults } : {}),
  });
  const connection = await connectWhenReady(() => NativeConnection.connect({ address }), { address, namespace: 'default', who: options.verb ?? 'dev', log: options.log }).catch(
    async (err: unknown) => {
      // The server answered a moment ago (or was just started): say so in the CLI's terms, exit 4.
      await env.stop();
      await server?.stop();
      await codecServer?.close();
      throw err;
    },
  );
  const attrs = await ensureSearchAttributes(connection, 'default');
  if (attrs.added.length) options.log(`Temporal: registered search attributes ${attrs.added.join(', ')}`);
  const taskQueue = options.taskQueue;
  // The stack's worker is the whole of its deployment (DEV_DEPLOYMENT_NAME) on a server it started:
  // its build (the developer's last edit) becomes current at once, and tasks of earlier builds stay
  // pinned to theirs. It never polls the legacy shared queue (`durable-agent`): that queue belongs
  // to the user's own workers' deployment, and a build dev made current there would take it away.
  const versioning = versioningFromEnvironment() && { deploymentName: DEV_DEPLOYMENT_NAME, bootstrap: server ? ('always' as const) : true };
  const worker = await createAgentWorker({
    agents: [env.agent],
    connection,
    namespace: 'default',
    versioning,
    legacyTaskQueue: false,
    ...(taskQueue ? { taskQueue } : {}),
  });
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
      if (server) await fs.rm(RECORD(), { force: true });
      await codecServer?.close();
    },
  };
}

/**
 * The server a `dev` of this folder started, kept in .durable-agent/dev-server.json while it runs:
 * a `dev` killed with SIGKILL leaves its server running, and the next `dev` here takes it back
 * rather than refusing it as someone else's.
 */
const RECORD = () => path.join(stateDir(), 'dev-server.json');

async function recordDevServer(server: DevServer, port: number, verb: string): Promise<void> {
  if (server.process.pid === undefined) return;
  await fs.writeFile(RECORD(), `${JSON.stringify({ pid: server.process.pid, port, owner: process.pid, verb })}\n`);
}

async function earlierDevServer(port: number): Promise<{ pid: number; owner: number; ownerAlive: boolean; verb: string } | undefined> {
  try {
    const record = JSON.parse(await fs.readFile(RECORD(), 'utf8')) as { pid?: unknown; port?: unknown; owner?: unknown; verb?: unknown };
    if (record.port !== port || typeof record.pid !== 'number') return undefined;
    if (!alive(record.pid)) return undefined;
    const owner = typeof record.owner === 'number' ? record.owner : 0;
    return { pid: record.pid, owner, ownerAlive: owner > 0 && alive(owner), verb: typeof record.verb === 'string' ? record.verb : 'dev' };
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
