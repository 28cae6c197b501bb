/**
 * Connection settings from Temporal's standard environment configuration: TEMPORAL_ADDRESS,
 * TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS_*, TEMPORAL_PROFILE and the temporal.toml
 * profile file. The same worker and CLI thus reach a dev server, a self-hosted cluster or Temporal Cloud.
 */
import { loadClientConnectConfig } from '@temporalio/envconfig';
import type { NativeConnectionOptions } from '@temporalio/worker';

export interface ConnectionConfig {
  connectionOptions: NativeConnectionOptions;
  namespace: string;
}

export const DEFAULT_ADDRESS = '127.0.0.1:7233';

export function loadConnectionConfig(overrides: { address?: string; namespace?: string } = {}): ConnectionConfig {
  const loaded = loadClientConnectConfig();
  return {
    connectionOptions: {
      ...loaded.connectionOptions,
      address: overrides.address ?? loaded.connectionOptions.address ?? DEFAULT_ADDRESS,
    },
    namespace: overrides.namespace ?? loaded.namespace ?? 'default',
  };
}
