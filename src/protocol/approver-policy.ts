/**
 * Who may decide what: the `approvers` part of an agent's policy, read by the workflow's update
 * validators and by front ends (the inbox shows a person only what they may answer). Pure and
 * sandbox-safe.
 */
import type { ToolEffect } from './tool-effect';

/**
 * Lists of people (`alice`) and roles (`role:finance`). A list that is absent lets any identity
 * decide (a verified one when the task verifies approvers); an empty list lets nobody.
 */
export interface ApproverRules {
  /** Per tool; wins over the lists per effect. */
  tools?: Record<string, string[]>;
  read?: string[];
  write?: string[];
  destructive?: string[];
  /** Who may unblock a blocked task. */
  unblock?: string[];
  /** Whose messages reach the model (when the task verifies approvers). */
  message?: string[];
  /**
   * Who may branch a task: fork, rewind, replay and export it (docs/fork.md). Absent: anyone (a
   * verified signer when the agent also has `forbidSelfApproval`, whose tasks need signed starts).
   */
  branch?: string[];
}

/** What branching a task means here: each a decision the `approvers.branch` list governs. */
export type BranchAction = 'fork' | 'rewind' | 'replay' | 'export';

export interface ApproverIdentity {
  id: string;
  roles: string[];
}

export type PolicedDecision = { kind: 'approve' | 'deny'; tool: string; effect: ToolEffect } | { kind: 'unblock' } | { kind: 'message' };

export interface ApproverPolicy {
  approvers?: ApproverRules;
  forbidSelfApproval?: boolean;
}

/** The list that governs approving or denying a call of `tool`, or undefined (anyone). */
export function approversForTool(rules: ApproverRules | undefined, tool: string, effect: ToolEffect): string[] | undefined {
  if (!rules) return undefined;
  return rules.tools?.[tool] ?? rules[effect];
}

export function listAllows(list: readonly string[], who: ApproverIdentity): boolean {
  return list.some((entry) => (entry.startsWith('role:') ? who.roles.includes(entry.slice(5)) : entry === who.id));
}

/**
 * Why `who` may not take this decision under `policy`, or undefined. `starter` is the task's
 * starter as far as the task knows it (forbidSelfApproval compares against it).
 */
export function approverProblem(policy: ApproverPolicy | undefined, decision: PolicedDecision, who: ApproverIdentity, starter?: string): string | undefined {
  const list = decision.kind === 'approve' || decision.kind === 'deny' ? approversForTool(policy?.approvers, decision.tool, decision.effect) : policy?.approvers?.[decision.kind];
  const whoText = `${who.id}${who.roles.length ? ` (roles: ${who.roles.join(', ')})` : ' (no roles)'}`;
  if (list && !listAllows(list, who)) {
    const what = decision.kind === 'approve' || decision.kind === 'deny' ? `${decision.kind} ${decision.tool} (${decision.effect})` : decision.kind;
    return `${whoText} may not ${what} on this task: the agent's policy allows ${list.length ? list.join(', ') : 'nobody'}`;
  }
  if (decision.kind === 'approve' && policy?.forbidSelfApproval && starter !== undefined && starter === who.id) {
    return `${who.id} started this task, and the agent's policy forbids approving one's own task (forbidSelfApproval); someone else must approve`;
  }
  return undefined;
}

/** Problems of an `approvers` policy as an agent declares it, or undefined (defineAgent checks it). */
export function approverRulesProblem(rules: unknown): string | undefined {
  if (rules === undefined) return undefined;
  if (rules === null || typeof rules !== 'object' || Array.isArray(rules)) return '`approvers` must be an object';
  const r = rules as Record<string, unknown>;
  const listProblem = (name: string, list: unknown) =>
    Array.isArray(list) && list.every((e) => typeof e === 'string' && e.length > 0 && e !== 'role:') ? undefined : `\`approvers.${name}\` must be a list of ids and 'role:NAME' entries`;
  for (const [name, value] of Object.entries(r)) {
    if (name === 'tools') {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return '`approvers.tools` must map tool names to lists';
      for (const [tool, list] of Object.entries(value as Record<string, unknown>)) {
        const problem = listProblem(`tools.${tool}`, list);
        if (problem) return problem;
      }
    } else if (['read', 'write', 'destructive', 'unblock', 'message', 'branch'].includes(name)) {
      const problem = listProblem(name, value);
      if (problem) return problem;
    } else return `unknown field \`approvers.${name}\` (tools, read, write, destructive, unblock, message, branch)`;
  }
  return undefined;
}

/** Who asks to branch a task: `verified` when a key the task trusts vouches for them (a signed fork start, a CLI with such a key). */
export interface BranchRequester extends ApproverIdentity {
  verified: boolean;
}

/**
 * Why `who` may not fork, rewind, replay or export a task of an agent with this policy, or
 * undefined. `verifying`: the task trusts signing keys (its manifest has approverKeys). With keys,
 * an agent that names `approvers.branch`, or that needs signed starts (`forbidSelfApproval`), needs
 * a verified requester; the list, when present, must allow them (without keys, by the claimed id).
 * Pure: the CLI checks it before anything is created, and a fork's first run checks it again.
 */
export function branchProblem(policy: ApproverPolicy | undefined, action: BranchAction, who: BranchRequester, verifying: boolean): string | undefined {
  const list = policy?.approvers?.branch;
  const whoText = `${who.id}${who.roles.length ? ` (roles: ${who.roles.join(', ')})` : ' (no roles)'}`;
  if (verifying && (list || policy?.forbidSelfApproval) && !who.verified) {
    const why = list ? `its policy names who may branch it (approvers.branch: ${list.length ? list.join(', ') : 'nobody'})` : 'it requires signed starts (forbidSelfApproval)';
    return `${action} refused: ${whoText} is not a verified signer, and this task's agent ${why}; ${action} through a front end holding a key the task trusts`;
  }
  if (list && !listAllows(list, who)) return `${action} refused: ${whoText} may not ${action} this task: the agent's policy allows ${list.length ? list.join(', ') : 'nobody'} (approvers.branch)`;
  return undefined;
}
