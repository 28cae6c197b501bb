/**
 * The dead-worker guard of one namespace in one process: its running calls recorded (InFlightCalls)
 * and the other workers' records watched (DeadWorkerWatch). A SIGKILLed worker's calls are retried
 * as soon as a worker on the same machine notices its process is gone (within `intervalMs`), instead
 * of after the heartbeat timeout. Workers on other machines still rely on the heartbeat timeout:
 * each record carries its kernel's boot id, and a watch judges only records of its own machine's
 * boot; a folder on a network filesystem is refused at start (folder-filesystem.ts).
 */
import { lstat, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ActivityNotFoundError, Client } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import type { ActivityInterceptorsFactory, NativeConnection } from '@temporalio/worker';
import { DeadWorkerWatch, type FailAttempt } from './dead-worker-watch';
import { InFlightCalls } from './in-flight-calls';
import { readMountTable, refuseNetworkFolder } from './folder-filesystem';

export { NetworkRecordsFolderError } from './folder-filesystem';

export interface DeadWorkerOptions {
  /** Where the workers of this machine record their running calls. Default: DURABLE_AGENT_WORKERS_DIR, else `<tmpdir>/durable-agent-workers`. */
  dir?: string;
  /** How often the other workers' records are read. Default 200 ms. */
  intervalMs?: number;
}

export const DEFAULT_WATCH_INTERVAL_MS = 200;

/** The plugin's `deadWorkers` option, with DURABLE_AGENT_DEAD_WORKERS=0 turning the default off; undefined when off. */
export function resolveDeadWorkerOptions(option: boolean | DeadWorkerOptions | undefined, env: NodeJS.ProcessEnv = process.env): Required<DeadWorkerOptions> | undefined {
  const fromEnv = env.DURABLE_AGENT_DEAD_WORKERS;
  if (fromEnv !== undefined && fromEnv !== '0' && fromEnv !== '1') throw new TypeError(`DURABLE_AGENT_DEAD_WORKERS must be 0 or 1, not ${JSON.stringify(fromEnv)}`);
  if (option === false || (option === undefined && fromEnv === '0')) return undefined;
  const given = typeof option === 'object' ? option : {};
  const intervalMs = given.intervalMs ?? DEFAULT_WATCH_INTERVAL_MS;
  if (!Number.isFinite(intervalMs) || intervalMs < 10 || intervalMs > 60_000) throw new TypeError(`deadWorkers.intervalMs must be between 10 and 60000 ms, not ${intervalMs}`);
  return { dir: given.dir ?? env.DURABLE_AGENT_WORKERS_DIR ?? path.join(tmpdir(), 'durable-agent-workers'), intervalMs };
}

export interface DeadWorkerGuard {
  interceptor: ActivityInterceptorsFactory;
  start(): void;
  stop(): Promise<void>;
}

export interface GuardTarget {
  connection: NativeConnection;
  /** The workers' data converter: a failure's details are encoded (and encrypted) as the workers' own. */
  dataConverter: DataConverter;
  namespace: string;
  identity: string;
  warn: (message: string) => void;
  log: (message: string) => void;
  /** The machine's mount table (Linux: /proc/mounts' text; undefined: not checked). Tests give a fake one. */
  mountTable?: () => string | undefined;
}

/**
 * The guard for `target`'s namespace, or undefined (with a warning) when it cannot run: the records
 * are kept per namespace id, so that workers of two servers on one machine never fail each
 * other's calls, and only in a folder that this user alone can write. A folder on a network
 * filesystem is refused: NetworkRecordsFolderError (one line, naming the filesystem type), and the
 * worker does not start.
 */
export async function openDeadWorkerGuard(options: Required<DeadWorkerOptions>, target: GuardTarget): Promise<DeadWorkerGuard | undefined> {
  refuseNetworkFolder(options.dir, (target.mountTable ?? readMountTable)());
  let namespaceId: string | null | undefined;
  try {
    namespaceId = (await target.connection.workflowService.describeNamespace({ namespace: target.namespace })).namespaceInfo?.id;
  } catch (err) {
    target.warn(`dead-worker watch off: cannot describe namespace ${target.namespace} (${(err as Error).message})`);
    return undefined;
  }
  if (!namespaceId || !/^[\w-]+$/.test(namespaceId)) return undefined;
  const unsafe = await unsafeFolder(options.dir);
  if (unsafe) {
    target.warn(`dead-worker watch off: ${unsafe}`);
    return undefined;
  }
  const namespaceDir = path.join(options.dir, namespaceId);
  const calls = new InFlightCalls(namespaceDir, target.warn);
  const client = new Client({ connection: target.connection, namespace: target.namespace, dataConverter: target.dataConverter, identity: target.identity });
  const fail: FailAttempt = (taskToken, failure) =>
    client.activity.fail(taskToken, failure).then(
      () => 'failed' as const,
      (err: unknown) => {
        if (err instanceof ActivityNotFoundError) return 'over' as const;
        throw err;
      },
    );
  const watch = new DeadWorkerWatch({ namespaceDir, ownDir: calls.dir, fail, identity: target.identity, intervalMs: options.intervalMs, log: target.log });
  return {
    interceptor: calls.interceptor(),
    start: () => watch.start(),
    stop: async () => {
      await watch.stop();
      calls.close();
    },
  };
}

/** Why `dir` must not hold the records: another user could read the task tokens there or plant files. */
async function unsafeFolder(dir: string): Promise<string | undefined> {
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const s = await lstat(dir);
    if (!s.isDirectory()) return `${dir} is not a folder`;
    if (process.getuid && s.uid !== process.getuid()) return `${dir} belongs to another user`;
    if ((s.mode & 0o022) !== 0) return `${dir} can be written by other users (mode ${(s.mode & 0o777).toString(8)})`;
    return undefined;
  } catch (err) {
    return `cannot use ${dir} (${(err as Error).message})`;
  }
}
