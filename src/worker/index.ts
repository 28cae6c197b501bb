export { AgentWorker, createAgentWorker, type AgentWorkerOptions, type QueueWorker } from './create-worker';
export { loadConnectionConfig, DEFAULT_ADDRESS, type ConnectionConfig } from '../client/connection-config';
