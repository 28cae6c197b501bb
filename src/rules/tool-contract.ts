/**
 * What a person decided about (issue 51, "a decision binds what was decided"): a call is approved
 * under the tool as the worker had it when the person was asked (its description, input fields,
 * effect, idempotency) and the policy rule that asked. The worker that would run the approved call
 * compares its own tool with that contract, and a tool that changed meanwhile (a build moved under
 * a waiting task, a worker started with other agents) does not run on the old approval: the person
 * is asked again with the difference. Sandbox-safe (@noble/hashes): the workflow passes contracts on.
 */
import { sha256 } from '@noble/hashes/sha2';
import type { ToolManifest } from '../protocol/agent-manifest';
import { canonicalJson } from '../protocol/canonical-json';
import { toHex, utf8 } from '../protocol/decision-proof';
import type { PermissionPolicy } from '../protocol/task';
import type { ToolContract } from '../protocol/tool-contract';
import { toolError, type ToolError } from '../protocol/tool-error';
import { ruleFor } from './tool-gate';

/** The contract of `tool` under `policy`. */
export function toolContractOf(tool: ToolManifest, policy: PermissionPolicy): ToolContract {
  const terms = {
    description: tool.description,
    fields: fieldsOf(tool.inputSchema),
    effect: tool.effect,
    idempotent: tool.idempotent,
    rule: ruleFor(tool.name, tool.effect, policy),
  };
  const hash = toHex(sha256(utf8(canonicalJson({ ...terms, inputSchema: tool.inputSchema }, { strict: false })))).slice(0, 16);
  return { hash, ...terms };
}

/** What changed from `before` to `after`, one phrase per change; empty when the hashes agree. */
export function contractDifference(before: ToolContract, after: ToolContract): string[] {
  if (before.hash === after.hash) return [];
  const changes: string[] = [];
  const added = after.fields.filter((f) => !before.fields.includes(f));
  const removed = before.fields.filter((f) => !after.fields.includes(f));
  if (added.length || removed.length) changes.push(`input fields ${[...added.map((f) => `+${f}`), ...removed.map((f) => `-${f}`)].join(' ')}`);
  if (before.effect !== after.effect) changes.push(`effect ${before.effect} -> ${after.effect}`);
  if (before.idempotent !== after.idempotent) changes.push(`idempotent ${before.idempotent} -> ${after.idempotent}`);
  if (before.rule !== after.rule) changes.push(`policy rule ${before.rule} -> ${after.rule}`);
  if (before.description !== after.description) changes.push('description changed');
  // Same fields, effect, rule and description: something deeper in the schema (a type, a limit, an enum).
  if (changes.length === 0) changes.push('input schema changed (same top-level fields)');
  return changes;
}

function fieldsOf(schema: Record<string, unknown>): string[] {
  const properties = schema.properties;
  if (!properties || typeof properties !== 'object') return [];
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : []);
  return Object.keys(properties)
    .map((name) => (required.has(name) ? name : `${name}?`))
    .sort();
}

/**
 * The refusal of an approved call whose tool no longer matches what the person approved, or
 * undefined when it matches (or the approval carries no contract: older histories).
 */
export function staleApprovalError(toolName: string, approval: { by: string; contract?: ToolContract }, current: ToolContract): ToolError | undefined {
  if (!approval.contract) return undefined;
  const changes = contractDifference(approval.contract, current);
  if (changes.length === 0) return undefined;
  return toolError(
    'policy',
    'decision_stale',
    `${toolName} changed after ${approval.by} approved this call (${changes.join('; ')}); it did not run on that approval.`,
    'A person is asked again with the difference.',
  );
}
