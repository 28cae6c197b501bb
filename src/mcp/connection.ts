/**
 * One live connection to one MCP server (a child process over stdio, or a Streamable HTTP session):
 * lists its tools, calls them with progress, cancellation and a timeout, and answers the server's
 * questions (elicitation) from the answers a person already gave, or stops the call to ask one.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, ElicitRequestSchema, type CallToolResult, type ElicitResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ToolQuestion, ToolQuestionAnswer } from '../protocol/activity-contracts';
import { NeedsInputError } from '../tools/needs-input';
import { isHttpServer, type McpServerConfig } from './config';
import { McpUnavailableError } from './errors';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

export interface McpProgress {
  progress: number;
  total?: number;
  message?: string;
}

export interface McpCallOptions {
  /** Per attempt; the SDK sends notifications/cancelled when it passes. */
  timeoutMs: number;
  /** The activity's cancellation: aborting it sends notifications/cancelled. */
  signal?: AbortSignal;
  onProgress?: (progress: McpProgress) => void;
  /** Answers to this call's earlier questions, in the order asked. */
  answers?: ToolQuestionAnswer[];
}

/** The value of a `vault:NAME` reference, asked at each request (throws CredentialUnavailableError when there is none). */
export type McpCredentialSource = (ref: string, label: string) => Promise<string>;

