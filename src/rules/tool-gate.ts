/**
 * Decides whether a tool call may run, before any activity is scheduled. Fails closed: an unknown
 * tool is refused, an unknown effect counts as destructive, and tool output never approves anything
 * (only the approve update does).
 */
import type { ToolEffect, ToolManifest } from '../protocol/agent-manifest';
import type { PermissionPolicy, PermissionRule } from '../protocol/task';
import { toolError, type ToolError } from '../protocol/tool-error';

export type GateDecision =
  | { action: 'run'; tool: ToolManifest }
  | { action: 'confirm'; tool: ToolManifest; reason: string }
  /** The `auto` rule: a classifier decides allow, deny or ask a person (docs/auto-permissions.md). */
  | { action: 'classify'; tool: ToolManifest; reason: string }
  | { action: 'refuse'; error: ToolError };

const KNOWN_EFFECTS: ToolEffect[] = ['read', 'write', 'destructive'];

export function gateToolCall(name: string, tools: ReadonlyMap<string, ToolManifest>, policy: PermissionPolicy): GateDecision {
  const tool = tools.get(name);
  if (!tool) {
    return {
      action: 'refuse',
      error: toolError('model', 'unknown_tool', `There is no tool named "${name}".`, `Use one of: ${[...tools.keys()].join(', ') || '(no tools)'}.`),
    };
  }
  const effect: ToolEffect = KNOWN_EFFECTS.includes(tool.effect) ? tool.effect : 'destructive';
  const rule = ruleFor(name, effect, policy);
  if (rule === 'allow') return { action: 'run', tool };
  if (rule === 'deny') {
    return {
      action: 'refuse',
      error: toolError('policy', 'not_permitted', `The agent's policy does not allow ${name} (${effect}).`, 'Do not retry it; tell the user it needs doing by someone else.'),
    };
  }
  if (rule === 'auto') return { action: 'classify', tool, reason: `${name} is a ${effect} action; the agent's policy lets a classifier decide.` };
  return { action: 'confirm', tool, reason: `${name} is a ${effect} action; the agent's policy asks a person first.` };
}

/** The rule the policy applies to a call of `name`: the tool's own, else its effect's (reads run, anything else asks by default). */
export function ruleFor(name: string, effect: ToolEffect, policy: PermissionPolicy): PermissionRule {
  const perTool = policy.tools?.[name];
  if (perTool) return perTool;
  if (effect === 'read') return 'allow';
  return (effect === 'write' ? policy.write : policy.destructive) ?? 'confirm';
}
