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
