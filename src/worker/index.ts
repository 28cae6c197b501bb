export { AgentWorker, createAgentWorker, type AgentWorkerOptions, type QueueWorker } from './create-worker';
export { DurableAgentPlugin, durableAgent, durableAgentClient, agentsForQueue, type DurableAgentPluginOptions } from './plugin';
export { loadConnectionConfig, DEFAULT_ADDRESS, type ConnectionConfig } from '../client/connection-config';
