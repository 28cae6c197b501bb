export { checkMemoryPath, MEMORY_ROOT, MAX_MEMORY_PATH_CHARS } from './memory-paths';
export { MEMORY_COMMANDS, memoryScope, memoryBlobScope, type MemoryLog, type MemoryVersion, type MemoryCommand } from './memory-log';
export { LocalMemoryLog } from './local-memory-log';
export { PostgresMemoryLog, type PostgresMemoryLogOptions } from './postgres-memory-log';
export { MemoryFiles, DEFAULT_MEMORY_LIMITS, type MemoryLimits, type MemoryCall, type MemoryFileInfo } from './memory-files';
export { memoryInputSchema, memoryInput, type MemoryInput } from './memory-input';
export { memoryTool, MEMORY_TOOL_DESCRIPTION } from './memory-tool';
export { openMemoryLog } from './open-memory-log';
export { MemoryClient, type MemoryClientOptions, type MemoryTarget } from './memory-client';
