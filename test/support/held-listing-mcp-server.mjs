// An MCP server (stdio) whose tool listing waits while the file HOLD_FILE exists, after writing
// LISTING_FILE: the crash matrix kills a worker while it describes an agent (describeAgent lists its
// MCP servers' tools), at a moment it can wait for instead of guessing. One tool, `ping`.
import { existsSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const { HOLD_FILE, LISTING_FILE } = process.env;
if (!HOLD_FILE || !LISTING_FILE) throw new Error('held-listing-mcp-server: set HOLD_FILE and LISTING_FILE');

const server = new Server({ name: 'held-listing', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => {
  writeFileSync(LISTING_FILE, `${process.pid}\n`);
  while (existsSync(HOLD_FILE)) await sleep(50);
  return { tools: [{ name: 'ping', description: 'Answers pong.', inputSchema: { type: 'object', properties: {} }, annotations: { readOnlyHint: true } }] };
});
server.setRequestHandler(CallToolRequestSchema, async () => ({ content: [{ type: 'text', text: 'pong' }] }));
// The client gone (its worker SIGKILLed): nothing is left to answer, and no listing outlives it.
process.stdin.on('end', () => process.exit(0));
await server.connect(new StdioServerTransport());
