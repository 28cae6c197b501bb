/**
 * How an agent declares an MCP server: a command to launch (stdio) or a URL (Streamable HTTP), how
 * far its annotations are believed (trust), and which of its tools the agent gets.
 */
import type { ToolEffect } from '../protocol/agent-manifest';

/**
 * `trusted`: the server's readOnlyHint and idempotentHint are believed (its code is yours or
 * vetted). `untrusted` (the default): no hint lowers a tool's level, so every tool is a
 * non-idempotent destructive action that waits for a person unless the policy says otherwise.
 */
export type McpTrust = 'trusted' | 'untrusted';

interface McpServerCommon {
  /** Tools are offered as `<name>__<tool>`. Letters, digits, `_` and `-` (no `__`), 1-30 characters. */
  name: string;
  /** Default 'untrusted'. */
  trust?: McpTrust;
  /** Offer only these tools (the server's own names). Default: all. */
  allow?: string[];
  /** Never offer these tools (the server's own names); wins over `allow`. */
  deny?: string[];
  /**
   * Your own effect for a tool (the server's name), in place of what its annotations say: this is
   * your configuration, not the server's word, so it may lower the level, e.g. `{ read_graph: 'read' }`.
   */
  effects?: Record<string, ToolEffect>;
  /** Per call attempt, in ms; progress notifications do not extend it. Default 60 000. */
  timeoutMs?: number;
}

export interface McpStdioServer extends McpServerCommon {
  /** Launched on the worker on first use (e.g. `process.execPath`), restarted when it dies. */
  command: string;
  args?: string[];
  /** Added to a minimal environment (PATH, HOME...): the worker's own variables are not passed on. */
  env?: Record<string, string>;
  cwd?: string;
}

export interface McpHttpServer extends McpServerCommon {
  /** A Streamable HTTP endpoint, e.g. `http://127.0.0.1:3001/mcp`. */
  url: string;
  /** Sent with every request. A secret belongs in `authorization`, not here: headers are plain configuration. */
  headers?: Record<string, string>;
  /**
   * A vault reference, `vault:NAME`: its value is sent as `Authorization: Bearer <value>` with every
   * request, read from the worker's vault at each request (a revoked entry stops the next one), so
   * the token is in no configuration file, history or log (docs/credentials.md).
   */
  authorization?: string;
}

export type McpServerConfig = McpStdioServer | McpHttpServer;

export const DEFAULT_MCP_TIMEOUT_MS = 60_000;
export const MCP_NAME_SEPARATOR = '__';
const SERVER_NAME = /^[a-zA-Z0-9_-]{1,30}$/;
const EFFECTS: ToolEffect[] = ['read', 'write', 'destructive'];

export function isHttpServer(config: McpServerConfig): config is McpHttpServer {
  return typeof (config as McpHttpServer).url === 'string';
}

/** The agent-facing name of a server's tool. */
export function mcpToolName(server: string, tool: string): string {
  return `${server}${MCP_NAME_SEPARATOR}${tool}`;
}

/** Which server and tool an agent-facing name stands for, among the agent's servers. */
export function splitMcpToolName(name: string, servers: readonly McpServerConfig[]): { server: McpServerConfig; tool: string } | undefined {
  const at = name.indexOf(MCP_NAME_SEPARATOR);
  if (at <= 0) return undefined;
  const server = servers.find((s) => s.name === name.slice(0, at));
  return server ? { server, tool: name.slice(at + MCP_NAME_SEPARATOR.length) } : undefined;
}

/** Whether the agent is offered this tool of the server (deny wins over allow). */
export function isOffered(server: McpServerConfig, tool: string): boolean {
  if (server.deny?.includes(tool)) return false;
  return !server.allow || server.allow.includes(tool);
}

/** What is wrong with one server declaration, or undefined. Checked when the agent is defined. */
export function mcpServerProblem(config: unknown): string | undefined {
  if (typeof config !== 'object' || config === null || Array.isArray(config)) return 'must be an object';
  const c = config as Record<string, unknown>;
  if (typeof c.name !== 'string' || !SERVER_NAME.test(c.name) || c.name.includes(MCP_NAME_SEPARATOR)) {
    return `name ${JSON.stringify(c.name)} must be 1-30 letters, digits, "_" or "-", without "__"`;
  }
  const label = `"${c.name}"`;
  const hasCommand = c.command !== undefined;
  const hasUrl = c.url !== undefined;
  if (hasCommand === hasUrl) return `${label} needs exactly one of command (stdio) or url (Streamable HTTP)`;
  if (hasCommand) {
    if (typeof c.command !== 'string' || !c.command) return `${label}: command must be a non-empty string`;
    if (c.args !== undefined && !isStringArray(c.args)) return `${label}: args must be an array of strings`;
    if (c.env !== undefined && !isStringRecord(c.env)) return `${label}: env must map names to strings`;
    if (c.cwd !== undefined && typeof c.cwd !== 'string') return `${label}: cwd must be a string`;
    if (c.headers !== undefined || c.authorization !== undefined) return `${label}: headers and authorization are for url servers`;
  } else {
    if (typeof c.url !== 'string' || !/^https?:\/\//.test(c.url)) return `${label}: url must be an http(s) URL`;
    try {
      new URL(c.url);
    } catch {
      return `${label}: url ${JSON.stringify(c.url)} is not a URL`;
    }
    if (c.headers !== undefined && !isStringRecord(c.headers)) return `${label}: headers must map names to strings`;
    if (c.authorization !== undefined) {
      if (typeof c.authorization !== 'string' || !/^vault:[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(c.authorization)) {
        // Never echo it: someone may have pasted the token itself.
        return `${label}: authorization must be a vault reference "vault:NAME" (the token itself goes in the vault: durable-agent vault set NAME)`;
      }
      if (Object.keys(c.headers ?? {}).some((h) => h.toLowerCase() === 'authorization')) return `${label}: give the Authorization header either in headers or as authorization, not both`;
    }
    if (c.args !== undefined || c.env !== undefined || c.cwd !== undefined) return `${label}: args, env and cwd are for command servers`;
  }
  if (c.trust !== undefined && c.trust !== 'trusted' && c.trust !== 'untrusted') return `${label}: trust must be "trusted" or "untrusted"`;
  if (c.allow !== undefined && !isStringArray(c.allow)) return `${label}: allow must be an array of tool names`;
  if (c.deny !== undefined && !isStringArray(c.deny)) return `${label}: deny must be an array of tool names`;
  if (c.effects !== undefined) {
    if (typeof c.effects !== 'object' || c.effects === null || Array.isArray(c.effects)) return `${label}: effects must map tool names to read, write or destructive`;
    for (const [tool, effect] of Object.entries(c.effects)) {
      if (!EFFECTS.includes(effect as ToolEffect)) return `${label}: effects.${tool} must be read, write or destructive`;
    }
  }
  if (c.timeoutMs !== undefined && !(typeof c.timeoutMs === 'number' && Number.isInteger(c.timeoutMs) && c.timeoutMs >= 1_000)) {
    return `${label}: timeoutMs must be an integer >= 1000`;
  }
  return undefined;
}

/** Identifies one connection: two agents declaring the same server share it. */
export function connectionKey(config: McpServerConfig): string {
  return isHttpServer(config)
    ? JSON.stringify(['http', config.url, config.headers ?? {}, config.authorization ?? ''])
    : JSON.stringify(['stdio', config.command, config.args ?? [], config.env ?? {}, config.cwd ?? '']);
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string');
}

function isStringRecord(value: unknown): value is Record<string, string> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.values(value).every((v) => typeof v === 'string');
}
