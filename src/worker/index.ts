export { createAgentWorker, type AgentWorkerOptions } from './create-worker';
export { loadConnectionConfig, DEFAULT_ADDRESS, type ConnectionConfig } from './connection-config';