/** fetch with `Authorization: Bearer <the reference's value now>`: a rotated or revoked token reaches the next request. */
function authorizedFetch(server: string, ref: string, credentials: McpCredentialSource | undefined): FetchLike {
  return async (url, init) => {
    if (!credentials) throw new Error(`MCP server "${server}" names ${ref} for its Authorization header, but this connection pool has no vault (give the worker a vault)`);
    const token = await credentials(ref, `The Authorization of MCP server "${server}"`);
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${token}`);
    return fetch(url, { ...init, headers });
  };
}

/** How long starting (or reaching) a server and the MCP handshake may take. */
const CONNECT_TIMEOUT_MS = 20_000;
const LIST_TIMEOUT_MS = 30_000;
const MAX_LIST_PAGES = 50;
/** Questions are shown to people and stored in history: longer ones are cut. */
const MAX_QUESTION_CHARS = 2_000;
const STDERR_TAIL_CHARS = 2_000;

interface ActiveCall {
  asked: number;
  answers: ToolQuestionAnswer[];
  controller: AbortController;
  question?: ToolQuestion;
}

export class McpConnection {
  private readonly calls = new Set<ActiveCall>();
  private stderrTail = '';
  private closedBy?: string;
  lastUsedAt = Date.now();

  private constructor(
    readonly server: McpServerConfig,
    private readonly client: Client,
    private readonly transport: StdioClientTransport | StreamableHTTPClientTransport,
  ) {}

  /**
   * Starts (stdio) or reaches (HTTP) the server and does the MCP handshake; McpUnavailableError if it
   * cannot. `credentials` resolves an HTTP server's `authorization` reference, at every request.
   */
  static async open(server: McpServerConfig, onClosed: (connection: McpConnection) => void, credentials?: McpCredentialSource): Promise<McpConnection> {
    const client = new Client({ name: 'durable-agent', version: '0.1.0' }, { capabilities: { elicitation: {} } });
    const transport = isHttpServer(server)
      ? new StreamableHTTPClientTransport(new URL(server.url), {
          requestInit: { headers: server.headers ?? {} },
          ...(server.authorization !== undefined ? { fetch: authorizedFetch(server.name, server.authorization, credentials) } : {}),
        })
      : new StdioClientTransport({
          command: server.command,
          args: server.args ?? [],
          ...(server.env ? { env: server.env } : {}),
          ...(server.cwd ? { cwd: server.cwd } : {}),
          stderr: 'pipe',
        });
    const connection = new McpConnection(server, client, transport);
    if (transport instanceof StdioClientTransport) {
      transport.stderr?.on('data', (chunk: Buffer) => {
        connection.stderrTail = (connection.stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL_CHARS);
      });
    }
    client.onclose = () => {
      connection.closedBy ??= 'the connection closed';
      onClosed(connection);
    };
    client.setRequestHandler(ElicitRequestSchema, async (request) => connection.elicit(request.params));
    try {
      await client.connect(transport, { timeout: CONNECT_TIMEOUT_MS });
    } catch (err) {
      await client.close().catch(() => undefined);
      const tail = connection.stderrTail.trim().split('\n').slice(-3).join(' | ');
      throw new McpUnavailableError(server.name, `${(err as Error).message}${tail ? ` (server stderr: ${tail})` : ''}`, err);
    }
    return connection;
  }

  get isOpen(): boolean {
    return this.closedBy === undefined;
  }

  get busy(): boolean {
    return this.calls.size > 0;
  }

  /** The server's process id (stdio), for operators and tests. */
  get pid(): number | undefined {
    return this.transport instanceof StdioClientTransport ? (this.transport.pid ?? undefined) : undefined;
  }

  async listTools(): Promise<Tool[]> {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const result = await this.client.listTools(cursor ? { cursor } : {}, { timeout: LIST_TIMEOUT_MS });
      tools.push(...result.tools);
      cursor = result.nextCursor;
      if (!cursor) break;
    }
    this.lastUsedAt = Date.now();
    return tools;
  }

  /**
   * Calls a tool. Throws NeedsInputError when the server asks a question this call has no answer
   * for yet: the call is cancelled on the server (notifications/cancelled) and asked again later.
   */
  async callTool(name: string, args: unknown, options: McpCallOptions): Promise<CallToolResult> {
    const call: ActiveCall = { asked: 0, answers: options.answers ?? [], controller: new AbortController() };
    const abortFromOutside = () => call.controller.abort(options.signal?.reason);
    if (options.signal?.aborted) abortFromOutside();
    options.signal?.addEventListener('abort', abortFromOutside);
    this.calls.add(call);
    try {
      // request(), not callTool(): the SDK's own output check would blame the arguments for a
      // server's bad output; the guard validates outputSchema itself (schema_mismatch).
      return (await this.client.request({ method: 'tools/call', params: { name, arguments: (args ?? {}) as Record<string, unknown> } }, CallToolResultSchema, {
        signal: call.controller.signal,
        timeout: options.timeoutMs,
        ...(options.onProgress
          ? {
              onprogress: (p: McpProgress) => options.onProgress!({ progress: p.progress, ...(p.total !== undefined ? { total: p.total } : {}), ...(p.message ? { message: p.message } : {}) }),
            }
          : {}),
      })) as CallToolResult;
    } catch (err) {
      if (call.question) throw new NeedsInputError(call.question);
      throw err;
    } finally {
      this.calls.delete(call);
      options.signal?.removeEventListener('abort', abortFromOutside);
      this.lastUsedAt = Date.now();
    }
  }

  async close(reason = 'closed by the worker'): Promise<void> {
    this.closedBy ??= reason;
    await this.client.close().catch(() => undefined);
  }

  /**
   * elicitation/create. MCP does not say which call a question belongs to; with one call running on
   * this connection it is that call's, with several it cannot be told and is declined.
   */
  private async elicit(params: Record<string, unknown>): Promise<ElicitResult> {
    const [call, ...others] = [...this.calls];
    if (!call || others.length > 0 || (params.mode !== undefined && params.mode !== 'form')) return { action: 'decline' };
    const message = String(params.message ?? '').slice(0, MAX_QUESTION_CHARS);
    const index = call.asked++;
    const answer = call.answers[index];
    if (answer && answer.message === message) {
      return answer.action === 'accept' ? { action: 'accept', content: (answer.content ?? {}) as ElicitResult['content'] } : { action: answer.action };
    }
    const requestedSchema = (typeof params.requestedSchema === 'object' && params.requestedSchema !== null ? params.requestedSchema : { type: 'object', properties: {} }) as Record<string, unknown>;
    call.question = { server: this.server.name, message, requestedSchema, index };
    // Stop the call (the SDK tells the server with notifications/cancelled); a person answers durably.
    call.controller.abort(new Error("waiting for a person to answer the server's question"));
    return { action: 'cancel' };
  }
}
