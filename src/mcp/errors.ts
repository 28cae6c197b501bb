/**
 * What an MCP failure means for the call, in the project's one taxonomy (protocol/tool-error.ts):
 * the server's answer (JSON-RPC error codes) first, the transport's failures next, the generic
 * classifier (Node codes, HTTP status, message text) last.
 */
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { classify, messageOf, type Classified } from '../errors/classify';
import { HttpStatusError } from '../errors/tool-failure';
import { toolError } from '../protocol/tool-error';
import { DurableAgentError } from '../errors/durable-agent-error';
import { CredentialUnavailableError } from '../vault/credentials';

/** The server could not be started or reached, or its connection died: another attempt starts or reaches it anew. */
export class McpUnavailableError extends DurableAgentError {
  readonly code = 'mcp_unavailable';
  constructor(
    readonly server: string,
    message: string,
    override readonly cause?: unknown,
  ) {
    super(message);
  }
}

const SENT_MAYBE = 'The call may have reached the server and taken effect before the connection died.';

export function classifyMcpError(err: unknown, server: string): Classified {
  // A credential that could not be had (its Authorization header): what the vault said, whatever wrapped it.
  for (let cause = err, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth++) {
    if (cause instanceof CredentialUnavailableError) return { error: cause.toolError };
  }
  if (err instanceof McpUnavailableError) {
    return {
      error: toolError('transient', 'mcp_server_unavailable', `MCP server "${server}" is unavailable: ${err.message}`, 'The server is restarted or reconnected on the next attempt.'),
    };
  }
  if (err instanceof McpError) return classifyJsonRpc(err, server);
  if (err instanceof StreamableHTTPError) {
    if (err.code === 404) {
      // The server forgot the session (it restarted): a new connection starts a new one.
      return { error: toolError('transient', 'mcp_session_expired', `MCP server "${server}" no longer knows this session: ${err.message}`, 'A new session is started on the next attempt.') };
    }
    if (err.code !== undefined && err.code >= 100) return classify(new HttpStatusError(err.code, err.message));
  }
  return classify(err);
}

function classifyJsonRpc(err: McpError, server: string): Classified {
  const message = err.message.replace(/^MCP error -?\d+: /, '');
  switch (err.code) {
    case ErrorCode.ConnectionClosed:
      return {
        error: toolError(
          'transient',
          'mcp_connection_closed',
          `The connection to MCP server "${server}" closed mid-call (${message}). ${SENT_MAYBE}`,
          'The server is restarted or reconnected on the next attempt.',
        ),
      };
    case ErrorCode.RequestTimeout:
      return { error: toolError('transient', 'timeout', `MCP server "${server}" did not answer in time (${message}). ${SENT_MAYBE}`, 'The call timed out; it may or may not have taken effect.') };
    case ErrorCode.MethodNotFound:
      return { error: toolError('permanent', 'mcp_method_not_found', `MCP server "${server}" does not support this: ${message}`, 'This server cannot do it; use another tool.') };
    case ErrorCode.InvalidParams:
      // Servers answer a call to a tool they do not have with "invalid params" too; that is no argument to fix.
      if (/\b(unknown tool|tool\b.*\bnot found|no such tool)/i.test(message)) {
        return { error: toolError('permanent', 'mcp_unknown_tool', `MCP server "${server}": ${message}`, 'The server no longer offers this tool; use another one.') };
      }
      return {
        error: toolError(
          'model',
          'invalid_arguments',
          `MCP server "${server}" rejected the arguments: ${message}`,
          'Call the tool again with corrected arguments; the schema is in the tool definition.',
        ),
      };
    case ErrorCode.InvalidRequest:
    case ErrorCode.ParseError:
      return {
        error: toolError('permanent', 'mcp_protocol_error', `MCP server "${server}" refused the request: ${message}`, 'This is a client/server mismatch, not your arguments; use another tool.'),
      };
    default: {
      // InternalError and servers' own codes: their text says more than the code.
      const classified = classify(new Error(message));
      return classified.error.code === 'tool_failed'
        ? { error: toolError('permanent', 'mcp_server_error', `MCP server "${server}" failed: ${messageOf(err)}`, 'The server failed on this call; try another approach.') }
        : classified;
    }
  }
}
