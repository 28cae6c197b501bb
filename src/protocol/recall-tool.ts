/**
 * The built-in tool that gives the model back content that compaction took out of the conversation
 * (its blob stays in the task's store). Offered only once something was compacted. Sandbox-safe.
 */
import type { ToolManifest } from './agent-manifest';
import { BLOB_ID_SOURCE } from './blob-marker';

export const RECALL_TOOL = 'recall_result';

export const RECALL_TOOL_MANIFEST: ToolManifest = {
  name: RECALL_TOOL,
  description: 'Returns the full content of an earlier tool result that was removed from the conversation to fit the context window. Pass the `ref` that the compacted result shows (sha256:...).',
  inputSchema: {
    type: 'object',
    properties: { ref: { type: 'string', pattern: `^${BLOB_ID_SOURCE}$`, description: 'The ref shown in the compacted result.' } },
    required: ['ref'],
    additionalProperties: false,
  },
  effect: 'read',
  idempotent: true,
  timeoutMs: 30_000,
  maxAttempts: 3,
  fallbacks: [],
  cacheTtlMs: 0,
};
