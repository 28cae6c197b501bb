export * from './config';
export { effectOf, type McpEffect, type McpToolAnnotations } from './effects';
export { classifyMcpError, McpUnavailableError } from './errors';
export { McpConnection, type McpCallOptions, type McpProgress } from './connection';
export { McpClientPool, DEFAULT_MCP_IDLE_MS, type McpPoolOptions } from './pool';
export { McpToolSource, toolsFromListing, type SkippedTool } from './mcp-tools';
