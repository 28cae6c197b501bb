/**
 * The committed histories the replay tests replay, by name: deleting or renaming one fails the
 * tests, so coverage of a code path cannot go away quietly. Each was recorded once by
 * scripts/record-histories.ts (which never overwrites one, here or in archive/) under the code named
 * in its prefix. r8- (the first build without patch markers, issue 36 point 4): every path the
 * archived histories covered, recorded again: approvals approved, edited and denied, a block and its
 * unblock, a cancel, the durable summary, continued runs, memory, signalled decisions, sub-agents,
 * fast reads, a local tool, a spent turn budget, an MCP question, tool failures, results by
 * reference, a fork's first run, a rewind, an interrupt, native compaction, a schedule's fire, a
 * worker SIGKILLed mid-write, a repeated write turned into an approval, a declared window; later, the
 * opt-in `auto` rule (allowed, denied and asked verdicts), a graded outcome whose grader fails both answers
 * and a move to a fallback model after the primary was overloaded. r9-: the same paths recorded again
 * on the code this round shipped (the task's spend added in one place, the 3 s heartbeat timeout,
 * notices that carry their blob scope), after its last change to workflow code, so that the
 * histories stand for what ships; r9-model-fallback holds the move itself (r8's primary answered
 * within its retries, so it never fell back).
 *
 * ARCHIVED_HISTORIES (test/histories/archive/) were recorded by the builds before it (rounds 1 to 7:
 * none, v2-, r3- to r7-). Every one holds patch markers this code no longer asks, and the SDK fails
 * the replay of a non-deprecated marker nobody asks (TMPRL1100), so none replays on today's code;
 * under Pinned versioning their tasks finish on the build that started them.
 * test/integration/archived-histories.test.ts replays them against that build (ARCHIVE_BUILD).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import type { temporal } from '@temporalio/proto';

export const COMMITTED_HISTORIES = [
  'r8-demo-task',
  'r8-tool-failures',
  'r8-turn-budget-blocked-then-final-answer',
  'r8-guarded-loop-unblock-fallback',
  'r8-approvals-approve-edit-deny',
  'r8-continued-as-new-run',
  'r8-refund-and-approved-cancel',
  'r8-local-tool',
  'r8-fast-reads',
  'r8-results-by-reference',
  'r8-approval-and-keys',
  'r8-block-unblock',
  'r8-cancel',
  'r8-context-summary',
  'r8-signalled-decisions',
  'r8-memory',
  'r8-subagents',
  'r8-mcp-question',
  'r8-fork-first-run',
  'r8-rewind',
  'r8-delegation-nested-approval',
  'r8-schedule-fire',
  'r8-interrupt',
  'r8-native-compaction',
  'r8-sigkill-mid-write',
  'r8-repeated-write-approval',
  'r8-declared-window',
  'r8-auto-permissions',
  'r8-graded-outcome',
  'r8-model-fallback',
  'r9-demo-task',
  'r9-tool-failures',
  'r9-turn-budget-blocked-then-final-answer',
  'r9-guarded-loop-unblock-fallback',
  'r9-approvals-approve-edit-deny',
  'r9-continued-as-new-run',
  'r9-refund-and-approved-cancel',
  'r9-local-tool',
  'r9-fast-reads',
  'r9-results-by-reference',
  'r9-approval-and-keys',
  'r9-block-unblock',
  'r9-cancel',
  'r9-context-summary',
  'r9-signalled-decisions',
  'r9-memory',
  'r9-subagents',
  'r9-mcp-question',
  'r9-fork-first-run',
  'r9-rewind',
  'r9-delegation-nested-approval',
  'r9-schedule-fire',
  'r9-interrupt',
  'r9-native-compaction',
  'r9-sigkill-mid-write',
  'r9-repeated-write-approval',
  'r9-declared-window',
  'r9-auto-permissions',
  'r9-graded-outcome',
  'r9-model-fallback',
] as const;

/** Histories of the builds before patch markers were retired, replayed against ARCHIVE_BUILD only. */
export const ARCHIVED_HISTORIES = [
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
  return historiesIn(path.join(__dirname, '../histories'), COMMITTED_HISTORIES);
}

/**
 * The commit tagged `build-r7`: the last build with patch markers, whose workflow code the archived
 * histories replay against. The full sha, so a clone without tags finds it.
 */
export const ARCHIVE_BUILD = '6046da9a9b0e1644ff9f7864eacf2665609cee76';

/** Every archived history, each under its own workflow id (its name). */
export function archivedHistories(): { workflowId: string; history: temporal.api.history.v1.IHistory }[] {
  return historiesIn(path.join(__dirname, '../histories/archive'), ARCHIVED_HISTORIES);
}

function historiesIn(dir: string, names: readonly string[]): { workflowId: string; history: temporal.api.history.v1.IHistory }[] {
  return names.map((name) => ({ workflowId: name, history: historyFromJSON(JSON.parse(readFileSync(path.join(dir, `${name}.json`), 'utf8'))) }));
}
