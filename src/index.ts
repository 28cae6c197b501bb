/**
 * durable-agent's public API. Workflow code lives in `durable-agent/workflows` (the sandbox); this
 * entry point is for worker processes, clients and scripts.
 */
export { defineTool, DEFAULT_TOOL_TIMEOUT_MS } from './tools/define-tool';
export type { ReconcileContext, Reconciliation, ToolConfig, ToolContext, ToolDefinition, SemanticIssue } from './tools/define-tool';
export { jsonSchemaValidator, InvalidJsonSchemaError, type JsonSchema } from './tools/json-schema';
export type { SchemaValidator, ToolSchema } from './tools/schema';
export { NeedsInputError } from './tools/needs-input';
export { McpClientPool, McpToolSource, classifyMcpError, effectOf as mcpEffectOf } from './mcp';
export type * from './mcp/config';
export { createTaskToolsServer, type TaskToolsServerOptions } from './mcp-server/task-tools-server';
export { createDecisionSigner, findDecisionSigner, generateSecretKey, loadDecisionSigner, trustedKeysFromEnvironment } from './approvers';
export type { ApproverIdentity, DecisionSigner } from './approvers';
export { agentQueue, defineAgent } from './agents/define-agent';
export type { AgentConfig, AgentDefinition, MemoryConfig, MemorySettings } from './agents/define-agent';
export { AgentWorker, createAgentWorker, loadConnectionConfig, DEFAULT_ADDRESS } from './worker';
export type { AgentWorkerOptions, ConnectionConfig, QueueWorker } from './worker';
export { DurableAgentPlugin, durableAgent, durableAgentClient } from './worker';
export type { DurableAgentPluginOptions } from './worker';
export { createActivities } from './activities';
export { TaskClient, TaskNotFoundError, TaskRejectedError, ForkRefusedError, failureOf } from './client/task-client';
export type { TaskSummary, TaskView, ListFilter, ForkOptions, ForkStarted } from './client/task-client';
export { REQUEST_OUTCOMES, decisionOutcome, sendSteering, sendCancel } from './client/request-outcome';
export type { RequestOutcome, SteeringOutcome, CancelOutcome } from './client/request-outcome';
export { nestedPending, nestedLabel, nestingOf, runningChildren, type NestedPending } from './client/child-tasks';
export { ToolFailure, HttpStatusError } from './errors/tool-failure';
export { classify } from './errors/classify';
export { AnthropicModel, DEFAULT_ANTHROPIC_MODEL } from './models/anthropic-model';
export { ScriptedModel } from './models/scripted-model';
export type { Model, ModelCapabilities, ModelRequest } from './models/model';
export { createWorkspaceTools } from './tools/builtin/workspace';
export { startDevServer, isTemporalServing } from './server/dev-server';
export type { DevServer, DevServerOptions } from './server/dev-server';
export { provisionTemporalCli, TEMPORAL_CLI_VERSION } from './server/temporal-cli';
export { ensureSearchAttributes } from './server/search-attributes';
export * from './protocol';
export { createDataConverter, createPayloadCodecs } from './codec';
export { connectClient, clientConnectionOptions, MAX_RECEIVE_MESSAGE_BYTES } from './client/client-connection';
export type { CodecOptions } from './codec';
export { openBlobStore, LocalBlobStore, PostgresBlobStore, CachedBlobStore, EncryptedBlobStore, BlobMissingError, BlobTamperedError, BlobKeyNotFoundError, BlobDecryptionError } from './blobs';
export type { BlobStore, BlobBodyStore } from './blobs';
export { MemoryClient, MemoryFiles, LocalMemoryLog, PostgresMemoryLog, openMemoryLog, DEFAULT_MEMORY_LIMITS } from './memory';
export {
  recordTask,
  loadRecording,
  checkRecording,
  replayRecording,
  diffTrajectories,
  renderDiff,
  RecordingError,
  ReplayModelError,
  ReplayCannotRunError,
  checkExpectations,
  loadEvalDir,
  evalCases,
} from './replay';
export type { Recording, RecordedTurn, RecordedToolCall, ReplayOptions, ReplayResult, TrajectoryDiff, Expectations, EvalRow, EvalVerdict } from './replay';
export type { MemoryClientOptions, MemoryTarget, MemoryLimits, MemoryLog, MemoryVersion, MemoryFileInfo } from './memory';
export {
  openVault,
  Vault,
  FileVault,
  PostgresVault,
  VaultConflictError,
  VaultConfigError,
  VaultUnreadableError,
  CredentialUnavailableError,
  secretEnvName,
  grantProblem,
  OAUTH_GRANT_TYPE,
  VAULT_ENV,
} from './vault';
export type { OpenVaultOptions, VaultEntryInfo, VaultStore, VaultRead, WriteOptions, Resolution, OAuthGrant } from './vault';
