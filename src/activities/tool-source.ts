/**
 * An agent's tools on this worker: its own, else its MCP servers' (listed on this worker at first
 * use, docs/mcp.md). The worker's MCP connections live in the pool it was given.
 */
import { Context } from '@temporalio/activity';
import type { AgentDefinition } from '../agents/define-agent';
import { classifyMcpError } from '../mcp/errors';
import { McpToolSource } from '../mcp/mcp-tools';
import { McpClientPool } from '../mcp/pool';
import type { ToolDefinition } from '../tools/define-tool';
import type { ActivityDependencies } from './dependencies';
import { toApplicationFailure } from './failure';

export interface ToolSource {
  /** An agent's own tool, else one of its MCP servers' (listed on this worker if it was not yet). */
  toolOf(definition: AgentDefinition, name: string): Promise<ToolDefinition<any, any> | undefined>;
  /** Every tool of the agent's MCP servers; a server's failure is classified (mcp/errors.ts). */
  mcpToolsOf(definition: AgentDefinition): Promise<ToolDefinition[]>;
}

export function toolSource(deps: Pick<ActivityDependencies, 'mcp'>): ToolSource {
  const mcp = new McpToolSource(deps.mcp ?? new McpClientPool(), (message) => Context.current().log.warn(message));
  return {
    async toolOf(definition, name) {
      const own = definition.tool(name);
      if (own || !definition.mcpServers?.length) return own;
      try {
        return await mcp.tool(definition.mcpServers, name);
      } catch (err) {
        const server = name.split('__')[0] ?? name;
        throw toApplicationFailure(classifyMcpError(err, server), Context.current().info.attempt);
      }
    },
    async mcpToolsOf(definition) {
      const servers = definition.mcpServers ?? [];
      try {
        return await mcp.tools(servers);
      } catch (err) {
        throw toApplicationFailure(classifyMcpError(err, servers.map((s) => s.name).join(', ')), Context.current().info.attempt);
      }
    },
  };
}
