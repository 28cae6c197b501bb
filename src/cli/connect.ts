import { TaskClient } from '../client/task-client';
import { loadConnectionConfig } from '../worker/connection-config';
import { CliError, EXIT } from './cli-error';

export async function connectClient(values: { address?: string; namespace?: string; 'task-queue'?: string }): Promise<TaskClient> {
  const overrides = {
    ...(values.address ? { address: values.address } : {}),
    ...(values.namespace ? { namespace: values.namespace } : {}),
  };
  try {
    return await TaskClient.connect({ ...overrides, ...(values['task-queue'] ? { taskQueue: values['task-queue'] } : {}) });
  } catch (err) {
    const config = loadConnectionConfig(overrides);
    throw new CliError(
      `Cannot reach Temporal at ${config.connectionOptions.address} (namespace ${config.namespace}): ${(err as Error).message.split('\n')[0]}. ` +
        'Start one with `durable-agent dev`, or point TEMPORAL_ADDRESS at your cluster.',
      EXIT.unreachable,
    );
  }
}
