/**
 * The committed histories the replay tests replay, by name: deleting or renaming one fails the
 * tests, so coverage of a code path cannot go away quietly. Each was recorded once by
 * scripts/record-histories.ts (which never overwrites one, here or in archive/) under the code named
 * in its prefix. Every round records the same paths (ROUND_PATHS): approvals approved, edited and
 * denied, a block and its unblock, a cancel, the durable summary, continued runs, memory, signalled
 * decisions, sub-agents, fast reads, a local tool, a spent turn budget, an MCP question, tool
 * failures, results by reference, a fork's first run, a rewind, an interrupt, native compaction, a
 * schedule's fire, a worker SIGKILLed mid-write, a repeated write turned into an approval, a declared
 * window, the opt-in `auto` rule (allowed, denied and asked verdicts), a graded outcome whose grader
 * fails both answers and a move to a fallback model after the primary was overloaded. r12- is the
 * code that ships (issue 51: a run writes its agent version to the memo as it starts, for `list`;
 * an unblock asks the worker for its agent before it is taken).
 *
 * ARCHIVED_HISTORIES (test/histories/archive/) were recorded by older builds and replay only on the
 * build that retired them (ARCHIVE_BUILDS): rounds 1 to 7 (none, v2-, r3- to r7-) hold patch markers
 * this code no longer asks, and the SDK fails the replay of a non-deprecated marker nobody asks
 * (TMPRL1100); r8- and r9- schedule describeAgent as an activity where this code records a local
 * activity (TMPRL1100 too); r10- and r11- start a run without the memo write r12 makes. Under Pinned versioning their tasks finish on the build that started them.
 * test/integration/archived-histories.test.ts replays each against its build.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import type { temporal } from '@temporalio/proto';

/**
 * The paths every round records (scripts/record-histories.ts, `recordUnmarkedPaths`), each under the
 * round's prefix.
 */
const ROUND_PATHS = [
  'demo-task',
  'tool-failures',
  'turn-budget-blocked-then-final-answer',
  'guarded-loop-unblock-fallback',
  'approvals-approve-edit-deny',
  'continued-as-new-run',
  'refund-and-approved-cancel',
  'local-tool',
  'fast-reads',
  'results-by-reference',
  'approval-and-keys',
  'block-unblock',
  'cancel',
  'context-summary',
  'signalled-decisions',
  'memory',
  'subagents',
  'mcp-question',
  'fork-first-run',
  'rewind',
  'delegation-nested-approval',
  'schedule-fire',
  'interrupt',
  'native-compaction',
  'sigkill-mid-write',
  'repeated-write-approval',
  'declared-window',
  'auto-permissions',
  'graded-outcome',
  'model-fallback',
] as const;

type RoundPath = (typeof ROUND_PATHS)[number];
const ofRound = <R extends string>(round: R): `${R}-${RoundPath}`[] => ROUND_PATHS.map((name) => `${round}-${name}` as const);

export const COMMITTED_HISTORIES = ofRound('r12');

/** Histories of the builds before patch markers were retired, replayed against build-r7 only. */
const BEFORE_R8 = [
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

/** A retired build's workflow code, taken from git by its commit, and the histories that replay on it only. */
export interface ArchiveBuild {
  tag: string;
  /** The full sha, so a clone without tags finds it. */
  commit: string;
  /** Why its histories no longer replay on today's code. */
  retiredBy: string;
  histories: readonly string[];
}

export const ARCHIVE_BUILDS: readonly ArchiveBuild[] = [
  {
    tag: 'build-r7',
    commit: '6046da9a9b0e1644ff9f7864eacf2665609cee76',
    retiredBy: "its patch markers, which today's code no longer asks (issue 36 point 4)",
    histories: BEFORE_R8,
  },
  {
    tag: 'build-r9',
    commit: 'f019fdd6c67d066866e6ea5053a68ee54eaaedc8',
    retiredBy: "its describeAgent activity: a run's first workflow task now asks it as a local activity (issue 39, throughput)",
    histories: [...ofRound('r8'), ...ofRound('r9')],
  },
  {
    tag: 'build-r11',
    commit: 'cdbdd412e7b248f91c9cf4379cfa735e089d5a77',
    retiredBy: "a run's first workflow task now writes the run's agent version to the memo (list's AGENT VERSION column), and an unblock asks the worker for its agent (issue 51)",
    histories: [...ofRound('r10'), ...ofRound('r11')],
  },
];

export const ARCHIVED_HISTORIES: readonly string[] = ARCHIVE_BUILDS.flatMap((build) => build.histories);

/**
 * Every committed history, each under its own workflow id (its name): a signalled decision's proof
 * is bound to the task's id, so a replay under another id would not take it.
 */
export function committedHistories(): { workflowId: string; history: temporal.api.history.v1.IHistory }[] {
  return historiesIn(path.join(__dirname, '../histories'), COMMITTED_HISTORIES);
}

/** Archived histories (all, or those named), each under its own workflow id (its name). */
export function archivedHistories(names: readonly string[] = ARCHIVED_HISTORIES): { workflowId: string; history: temporal.api.history.v1.IHistory }[] {
  return historiesIn(path.join(__dirname, '../histories/archive'), names);
}

function historiesIn(dir: string, names: readonly string[]): { workflowId: string; history: temporal.api.history.v1.IHistory }[] {
  return names.map((name) => ({ workflowId: name, history: historyFromJSON(JSON.parse(readFileSync(path.join(dir, `${name}.json`), 'utf8'))) }));
}
