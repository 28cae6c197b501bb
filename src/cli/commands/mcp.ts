/**
 * `durable-agent mcp`: serves the task tools over MCP on stdio, for an MCP client such as Claude Code
 * or Claude Desktop. stdout carries the protocol, so everything else goes to stderr.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { findDecisionSigner, SIGNING_KEY_ENV } from '../../approvers/keys';
import { TaskClient } from '../../client/task-client';
import { BLOB_STORE_ENV, openBlobStore } from '../../blobs/open-blob-store';
import { createTaskToolsServer } from '../../mcp-server/task-tools-server';
import { parse } from '../args';
import { VERB_ARGS } from '../verb-args';
import { usageError } from '../cli-error';
import { connectClient } from '../connect';

export const mcpHelp = `durable-agent mcp [--as NAME [--role ROLE]...] [--blob-store SPEC]
  An MCP server on stdio: start_task, task_status, task_result, list_pending_approvals, approve, deny.
  --as names who answers approvals through it (without it, it answers none); --role adds a role the
  agents' approver rules may name. With a signing key (${SIGNING_KEY_ENV}, or the state dir's
  approvers/signing-key.json) its decisions are signed: whoever configures it vouches for --as and
  --role, as at the CLI. Long tool arguments are read from the workers' blob store (--blob-store, else
  ${BLOB_STORE_ENV}, else the state dir's). Example for Claude Code:
    claude mcp add durable-agent -- npx durable-agent mcp --as alice
  See docs/mcp.md.`;

export async function mcpCommand(argv: string[]): Promise<number> {
  const { values } = parse(argv, VERB_ARGS.mcp.options, VERB_ARGS.mcp.positionals);
  const by = values.as?.trim();
  if (values.as !== undefined && !by) throw usageError('--as must not be blank: it is recorded with every decision');
  if (values.role?.length && !by) throw usageError('--role needs --as NAME');
  const roles = (values.role ?? []).map((r) => r.trim());
  if (roles.some((r) => !/^[\w.-]{1,64}$/.test(r))) throw usageError('--role takes a name of letters, digits, "_", "." or "-" (at most 64)');
  let signer;
  try {
    signer = findDecisionSigner();
  } catch (err) {
    throw usageError((err as Error).message);
  }
  let blobStore;
  try {
    blobStore = openBlobStore(values['blob-store']);
  } catch (err) {
    throw usageError((err as Error).message);
  }
  const plain = await connectClient(values);
  const client = signer ? new TaskClient(plain.client, plain.taskQueue, signer) : plain;
  const { version } = require('../../../package.json') as { version: string };
  const server = createTaskToolsServer({ client, version, blobStore, ...(by ? { identity: { by, roles } } : {}) });
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.on('end', () => resolve());
  });
  await server.connect(transport);
  console.error(`durable-agent mcp: serving task tools on stdio${by ? ` as ${by}` : ' (read-only for approvals: no --as)'}${signer ? `, decisions signed with key ${signer.keyId}` : ''}`);
  await closed;
  await server.close().catch(() => undefined);
  await blobStore.close().catch(() => undefined);
  await client.client.connection.close().catch(() => undefined);
  return 0;
}
