import type { ToolEffect } from './agent-manifest';

/**
 * A tool as a person was asked to approve a call of it (rules/tool-contract.ts computes and compares
 * them): what the difference names when the tool changed before the approved call ran.
 */
export interface ToolContract {
  /** 16 hex digits over everything below and the full input schema. */
  hash: string;
  description: string;
  /** The input's top-level fields, `name` or `name?` for an optional one, sorted. */
  fields: string[];
  effect: ToolEffect;
  idempotent: boolean;
  /** The policy rule that applies to the tool (allow, confirm, auto, deny). */
  rule: string;
}
