/**
 * MCP tool annotations -> the engine's effect, failing closed. Annotations are the server's claims:
 * MCP's own defaults make an unannotated tool a destructive, non-idempotent one, and a server the
 * agent does not trust cannot talk its way down to "read only" or "safe to retry".
 */
import type { ToolEffect } from '../protocol/agent-manifest';
import type { McpTrust } from './config';

export interface McpToolAnnotations {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export interface McpEffect {
  effect: ToolEffect;
  idempotent: boolean;
}

/**
 * | annotations                                   | trusted            | untrusted          |
 * |-----------------------------------------------|--------------------|--------------------|
 * | none, or destructiveHint true/absent          | destructive        | destructive        |
 * | readOnlyHint true                             | read               | destructive        |
 * | readOnlyHint false, destructiveHint false     | write              | destructive        |
 * | idempotentHint true                           | idempotent         | not idempotent     |
 * `override` (the agent's own `effects` entry) wins: it is configuration, not a claim.
 */
export function effectOf(annotations: McpToolAnnotations | undefined, trust: McpTrust, override?: ToolEffect): McpEffect {
  const a = annotations ?? {};
  const trusted = trust === 'trusted';
  const idempotent = trusted && a.idempotentHint === true;
  if (override) return { effect: override, idempotent: override === 'read' || idempotent };
  if (!trusted) return { effect: 'destructive', idempotent: false };
  if (a.readOnlyHint === true) return { effect: 'read', idempotent: true };
  // MCP: destructiveHint defaults to true and only means something for a tool that is not read-only.
  if (a.destructiveHint === false) return { effect: 'write', idempotent };
  return { effect: 'destructive', idempotent };
}
