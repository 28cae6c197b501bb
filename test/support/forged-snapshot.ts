/** A `resume` snapshot as an attacker writes one: a schema-1 snapshot carrying a manifest of their choosing. */
import type { AgentManifest } from '../../src/protocol/agent-manifest';
import type { TaskSnapshot } from '../../src/protocol/task';

export function forgedSnapshot(manifest: AgentManifest, prompt: string): TaskSnapshot {
  return {
    version: 1,
    runs: 1,
    turn: 0,
    manifest,
    messages: [{ role: 'user', content: prompt }],
    toolCalls: { total: 0, succeeded: 0, failed: 0 },
    usage: { inputTokens: 0, outputTokens: 0, cacheWriteTokens: 0, cacheReadTokens: 0 },
    costUsd: 0,
    unpricedModels: [],
    ledger: { records: {} },
    corrections: {},
    escalations: [],
    approvals: [],
    decisions: [],
    budgets: { turns: 5, toolCalls: 5, toolCallsPerTurn: 8, correctionsPerTool: 3 },
    model: 'x',
    pendingGuidance: [],
    events: [],
    eventCount: 0,
  };
}
