/**
 * The agent definition's own version: a hash of what decides how the agent behaves (system prompt,
 * model, tool names and schemas, policy, budgets, turn limit, sub-agents, graded outcome), computed from the
 * manifest the run received from its worker. Worker settings (approver keys, whole conversations)
 * are left out: the same agent served by two workers has one version. Sandbox-safe (@noble/hashes).
 */
import { sha256 } from '@noble/hashes/sha2';
import type { AgentManifest } from './agent-manifest';
import { canonicalJson } from './canonical-json';
import { toHex, utf8 } from './decision-proof';

/** 16 hex digits of SHA-256 over the manifest's behaviour (canonical JSON; lenient, never throws). */
export function agentVersionOf(manifest: AgentManifest): string {
  const behaviour = {
    name: manifest.name,
    system: manifest.system,
    model: manifest.model,
    maxTurns: manifest.maxTurns,
    budgets: manifest.budgets ?? null,
    policy: manifest.policy ?? null,
    messagesWhileBusy: manifest.messagesWhileBusy ?? null,
    delegation: manifest.delegation ?? null,
    // Only when set: an agent without an outcome keeps the version it had before outcomes existed.
    ...(manifest.outcome ? { outcome: manifest.outcome } : {}),
    tools: manifest.tools.map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: t.inputSchema,
      effect: t.effect,
      idempotent: t.idempotent,
      timeoutMs: t.timeoutMs,
      maxAttempts: t.maxAttempts,
      fallbacks: t.fallbacks,
      cacheTtlMs: t.cacheTtlMs,
      local: t.local ?? false,
      declaration: t.declaration ?? null,
      readCommands: t.readCommands ?? null,
      delegatesTo: t.delegatesTo ?? null,
    })),
  };
  return toHex(sha256(utf8(canonicalJson(behaviour, { strict: false })))).slice(0, 16);
}
