/** Workflow entry point: everything exported here runs in Temporal's deterministic sandbox. */
export { agentTask } from './agent-task';
