/**
 * What changed between two versions of an agent, in the words a person deciding again needs: the
 * tools it gained or lost (what a resumed agent could newly do), the tools whose contract changed,
 * its permission policy, prompt, model and budgets. Sandbox-safe: the workflow calls it when an
 * unblock meets a worker whose agent is no longer the one the block was raised under.
 */
import type { AgentManifest } from '../protocol/agent-manifest';
import { agentVersionOf } from '../protocol/agent-version';
import { canonicalJson } from '../protocol/canonical-json';
import { contractDifference, toolContractOf } from './tool-contract';

/** One phrase per change from `before` to `after`; empty when their versions agree. */
export function agentDifference(before: AgentManifest, after: AgentManifest): string[] {
  const from = agentVersionOf(before);
  const to = agentVersionOf(after);
  if (from === to) return [];
  const changes = [`agent version ${from} -> ${to}`];
  const beforeTools = new Map(before.tools.map((t) => [t.name, t]));
  const afterTools = new Map(after.tools.map((t) => [t.name, t]));
  const gained = [...afterTools.keys()].filter((name) => !beforeTools.has(name));
  const lost = [...beforeTools.keys()].filter((name) => !afterTools.has(name));
  if (gained.length) changes.push(`tools gained: ${gained.map((name) => `${name} (${afterTools.get(name)!.effect})`).join(', ')}`);
  if (lost.length) changes.push(`tools lost: ${lost.join(', ')}`);
  for (const [name, tool] of afterTools) {
    const earlier = beforeTools.get(name);
    if (!earlier) continue;
    const changed = contractDifference(toolContractOf(earlier, before.policy ?? {}), toolContractOf(tool, after.policy ?? {}));
    if (changed.length) changes.push(`${name}: ${changed.join(', ')}`);
  }
  if (!same(before.policy, after.policy)) changes.push('permission policy changed');
  if (before.system !== after.system) changes.push('system prompt changed');
  if (!same(before.model, after.model)) changes.push('model changed');
  if (!same(before.budgets, after.budgets) || before.maxTurns !== after.maxTurns) changes.push('budgets changed');
  return changes;
}

function same(a: unknown, b: unknown): boolean {
  return canonicalJson(a ?? null, { strict: false }) === canonicalJson(b ?? null, { strict: false });
}
