/**
 * What the verbs that send a request print with --json (approve, deny, unblock, message,
 * interrupt, cancel): one object whose `outcome` says what happened, as zod schemas. The published
 * JSON Schemas are generated from these (src/cli/json-schemas.ts), and the checks at the bottom make
 * tsc refuse a schema that differs from the types the verbs print.
 */
import { z } from 'zod';
import type { CancelOutcome, DecisionAhead, SteeringOutcome } from '../client/request-outcome';
import type { DecisionOutcome } from '../client/send-decision';
import type { ApprovalAnswer } from '../protocol/task';
import type { Exact, Jsonified } from './json-output';

/** `{ taskId, outcome: 'refused', reason }`, exit 1: the task or the client refused it, or the task is closed; nothing changed. */
export const refusedJson = z
  .strictObject({ taskId: z.string(), outcome: z.literal('refused'), reason: z.string() })
  .meta({ id: 'Refused', description: 'Refused (exit 1): it broke a rule, or the task is closed; nothing changed.' });

const decidedOn = z.string().optional().meta({ description: "Set when the decision named a sub-agent child's approval or block: the child task it went to." });
const answer = z.union([z.strictObject({ approvalId: z.string(), decision: z.enum(['approved', 'denied']) }), z.strictObject({ resumed: z.literal(true), escalationId: z.string() })]);
const ahead = z.strictObject({ action: z.enum(['approve', 'deny', 'unblock']), by: z.string() });

const decisionApplied = z.strictObject({ outcome: z.literal('applied'), applied: z.literal(true), answer, decidedOn });
const decisionRecorded = z.strictObject({
  outcome: z.literal('recorded'),
  applied: z.literal(false),
  recorded: z.literal(true),
  taskQueue: z.string(),
  note: z.string(),
  decidedOn,
  behind: z.array(ahead).optional().meta({ description: 'The decisions recorded first on the same approval (or block) and not yet judged: if one of them is taken, this one is superseded.' }),
});

/** approve, deny, unblock: applied (exit 0), recorded without a worker (exit 5), or refused (exit 1). */
export const decisionOutputJson = z.union([decisionApplied, decisionRecorded, refusedJson]).meta({
  title: 'DecisionOutput',
  description: '`durable-agent approve|deny|unblock TASK_ID ... --json`: applied (exit 0), recorded without a worker (exit 5) or refused (exit 1).',
});

const steeringSent = z.strictObject({
  taskId: z.string(),
  outcome: z.enum(['applied', 'queued', 'recorded', 'refused']),
  cancelledModelCall: z.boolean().optional().meta({ description: 'Whether it cancelled a model call in flight (the model is called again with it at once); false: it waits for the next call.' }),
  reason: z.string().optional().meta({ description: 'Why it was refused, as the task recorded it.' }),
  note: z.string().meta({ description: 'One line for a person.' }),
  signed: z.boolean().meta({ description: 'Whether it was signed with an approver key.' }),
});

/** message, interrupt: applied or queued (exit 0), recorded without a worker (exit 5), refused (exit 1). */
export const steeringOutputJson = z.union([steeringSent, refusedJson]).meta({
  title: 'SteeringOutput',
  description: '`durable-agent message|interrupt TASK_ID TEXT ... --json`: applied or queued (exit 0), recorded without a worker (exit 5), or refused (exit 1).',
});

const cancelSent = z.strictObject({ taskId: z.string(), outcome: z.enum(['applied', 'queued', 'recorded']), note: z.string() });

/** cancel: applied or queued (exit 0), recorded without a worker (exit 5), refused when the task is closed (exit 1). */
export const cancelOutputJson = z.union([cancelSent, refusedJson]).meta({
  title: 'CancelOutput',
  description: '`durable-agent cancel TASK_ID --json`: applied (closed) or queued (stopping) (exit 0), recorded without a worker (exit 5), or refused (exit 1).',
});

// ---- tsc refuses a schema that differs from the type the verbs print.
type Printed<O extends DecisionOutcome> = O extends { applied: true } ? O & { outcome: 'applied' } : O & { outcome: 'recorded'; behind?: DecisionAhead[] };
const sameAnswer: Exact<z.infer<typeof answer>, ApprovalAnswer | { resumed: true; escalationId: string }> = true;
const sameDecision: Exact<z.infer<typeof decisionApplied> | z.infer<typeof decisionRecorded>, Jsonified<Printed<DecisionOutcome>>> = true;
const sameSteering: Exact<z.infer<typeof steeringSent>, Jsonified<SteeringOutcome & { taskId: string; signed: boolean }>> = true;
const sameCancel: Exact<z.infer<typeof cancelSent>, CancelOutcome & { taskId: string }> = true;
void [sameAnswer, sameDecision, sameSteering, sameCancel];
