/**
 * Agents whose tools come from the reference MCP servers installed from npm, launched with
 * `node <their bin js>` (nothing is downloaded). Loaded by `durable-agent worker --agents` in a worker
 * that gets killed, and in process by the tests.
 */
import path from 'node:path';
import { defineAgent, type AgentDefinition } from '../../src/agents/define-agent';
import type { AgentsModuleEnvironment } from '../../src/cli/load-agents';

const ROOT = path.resolve(__dirname, '../..');
export const serverBin = (pkg: 'server-filesystem' | 'server-everything' | 'server-memory') => path.join(ROOT, 'node_modules/@modelcontextprotocol', pkg, 'dist/index.js');

export default function mcpAgents({ workspaceDir }: Pick<AgentsModuleEnvironment, 'workspaceDir'>): AgentDefinition[] {
  return [
    defineAgent({
      name: 'mcp-files',
      system: 'You work with files and a knowledge graph through MCP tools.',
      tools: [],
      mcpServers: [
        { name: 'fs', command: process.execPath, args: [serverBin('server-filesystem'), workspaceDir], trust: 'trusted' },
        {
          name: 'memory',
          command: process.execPath,
          args: [serverBin('server-memory')],
          env: { MEMORY_FILE_PATH: path.join(workspaceDir, 'memory.jsonl') },
          trust: 'trusted',
          allow: ['create_entities', 'read_graph', 'delete_entities'],
        },
      ],
      // create_entities is a write (destructiveHint false): this agent may do it without asking.
      policy: { tools: { memory__create_entities: 'allow' } },
    }),
    defineAgent({
      name: 'mcp-everything',
      system: 'You use the MCP reference server.',
      tools: [],
      mcpServers: [
        {
          name: 'everything',
          command: process.execPath,
          args: [serverBin('server-everything'), 'stdio'],
          trust: 'trusted',
          allow: ['echo', 'trigger-long-running-operation', 'trigger-elicitation-request'],
        },
      ],
      policy: { tools: { 'everything__trigger-elicitation-request': 'allow' } },
    }),
  ];
}
