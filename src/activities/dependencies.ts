/** What a worker gives createActivities: its agents, models, stores and settings (all optional but the agents). */
import type { AgentDefinition } from '../agents/define-agent';
import type { BlobStore } from '../blobs/blob-store';
import type { McpClientPool } from '../mcp/pool';
import type { LiveOutputLog } from '../live-output/live-output-log';
import type { MemoryLog } from '../memory/memory-log';
import type { ModelEnvironment } from '../models/create-model';
import type { Model } from '../models/model';
import type { PriceTable } from '../models/pricing';
import type { TrustedKey } from '../protocol/decision-proof';
import type { Vault } from '../vault/vault';
import type { ConversationCopies } from './conversation-copies';

/** A tool result longer than this (as JSON) is cut before it enters history, far below Temporal's 2 MB payload limit. */
export const DEFAULT_MAX_TOOL_RESULT_CHARS = 50_000;

export interface ActivityDependencies {
  /** USD per million tokens per model; merged over DEFAULT_PRICES and DURABLE_AGENT_PRICES. */
  prices?: PriceTable;
  /** Default DEFAULT_MAX_TOOL_RESULT_CHARS. */
  maxToolResultChars?: number;
  /** Where `inform` escalations are POSTed as JSON, besides the worker's log. Default: DURABLE_AGENT_WEBHOOK_URL. */
  webhookUrl?: string;
  agents: AgentDefinition[];
  modelEnv?: ModelEnvironment;
  /** Your own Model implementations, chosen by a task with `{ provider: 'custom', name }`. */
  models?: Record<string, Model>;
  /** Where large content goes (the claim check). Default: openBlobStore() (DURABLE_AGENT_BLOB_STORE, else a folder in the state dir) behind a per-worker LRU cache. */
  blobStore?: BlobStore;
  /** Tool results and model output longer than this many characters travel as blob references. Default DEFAULT_INLINE_CHARS (tool results) and 4x that (model output). */
  inlineChars?: number;
  /**
   * Public keys of the front ends trusted to vouch for approvers, recorded in every agent manifest
   * (verified approvers: docs/approvers.md). Default: DURABLE_AGENT_APPROVER_KEYS; none = dev mode.
   */
  approverKeys?: TrustedKey[];
  /** The worker's MCP connections (docs/mcp.md). Default: a new pool; whoever creates the worker closes it (createAgentWorker does). */
  mcp?: McpClientPool;
  /**
   * The activities poll a queue shared by workers serving other agents (the legacy `durable-agent`
   * queue of tasks started before routing by agent): a call for an agent not served here is then
   * retried, so another poller can take it, instead of failing the task. Default false: on an
   * agent's own queue, an unknown agent is a task started on the wrong queue, and final.
   */
  sharedQueue?: boolean;
  /**
   * Where agents' memory versions are kept (docs/memory.md). Default: beside the blob store: in a
   * LocalBlobStore's folder when one is given, else where DURABLE_AGENT_BLOB_STORE points (openMemoryLog()).
   */
  memoryLog?: MemoryLog;
  /**
   * Where model calls stream their live output for `watch`, the inbox and TaskClient.stream
   * (docs/live-output.md); `false` streams nothing. Default: beside the blob store, like memoryLog.
   */
  liveOutput?: LiveOutputLog | false;
  /** Each run's latest conversation, so a model call's input carries only the change (conversation-copies.ts). Default: a new one per worker. */
  conversations?: ConversationCopies;
  /**
   * Where agents' credentials are resolved at each tool call (docs/credentials.md): a Vault, or a
   * function that opens one at first use. Default: openVault() (DURABLE_AGENT_VAULT, else beside the
   * blob store), opened when a tool of an agent with credentials first runs.
   */
  vault?: Vault | (() => Vault);
  /** Tasks this worker describes send the whole conversation with every model call (AgentManifest.wholeConversations). */
  wholeConversations?: boolean;
}
