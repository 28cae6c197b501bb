/**
 * One function decides how much a person is involved (seed 001's rules): `auto` recovers silently,
 * `inform` recovers and notifies, `confirm` asks before going on, `block` stops until a person acts.
 */
import type { ToolEffect } from '../../protocol/agent-manifest';
import type { EscalationLevel } from '../../protocol/task';
import type { ToolError } from '../../protocol/tool-error';

export type EscalationTrigger =
  | {
      kind: 'tool_error';
      error: ToolError;
      effect: ToolEffect;
      idempotent?: boolean;
      /** The write may have taken effect (see outcome-unknown.ts); without it, a timeout is taken to mean so. */
      outcomeUnknown?: boolean;
    }
  | { kind: 'fallback_used' }
  | { kind: 'model_failed'; error: ToolError }
  | { kind: 'guard'; code: 'turn_budget' | 'tool_call_budget' | 'loop_detected' | 'correction_budget' };

export const TRANSIENT_ATTEMPTS_WORTH_TELLING = 3;

export function escalationLevel(trigger: EscalationTrigger): EscalationLevel {
  switch (trigger.kind) {
    case 'guard':
      // Budgets and the loop guard: going on would spend more for nothing.
      return 'block';
    case 'model_failed':
      // A broken scripted model or an unknown model name is a bug in the task's setup: no person
      // can fix it inside this task, so it fails. Anything else (a revoked key, a spend limit, an
      // outage outlasting the retries) a person can fix, then unblock.
      return /^(script_|unknown_model)/.test(trigger.error.code) ? 'auto' : 'block';
    case 'fallback_used':
      return 'inform';
    case 'tool_error': {
      const { error, effect } = trigger;
      if (error.error_class === 'resource') return 'block';
      // A write that timed out (its worker may have died mid-call) may or may not have happened;
      // retrying blindly could do it twice, so a person checks.
      if ((trigger.outcomeUnknown ?? error.code === 'timeout') && effect !== 'read' && !trigger.idempotent) return 'block';
      if (error.error_class === 'transient' && error.attempts >= TRANSIENT_ATTEMPTS_WORTH_TELLING) return 'inform';
      if (error.error_class === 'model' && effect === 'destructive') return 'confirm';
      return 'auto';
    }
  }
}
