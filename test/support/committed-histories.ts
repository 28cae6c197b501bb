/**
 * The committed histories the replay tests replay, by name: deleting or renaming one fails the
 * tests, so coverage of an old code path cannot go away quietly. Each was recorded once by
 * scripts/record-histories.ts (which never overwrites one) under the code named in its prefix:
 * none (round 1), v2- (pinned limits), r3- (config from the worker, decisions as signals), r4- (context
 * strategies: the durable summary), r5- (every marker asked at a run's start), r6- (the task family:
 * model calls carrying only their change, the family's effect journal, whole-input proofs, hard
 * budgets, bounded derived ids; a fork's first run, a rewind, an interrupt, a nested approval, a
 * schedule's fire, native compaction, a worker SIGKILLed mid-write), r7- (the same paths after approvals
 * moved to one module, workflows/ got rooms and models declare their capabilities; a repeated write
 * turned into an approval; a custom model with a declared window).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import type { temporal } from '@temporalio/proto';

export const COMMITTED_HISTORIES = [
  'approvals-approve-edit-deny',
  'continued-as-new-run',
  'demo-task',
  'fast-reads',
  'guarded-loop-unblock-fallback',
  'local-tool',
  'max-turns',
  'mcp-question',
  'refund-and-approved-cancel',
  'tool-failures',
  'turn-budget-blocked-then-final-answer',
  'v2-approval-and-keys',
  'v2-results-by-reference',
  'r3-approve-edit-deny',
  'r3-block-unblock',
  'r3-cancel',
  'r3-compaction',
  'r3-continued-run',
  'r3-signalled-decisions',
  'r3-memory',
  'r4-context-summary',
  'r3-subagents',
  'r5-demo-task',
  'r6-demo-task',
  'r6-fork-first-run',
  'r6-rewind',
  'r6-delegation-nested-approval',
  'r6-schedule-fire',
  'r6-interrupt',
  'r6-native-compaction',
  'r6-sigkill-mid-write',
  'r7-demo-task',
  'r7-fork-first-run',
  'r7-rewind',
  'r7-delegation-nested-approval',
  'r7-schedule-fire',
  'r7-interrupt',
  'r7-native-compaction',
  'r7-sigkill-mid-write',
  'r7-repeated-write-approval',
  'r7-declared-window',
] as const;

/**
 * Every committed history, each under its own workflow id (its name): a signalled decision's proof
 * is bound to the task's id, so a replay under another id would not take it.
 */
export function committedHistories(): { workflowId: string; history: temporal.api.history.v1.IHistory }[] {
  const dir = path.join(__dirname, '../histories');
  return COMMITTED_HISTORIES.map((name) => ({ workflowId: name, history: historyFromJSON(JSON.parse(readFileSync(path.join(dir, `${name}.json`), 'utf8'))) }));
}
