import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { effectOf } from '../../src/mcp/effects';
import { classifyMcpError, McpUnavailableError } from '../../src/mcp/errors';
import { isOffered, mcpServerProblem, splitMcpToolName } from '../../src/mcp/config';
import { defineAgent } from '../../src/agents/define-agent';

test('annotations map to effects failing closed: no annotation is destructive, and only a trusted server lowers the level', () => {
  expect(effectOf(undefined, 'trusted')).toEqual({ effect: 'destructive', idempotent: false });
  expect(effectOf({}, 'trusted')).toEqual({ effect: 'destructive', idempotent: false });
  expect(effectOf({ readOnlyHint: true }, 'trusted')).toEqual({ effect: 'read', idempotent: true });
  expect(effectOf({ readOnlyHint: false, destructiveHint: false, idempotentHint: true }, 'trusted')).toEqual({ effect: 'write', idempotent: true });
  expect(effectOf({ destructiveHint: true, idempotentHint: true }, 'trusted')).toEqual({ effect: 'destructive', idempotent: true });
  // An untrusted server's hints never lower anything, idempotency included.
  expect(effectOf({ readOnlyHint: true, idempotentHint: true }, 'untrusted')).toEqual({ effect: 'destructive', idempotent: false });
  expect(effectOf({ destructiveHint: false }, 'untrusted')).toEqual({ effect: 'destructive', idempotent: false });
  // The agent's own configuration wins: it is not the server's claim.
  expect(effectOf({}, 'untrusted', 'read')).toEqual({ effect: 'read', idempotent: true });
});

test('MCP failures are classified: invalid params -> model, unknown tool and method not found -> permanent, dead connections and timeouts -> transient', () => {
  const c = (err: unknown) => classifyMcpError(err, 'fs').error;
  expect(c(new McpError(ErrorCode.InvalidParams, 'path: expected string'))).toMatchObject({ error_class: 'model', code: 'invalid_arguments' });
  expect(c(new McpError(ErrorCode.InvalidParams, 'Tool nope not found'))).toMatchObject({ error_class: 'permanent', code: 'mcp_unknown_tool' });
  expect(c(new McpError(ErrorCode.MethodNotFound, 'Method not found'))).toMatchObject({ error_class: 'permanent', code: 'mcp_method_not_found' });
  expect(c(new McpError(ErrorCode.ConnectionClosed, 'Connection closed'))).toMatchObject({ error_class: 'transient', code: 'mcp_connection_closed', retryable: true });
  expect(c(new McpError(ErrorCode.RequestTimeout, 'Request timed out'))).toMatchObject({ error_class: 'transient', code: 'timeout' });
  expect(c(new McpUnavailableError('fs', 'spawn failed'))).toMatchObject({ error_class: 'transient', code: 'mcp_server_unavailable' });
  expect(c(Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } }))).toMatchObject({ error_class: 'transient', code: 'connection_refused' });
});

test('server declarations are checked when the agent is defined; names, allow and deny lists resolve tools', () => {
  expect(mcpServerProblem({ name: 'fs', command: 'node' })).toBeUndefined();
  expect(mcpServerProblem({ name: 'a__b', command: 'node' })).toMatch(/without "__"/);
  expect(mcpServerProblem({ name: 'x', command: 'node', url: 'http://127.0.0.1/mcp' })).toMatch(/exactly one/);
  expect(mcpServerProblem({ name: 'x', url: 'ftp://host' })).toMatch(/http/);
  expect(mcpServerProblem({ name: 'x', command: 'node', trust: 'yes' })).toMatch(/trust/);
  expect(mcpServerProblem({ name: 'x', command: 'node', effects: { t: 'harmless' } })).toMatch(/effects.t/);
  const server = { name: 'fs', command: 'node', allow: ['read', 'write'], deny: ['write'] };
  expect(isOffered(server, 'read')).toBe(true);
  expect(isOffered(server, 'write')).toBe(false);
  expect(isOffered(server, 'other')).toBe(false);
  expect(splitMcpToolName('fs__read__x', [server])).toEqual({ server, tool: 'read__x' });
  expect(splitMcpToolName('other__read', [server])).toBeUndefined();
  expect(() =>
    defineAgent({
      name: 'a',
      system: 's',
      tools: [],
      mcpServers: [
        { name: 'fs', command: 'node' },
        { name: 'fs', url: 'http://127.0.0.1/mcp' },
      ],
    }),
  ).toThrow(/two MCP servers/);
});
