/**
 * What the activities of one worker share, built once by createActivities: its agents by name, the
 * blob store (opened at first use, behind a per-worker cache) with its errors turned into the task's
 * failures, memory and forks on that store, prices, size limits and the runs' latest conversations.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { AgentDefinition } from '../agents/define-agent';
import { BlobDecryptionError, BlobKeyNotFoundError } from '../blobs/blob-envelope';
import type { BlobStore } from '../blobs/blob-store';
import { CachedBlobStore } from '../blobs/cached-blob-store';
import { BlobMissingError, BlobTamperedError, DEFAULT_INLINE_CHARS, missingBlobFailure, tamperedBlobFailure, unreadableBlobFailure } from '../blobs/claim-check';
import { openBlobStore } from '../blobs/open-blob-store';
import type { MemoryLog } from '../memory/memory-log';
import { loadPrices, type PriceTable } from '../models/pricing';
import { toolError } from '../protocol/tool-error';
import type { BranchDependencies } from './branch-activities';
import { ConversationCopies } from './conversation-copies';
import { DEFAULT_MAX_TOOL_RESULT_CHARS, type ActivityDependencies } from './dependencies';
import { carryTaskMemory, memoryLogOf, type MemoryDependencies } from './memory-activity';
import { liveOutputOf } from './live-output-writer';
import type { LiveOutputLog } from '../live-output/live-output-log';
import { openVault } from '../vault/open-vault';
import type { Vault } from '../vault/vault';

/** How soon a call for an agent served elsewhere is offered again on a shared queue (jittered up to twice this). */
const SHARED_QUEUE_RETRY_MS = 250;

export interface WorkerResources {
  /** The agent served here by that name; else a failure (retried elsewhere on a shared queue, final on the agent's own). */
  agentNamed(name: string): AgentDefinition;
  store(): BlobStore;
  /** Turns the store's own errors (missing, tampered, unreadable) into the task's failures. */
  withBlobs<T>(work: () => Promise<T>): Promise<T>;
  memory: MemoryDependencies & { log: () => MemoryLog };
  branches: BranchDependencies;
  prices: PriceTable;
  /** Content longer than this travels as a blob reference (tool results; model output at 4x). */
  inlineChars: number;
  /** A tool result longer than this (as JSON) is cut before it enters history. */
  maxResultChars: number;
  conversations: ConversationCopies;
  /** The vault credentials are resolved from (opened at first use). */
  vault(): Vault;
  /** Where model calls stream their live output (opened at first use); undefined when the worker streams none. */
  liveOutput(): LiveOutputLog | undefined;
}

export function workerResources(deps: ActivityDependencies): WorkerResources {
  const agents = new Map(deps.agents.map((a) => [a.name, a]));
  function agentNamed(name: string): AgentDefinition {
    const agent = agents.get(name);
    if (agent) return agent;
    const registered = [...agents.keys()].join(', ') || 'none';
    if (deps.sharedQueue) {
      const error = toolError('transient', 'agent_served_elsewhere', `No agent named "${name}" on this worker (registered: ${registered}); offered again on the shared queue.`);
      throw ApplicationFailure.create({
        message: error.detail,
        type: 'transient',
        nonRetryable: false,
        details: [error],
        nextRetryDelay: Math.round(SHARED_QUEUE_RETRY_MS * (1 + Math.random())),
      });
    }
    const error = toolError('permanent', 'unknown_agent', `No agent named "${name}" on this worker. Registered: ${registered}.`);
    throw ApplicationFailure.create({ message: error.detail, type: 'permanent', nonRetryable: true, details: [error] });
  }

  let blobs: BlobStore | undefined = deps.blobStore && !(deps.blobStore instanceof CachedBlobStore) ? new CachedBlobStore(deps.blobStore) : deps.blobStore;
  // Opened on first use: a worker whose tasks never store anything never touches the store.
  const store = (): BlobStore => (blobs ??= openBlobStore());
  const withBlobs = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (err) {
      if (err instanceof BlobMissingError) throw missingBlobFailure(err);
      if (err instanceof BlobTamperedError) throw tamperedBlobFailure(err);
      if (err instanceof BlobKeyNotFoundError || err instanceof BlobDecryptionError) throw unreadableBlobFailure(err);
      throw err;
    }
  };
  const memory = { log: memoryLogOf(deps), store, withBlobs };
  let vault: Vault | undefined = typeof deps.vault === 'function' ? undefined : deps.vault;
  const openedVault = (): Vault => (vault ??= typeof deps.vault === 'function' ? deps.vault() : openVault());
  const liveOutput = liveOutputOf(deps);
  return {
    liveOutput,
    vault: openedVault,
    agentNamed,
    store,
    withBlobs,
    memory,
    branches: { store, withBlobs, agentNamed, carryMemory: (definition, origin, forkScope) => carryTaskMemory(memory, definition, origin, forkScope) },
    prices: loadPrices(deps.prices),
    inlineChars: deps.inlineChars ?? DEFAULT_INLINE_CHARS,
    maxResultChars: deps.maxToolResultChars ?? DEFAULT_MAX_TOOL_RESULT_CHARS,
    conversations: deps.conversations ?? new ConversationCopies(),
  };
}
