/**
 * Settling a write's unknown outcome from evidence before anyone is asked (issue 49): an attempt
 * after one that died or lost its reply asks the tool's `reconcile` to look. A check that throws,
 * answers something else or is absent tells nothing, so the outcome stays unknown.
 */
import type { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ToolOutcome } from '../protocol/activity-contracts';
import { UNRECONCILED_CODE } from '../protocol/outcome-unknown';
import { toolError } from '../protocol/tool-error';
import type { Reconciliation, ReconcileContext, ToolDefinition } from '../tools/define-tool';
import type { JournaledWrite } from './branch-activities';
import { withHeartbeats } from './heartbeat';

const MAX_EVIDENCE_CHARS = 500;

export async function reconcileEarlierAttempt(tool: ToolDefinition<any, any>, input: unknown, ctx: ReconcileContext): Promise<Reconciliation<unknown>> {
  if (!tool.reconcile) return { happened: 'unknown', evidence: `${tool.name} has no reconcile check` };
  let found: Reconciliation<unknown>;
  try {
    found = await tool.reconcile(input, ctx);
  } catch (err) {
    return { happened: 'unknown', evidence: `the check of ${tool.name} failed: ${(err as Error)?.message ?? String(err)}`.slice(0, MAX_EVIDENCE_CHARS) };
  }
  const evidence = typeof found?.evidence === 'string' ? found.evidence.slice(0, MAX_EVIDENCE_CHARS) : '';
  if (found?.happened === true) return { happened: true, output: found.output, evidence };
  if (found?.happened === false) return { happened: false, evidence };
  return { happened: 'unknown', evidence: evidence || `the check of ${tool.name} could not tell` };
}

/**
 * A later attempt of a write that is not idempotent: took effect, the answer the look found (settled
 * done, not sent); never took effect, undefined (send it now); can't tell, a non-retryable
 * `transient/unreconciled` failure with the evidence (settled unknown: a person decides).
 */
export async function lookBeforeResending(
  ctx: Context,
  call: { tool: ToolDefinition<any, any>; toolName: string; input: unknown; write: JournaledWrite; redact: <T>(value: T) => T },
): Promise<Extract<ToolOutcome, { kind: 'ok' }> | undefined> {
  const { tool, toolName, input, write, redact } = call;
  const found = await withHeartbeats(ctx, (_beat, previous) =>
    reconcileEarlierAttempt(tool, input, { idempotencyKey: write.idempotencyKey, ...(previous !== undefined ? { previousHeartbeat: previous } : {}), signal: ctx.cancellationSignal }),
  );
  if (found.happened === true) {
    await write.settled('done', `reconciled: ${found.evidence}`);
    ctx.log.info(`${toolName}: an earlier attempt took effect (${found.evidence}); not sent again`);
    return { kind: 'ok', output: redact(found.output), summary: `not sent again: an earlier attempt took effect (${redact(found.evidence)})`.slice(0, 300) };
  }
  if (found.happened === 'unknown') {
    await write.settled('unknown', `reconcile: ${found.evidence}`);
    const detail = `${toolName}: an earlier attempt may have taken effect and the check could not tell: ${redact(found.evidence)}`;
    const error = toolError('transient', UNRECONCILED_CODE, detail, 'It may already have taken effect. A person has been asked to check.');
    throw ApplicationFailure.create({ message: error.detail, type: 'transient', nonRetryable: true, details: [{ ...error, attempts: ctx.info.attempt }] });
  }
  ctx.log.info(`${toolName}: the earlier attempt took no effect (${found.evidence}); sending it now`);
  return undefined;
}
