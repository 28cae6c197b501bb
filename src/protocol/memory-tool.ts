/**
 * The names of the memory tool (the Messages API's `memory_20250818` contract) that the workflow,
 * the models and the worker share. Sandbox-safe.
 */
export const MEMORY_TOOL_NAME = 'memory';
export const MEMORY_TOOL_TYPE = 'memory_20250818';
/** Its commands that only read: the workflow's guards treat these calls as reads. */
export const MEMORY_READ_COMMANDS = ['view'] as const;

/** How an agent keeps memory: shared by all its tasks (`agent`, the default) or one task's own. */
export type MemoryScopeKind = 'agent' | 'task';
