/**
 * Settling a write's unknown outcome from evidence before anyone is asked (issue 49): an attempt
 * after one that died or lost its reply asks the tool's `reconcile` to look. A check that throws,
 * answers something else or is absent tells nothing, so the outcome stays unknown.
 */
import type { Reconciliation, ReconcileContext, ToolDefinition } from '../tools/define-tool';

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
