/**
 * An MCP server's tools as the engine's tools: named `<server>__<tool>`, filtered by the agent's
 * allow/deny lists, their JSON Schemas validated like zod schemas (tools/json-schema.ts), their
 * annotations turned into effects (effects.ts), each call classified (errors.ts).
 */
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ToolProgress } from '../protocol/activity-contracts';
import { ToolFailure } from '../errors/tool-failure';
import { defineTool, type ToolDefinition } from '../tools/define-tool';
import { jsonSchemaValidator } from '../tools/json-schema';
import { NeedsInputError } from '../tools/needs-input';
import { DEFAULT_MCP_TIMEOUT_MS, isOffered, mcpToolName, splitMcpToolName, type McpServerConfig } from './config';
import { effectOf } from './effects';
import { classifyMcpError } from './errors';
import type { McpClientPool } from './pool';

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const MAX_DESCRIPTION_CHARS = 4_000;
const MAX_ERROR_CHARS = 4_000;
/** Accepts any output: a tool without an outputSchema promises nothing about its shape. */
const ANY_OUTPUT = jsonSchemaValidator({});

export interface SkippedTool {
  tool: string;
  reason: string;
}

/** Builds the tool definitions of one server from its listing; tools that cannot be offered safely are skipped, with why. */
export function toolsFromListing(server: McpServerConfig, listing: Tool[], pool: McpClientPool): { tools: ToolDefinition[]; skipped: SkippedTool[] } {
  const tools: ToolDefinition[] = [];
  const skipped: SkippedTool[] = [];
  for (const tool of listing) {
    if (!isOffered(server, tool.name)) continue;
    const name = mcpToolName(server.name, tool.name);
    if (!TOOL_NAME.test(name)) {
      skipped.push({ tool: tool.name, reason: `"${name}" is not a valid tool name (letters, digits, _ and -, at most 64)` });
      continue;
    }
    try {
      tools.push(mcpTool(server, tool, name, pool));
    } catch (err) {
      // A schema that cannot be compiled cannot be validated: the tool is not offered (fail closed).
      skipped.push({ tool: tool.name, reason: (err as Error).message });
    }
  }
  return { tools, skipped };
}

function mcpTool(server: McpServerConfig, tool: Tool, name: string, pool: McpClientPool): ToolDefinition {
  const { effect, idempotent } = effectOf(tool.annotations, server.trust ?? 'untrusted', server.effects?.[tool.name]);
  const timeoutMs = server.timeoutMs ?? DEFAULT_MCP_TIMEOUT_MS;
  const hasOutputSchema = tool.outputSchema !== undefined;
  const description = (tool.description || tool.title || `The ${tool.name} tool of MCP server ${server.name}.`).slice(0, MAX_DESCRIPTION_CHARS);
  return defineTool<Record<string, unknown>, unknown>({
    name,
    description,
    input: jsonSchemaValidator<Record<string, unknown>>(tool.inputSchema as Record<string, unknown>),
    output: hasOutputSchema ? jsonSchemaValidator(tool.outputSchema as Record<string, unknown>) : ANY_OUTPUT,
    effect,
    idempotent,
    timeoutMs,
    // Reads are answered from the ledger only for what the server itself calls read-only.
    cacheTtlMs: effect === 'read' ? 60_000 : 0,
    async run(input, ctx) {
      let result: CallToolResult;
      try {
        const connection = await pool.connection(server);
        result = await connection.callTool(tool.name, input, {
          // A little under the activity's own timeout, so the server is told (notifications/cancelled) and the error says MCP.
          timeoutMs: Math.max(500, timeoutMs - 500),
          signal: ctx.signal,
          onProgress: (p) => ctx.heartbeat({ toolProgress: { tool: name, ...p } satisfies ToolProgress }),
          ...(ctx.answers ? { answers: ctx.answers } : {}),
        });
      } catch (err) {
        if (err instanceof NeedsInputError) throw err;
        const { error, retryAfterMs } = classifyMcpError(err, server.name);
        throw new ToolFailure(error.error_class, error.code, error.detail, error.hint, retryAfterMs);
      }
      if (result.isError) {
        // The tool ran and said no: the model reads why, and may correct its call.
        const text = textOf(result).slice(0, MAX_ERROR_CHARS) || 'The tool reported an error without a message.';
        throw new ToolFailure('model', 'mcp_tool_error', text, 'The tool reported this error; correct the call or try another approach.');
      }
      return outputOf(result, hasOutputSchema);
    },
  });
}

/** What the model reads: the structured content a tool promised, else its content blocks (media described, not inlined). */
function outputOf(result: CallToolResult, hasOutputSchema: boolean): unknown {
  if (hasOutputSchema) return result.structuredContent;
  const blocks = (result.content ?? []).map((block): unknown => {
    switch (block.type) {
      case 'text':
        return block.text;
      case 'image':
      case 'audio':
        return { type: block.type, mimeType: block.mimeType, note: `${Math.round((block.data.length * 3) / 4)} bytes of ${block.type}, not shown` };
      case 'resource_link':
        return { type: 'resource_link', uri: block.uri, name: block.name };
      case 'resource':
        return 'text' in block.resource ? { type: 'resource', uri: block.resource.uri, text: block.resource.text } : { type: 'resource', uri: block.resource.uri, note: 'binary content, not shown' };
      default:
        return block;
    }
  });
  const texts = blocks.every((b) => typeof b === 'string');
  const out: Record<string, unknown> = texts ? { text: (blocks as string[]).join('\n') } : { content: blocks };
  if (result.structuredContent !== undefined) out.structuredContent = result.structuredContent;
  return out;
}

function textOf(result: CallToolResult): string {
  return (result.content ?? [])
    .map((b) => (b.type === 'text' ? b.text : ''))
    .filter(Boolean)
    .join('\n');
}

/**
 * The MCP tools of the agents on one worker. Listing happens when an agent is described (its
 * result is recorded in the task's history); a call on a worker that has not listed the server yet
 * lists it first.
 */
export class McpToolSource {
  private readonly known = new Map<string, Map<string, ToolDefinition>>();

  constructor(
    readonly pool: McpClientPool,
    private readonly warn: (message: string) => void = (message) => console.warn(message),
  ) {}

  /** Lists each server afresh. Throws (for the caller to classify) when a server cannot be reached. */
  async tools(servers: readonly McpServerConfig[]): Promise<ToolDefinition[]> {
    const lists = await Promise.all(servers.map((server) => this.list(server)));
    return lists.flat();
  }

  /** The definition behind an agent-facing name, or undefined when no server of the agent offers it. */
  async tool(servers: readonly McpServerConfig[], name: string): Promise<ToolDefinition | undefined> {
    const target = splitMcpToolName(name, servers);
    if (!target) return undefined;
    const cached = this.known.get(JSON.stringify(target.server))?.get(name);
    if (cached) return cached;
    return (await this.list(target.server)).find((t) => t.name === name);
  }

  private async list(server: McpServerConfig): Promise<ToolDefinition[]> {
    const listing = await this.pool.listTools(server);
    const { tools, skipped } = toolsFromListing(server, listing, this.pool);
    for (const s of skipped) this.warn(`MCP server "${server.name}": tool ${s.tool} is not offered: ${s.reason}`);
    this.known.set(JSON.stringify(server), new Map(tools.map((t) => [t.name, t])));
    return tools;
  }
}
