import { TaskClient } from '../client/task-client';
import { EncryptionKeyError, encryptionKeyring } from '../codec';
import { loadConnectionConfig } from '../worker/connection-config';
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
    throw new CliError(
      `Cannot reach Temporal at ${config.connectionOptions.address} (namespace ${config.namespace}): ${(err as Error).message.split('\n')[0]}. ` +
        'Start one with `durable-agent dev`, or point TEMPORAL_ADDRESS at your cluster.',
      EXIT.unreachable,
    );
  }
}

/** Exit 2, like any other bad setting; the message names the variable, the key id and the problem (never the key). */
const keyError = (err: EncryptionKeyError) => usageError(`Encryption keys are misconfigured: ${err.message}`);
