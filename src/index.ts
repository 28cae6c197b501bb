/**
 * durable-agent's public API. Workflow code lives in `durable-agent/workflows` (the sandbox); this
 * entry point is for worker processes, clients and scripts.
 */
export { defineTool, DEFAULT_TOOL_TIMEOUT_MS } from './tools/define-tool';
export type { ToolConfig, ToolContext, ToolDefinition, SemanticIssue } from './tools/define-tool';
export { defineAgent } from './agents/define-agent';
export type { AgentConfig, AgentDefinition } from './agents/define-agent';
export { createAgentWorker, loadConnectionConfig, DEFAULT_ADDRESS } from './worker';
export type { AgentWorkerOptions, ConnectionConfig } from './worker';
export { createActivities } from './activities';
export { TaskClient, TaskNotFoundError, TaskRejectedError, failureOf } from './client/task-client';
export type { TaskSummary, TaskView, ListFilter } from './client/task-client';
export { ToolFailure, HttpStatusError } from './errors/tool-failure';
export { classify } from './errors/classify';
export { AnthropicModel, DEFAULT_ANTHROPIC_MODEL } from './models/anthropic-model';
export { ScriptedModel } from './models/scripted-model';
export type { Model, ModelRequest } from './models/model';
export { createWorkspaceTools } from './tools/builtin/workspace';
export { createOrdersTools } from './tools/builtin/orders-tools';
export { createDemoAgent, DEMO_AGENT, DEMO_SCRIPT } from './agents/demo/demo-agent';
export { startDevServer, isTemporalServing } from './server/dev-server';
export type { DevServer, DevServerOptions } from './server/dev-server';
export { provisionTemporalCli, TEMPORAL_CLI_VERSION } from './server/temporal-cli';
export { ensureSearchAttributes } from './server/search-attributes';
export * from './protocol';
export { createDataConverter, createPayloadCodecs } from './codec';
export type { CodecOptions } from './codec';
export { openBlobStore, LocalBlobStore, PostgresBlobStore, CachedBlobStore, BlobMissingError } from './blobs';
export type { BlobStore } from './blobs';
