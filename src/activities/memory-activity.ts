/**
 * The worker's side of the memory tool (docs/memory.md): an agent's memory scope in this worker's
 * stores, run as the tool of one call. runTool builds it per call; it holds only the memory log,
 * opened at first use beside the blob store.
 */
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import type { AgentDefinition } from '../agents/define-agent';
import type { BlobStore } from '../blobs/blob-store';
import { LocalBlobStore } from '../blobs/local-blob-store';
import { ToolFailure } from '../errors/tool-failure';
import { LocalMemoryLog } from '../memory/local-memory-log';
import { MemoryFiles } from '../memory/memory-files';
import { memoryScope, type MemoryLog } from '../memory/memory-log';
import { memoryTool } from '../memory/memory-tool';
import { openMemoryLog } from '../memory/open-memory-log';
import { carryMemory } from '../memory/fork-memory';
import type { toolError } from '../protocol/tool-error';
import type { ToolDefinition } from '../tools/define-tool';

export interface MemoryDependencies {
  /** Given in code, else beside the blob store (a folder store keeps it in its folder, else openMemoryLog()). */
  memoryLog?: MemoryLog;
  blobStore?: BlobStore;
  store(): BlobStore;
  /** Turns the store's own errors (missing, tampered, unreadable) into the task's failures. */
  withBlobs<T>(work: () => Promise<T>): Promise<T>;
}

/** The worker's memory log: given, else beside a folder blob store, else openMemoryLog() (opened at first use). */
export function memoryLogOf(deps: Pick<MemoryDependencies, 'memoryLog' | 'blobStore'>): () => MemoryLog {
  let memoryLog = deps.memoryLog ?? (deps.blobStore instanceof LocalBlobStore ? new LocalMemoryLog(path.join(deps.blobStore.root, '~memory')) : undefined);
  return () => (memoryLog ??= openMemoryLog());
}

/**
 * A fork's task-scoped memory, from its origin's as it stood at the branch point (loadForkPoint).
 * Agents whose memory is the agent's (shared by all its tasks) carry nothing: the fork shares it.
 */
export async function carryTaskMemory(
  deps: MemoryDependencies & { log: () => MemoryLog },
  definition: AgentDefinition,
  origin: { taskId: string; scope: string; toolCallsAtBranch: number },
  forkScope: string,
): Promise<number> {
  if (definition.memorySettings?.scope !== 'task') return 0;
  const firstRunId = origin.scope.slice(origin.taskId.length + 1);
  return deps.withBlobs(() =>
    carryMemory(deps.log(), deps.store(), {
      fromScope: memoryScope('task', definition.name, origin.scope),
      fromTask: origin.scope,
      toScope: memoryScope('task', definition.name, forkScope),
      toTask: forkScope,
      keyPrefix: `${origin.taskId}:${firstRunId}:`,
      toolCallsAtBranch: origin.toolCallsAtBranch,
    }),
  );
}

/** The memory tool for one call of `definition`'s task (`taskScope`). */
export function memoryTools(deps: MemoryDependencies & { log: () => MemoryLog }): (definition: AgentDefinition, taskScope: string) => ToolDefinition<any, any> {
  return (definition, taskScope) => {
    const settings = definition.memorySettings!;
    const files = new MemoryFiles(deps.log(), deps.store(), settings.limits);
    const scope = memoryScope(settings.scope, definition.name, taskScope);
    return memoryTool(
      (input, ctx) =>
        // Inside a tool the guard classifies what is thrown: memory content gone, unreadable or
        // tampered with is the same resource error (a block) it is for the task's own blobs.
        deps
          .withBlobs(() => files.run(input, { scope, task: taskScope, callKey: ctx.idempotencyKey, toolUseId: ctx.toolUseId }))
          .catch((err: unknown) => {
            const error = err instanceof ApplicationFailure ? (err.details?.[0] as ReturnType<typeof toolError> | undefined) : undefined;
            if (error?.error_class) throw new ToolFailure(error.error_class, error.code, `memory: ${error.detail}`, error.hint);
            throw err;
          }),
      (input, key) => deps.withBlobs(() => files.stands(scope, key, input)),
    );
  };
}
