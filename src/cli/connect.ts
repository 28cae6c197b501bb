import { TaskClient } from '../client/task-client';
import { EncryptionKeyError, encryptionKeyring } from '../codec';
import { DEFAULT_ADDRESS, loadConnectionConfig } from '../client/connection-config';
import { CliError, EXIT, usageError } from './cli-error';

export async function connectClient(values: { address?: string; namespace?: string; 'task-queue'?: string }): Promise<TaskClient> {
  const overrides = {
    ...(values.address ? { address: values.address } : {}),
    ...(values.namespace ? { namespace: values.namespace } : {}),
  };
  // Keys are checked before connecting: a bad key is this machine's configuration, whether or not
  // the server is up, and no connection is left open behind the error.
  try {
    encryptionKeyring();
  } catch (err) {
    throw err instanceof EncryptionKeyError ? keyError(err) : err;
  }
  try {
    return await TaskClient.connect({ ...overrides, ...(values['task-queue'] ? { taskQueue: values['task-queue'] } : {}) });
  } catch (err) {
    if (err instanceof EncryptionKeyError) throw keyError(err);
    const config = loadConnectionConfig(overrides);
    throw unreachableError(config.connectionOptions.address, config.namespace, err);
  }
}

/**
 * Exit 4 with one line and the way out, for every command that connects (clients and workers): the
 * cause is cut to its first line, and the Rust core's `tonic::transport::Error(...)` debug text
 * is read down to what it means.
 */
export function unreachableError(address: string | undefined, namespace: string, err: unknown): CliError {
  return new CliError(
    `Cannot reach Temporal at ${address ?? DEFAULT_ADDRESS} (namespace ${namespace}): ${causeOf(err)}. ` + 'Start one with `durable-agent dev`, or point TEMPORAL_ADDRESS at your cluster.',
    EXIT.unreachable,
  );
}

function causeOf(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  if (/connection refused/i.test(text)) return 'connection refused';
  if (/timed? ?out|deadline/i.test(text)) return 'timed out';
  if (/dns|name resolution|failed to lookup/i.test(text)) return 'the host name does not resolve';
  return text.split('\n')[0]!.slice(0, 200);
}

/** Exit 2, like any other bad setting; the message names the variable, the key id and the problem (never the key). */
const keyError = (err: EncryptionKeyError) => usageError(`Encryption keys are misconfigured: ${err.message}`);

/** How long `worker` and `dev` wait for a server that is not up yet: DURABLE_AGENT_SERVER_WAIT seconds, default 30. */
export function serverWaitMs(env: NodeJS.ProcessEnv = process.env): number {
  const seconds = Number(env.DURABLE_AGENT_SERVER_WAIT ?? 30);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : 30_000;
}

/**
 * A worker's connection to a server that may still be starting: retried (a line on `log` per
 * attempt) while the server refuses or does not answer, for up to `waitMs`; then exit 4 with one
 * line. Any other failure (TLS, a bad address) is not retried.
 */
export async function connectWhenReady<T>(connect: () => Promise<T>, where: { address: string | undefined; namespace: string; who: string; log: (line: string) => void; waitMs?: number }): Promise<T> {
  const waitMs = where.waitMs ?? serverWaitMs();
  const started = Date.now();
  for (let attempt = 1; ; attempt++) {
    try {
      return await connect();
    } catch (err) {
      const cause = causeOf(err);
      const elapsed = Date.now() - started;
      const retryable = cause === 'connection refused' || cause === 'timed out' || /transport|unavailable|connection (reset|closed)|broken pipe/i.test(cause);
      if (!retryable || elapsed >= waitMs) {
        const waited = attempt > 1 ? ` after ${attempt} attempts in ${Math.round(elapsed / 1000)} s` : '';
        throw new CliError(
          `Cannot reach Temporal at ${where.address ?? DEFAULT_ADDRESS} (namespace ${where.namespace}): ${cause}${waited}. ` +
            'Start one with `durable-agent dev`, or point TEMPORAL_ADDRESS at your cluster.',
          EXIT.unreachable,
        );
      }
      const delay = Math.min(2_000, 500 * attempt, waitMs - elapsed);
      where.log(
        `${where.who}: Temporal at ${where.address ?? DEFAULT_ADDRESS} not reachable yet (${cause}); attempt ${attempt}, retrying in ${(delay / 1000).toFixed(1)} s (gives up ${Math.round(waitMs / 1000)} s after the first)`,
      );
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}
