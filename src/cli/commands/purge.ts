/**
 * `purge`: retention for the blob store. Temporal deletes a closed task's history after the
 * namespace's retention period; the blobs its history pointed to are deleted here, by task id or
 * for every task closed before a date. A running task's blobs are never touched: its next model
 * call would find its conversation gone. Only the task's own scopes go (see scopesOfTask), never
 * those of another task whose id starts the same way.
 */
import type { BlobStore } from '../../blobs/blob-store';
import { BLOB_STORE_ENV, openBlobStore } from '../../blobs/open-blob-store';
import type { LiveOutputLog } from '../../live-output/live-output-log';
import { openLiveOutputLog } from '../../live-output/open-live-output-log';
import { TaskNotFoundError, type TaskClient } from '../../client/task-client';
import { WORKFLOW_TYPE } from '../../protocol/definitions';
import { familyJournalPrefix } from '../../forks/effect-journal';
import { effectJournalScope, FAMILY_JOURNAL_PREFIX } from '../../protocol/fork';
import { START_PROOF_PREFIX } from '../../activities/start-claim';
import { parse } from '../args';
import { VERB_ARGS } from '../verb-args';
import { CliError, EXIT, usageError } from '../cli-error';
import { printJson } from '../json-output';
import { purgeClosedJson, purgeTaskJson } from '../json-storage';
import { connectClient } from '../connect';

export const purgeHelp = `durable-agent purge TASK_ID [--force] [--blob-store SPEC] [--json]
durable-agent purge --closed-before AGE|DATE [--blob-store SPEC] [--json]
  Deletes the stored blobs (large tool results, conversation content) of closed tasks: one task,
  or every task closed before AGE ago (30d, 12h, 2w) or DATE (2026-01-31). A running task is refused.
  --force purges a task Temporal no longer knows (its history already past retention).
  Store: --blob-store, else ${BLOB_STORE_ENV} (file:/abs/dir | postgres://...), else .durable-agent/blobs.
  See docs/long-tasks.md.`;

/** Why purge keeps effect journals, in its answer. */
export const JOURNAL_KEPT = 'effect journals are kept, so no fork, rewind, reset or child of the family ever repeats a write without a person (docs/guarantees.md)';

const UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

/** `30d` means 30 days before `now`; anything else must be a date. */
export function parseClosedBefore(value: string, now = new Date()): Date {
  const age = /^(\d+)([smhdw])$/.exec(value.trim());
  if (age) return new Date(now.getTime() - Number(age[1]) * UNITS[age[2]!]!);
  const date = new Date(value);
  if (/^\d{4}-\d{2}-\d{2}/.test(value.trim()) && !Number.isNaN(date.getTime())) return date;
  throw usageError(`--closed-before takes an age (30d, 12h, 90m, 2w) or a date (2026-01-31), got "${value}"`);
}

export async function purgeCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, VERB_ARGS.purge.options, VERB_ARGS.purge.positionals);
  const taskId = positionals[0];
  if (taskId && values['closed-before']) throw usageError('give a TASK_ID or --closed-before, not both');
  if (!taskId && !values['closed-before']) throw usageError('purge needs a TASK_ID or --closed-before AGE (e.g. 30d)');
  if (taskId !== undefined && !taskId.trim()) throw usageError('TASK_ID is empty');
  const closedBefore = values['closed-before'] ? parseClosedBefore(values['closed-before']) : undefined;

  let store: BlobStore;
  let live: LiveOutputLog;
  try {
    store = openBlobStore(values['blob-store'], { cacheBytes: 0 });
    live = openLiveOutputLog(values['blob-store']);
  } catch (err) {
    throw usageError((err as Error).message);
  }
  const client = await connectClient(values);
  try {
    if (taskId) return await purgeOne(client, store, live, taskId, { force: !!values.force, json: !!values.json });
    return await purgeClosed(client, store, live, closedBefore!, !!values.json);
  } finally {
    await store.close();
    await live.close();
  }
}

async function purgeOne(client: TaskClient, store: BlobStore, live: LiveOutputLog, taskId: string, options: { force: boolean; json: boolean }): Promise<number> {
  let known = true;
  try {
    const summary = await client.describe(taskId);
    if (summary.executionStatus === 'RUNNING') {
      throw new CliError(`task ${taskId} is running: its blobs are its conversation. Purge it after it closes (or cancel it first).`);
    }
  } catch (err) {
    if (!(err instanceof TaskNotFoundError)) throw err;
    if (!options.force) {
      throw new CliError(
        `Temporal has no task "${taskId}" in namespace ${client.client.options.namespace}. If its history is past retention, its blobs are orphans: purge them with --force.`,
        EXIT.notFound,
      );
    }
    known = false;
  }
  const scopes = await store.scopes();
  const blobs = await purgeTask(store, live, scopes, taskId);
  const kept = await journalKept(store, scopes, taskId, client);
  if (options.json)
    printJson(purgeTaskJson, {
      taskId,
      blobs,
      store: store.description,
      ...(kept ? { keptJournalRecords: kept, kept: JOURNAL_KEPT } : {}),
      ...(known ? {} : { note: 'unknown to Temporal' as const }),
    });
  else {
    console.log(`purged ${blobs} blob${blobs === 1 ? '' : 's'} of ${taskId} from ${store.description}`);
    if (kept) console.log(`kept ${kept} effect journal record${kept === 1 ? '' : 's'} of ${taskId}: ${JOURNAL_KEPT}`);
  }
  return EXIT.ok;
}

async function purgeClosed(client: TaskClient, store: BlobStore, live: LiveOutputLog, before: Date, json: boolean): Promise<number> {
  // ContinuedAsNew runs close too, while their task goes on in the next run: only final closes count.
  const query = `WorkflowType = '${WORKFLOW_TYPE}' AND CloseTime < '${before.toISOString()}' AND ExecutionStatus != 'ContinuedAsNew'`;
  const taskIds = new Set<string>();
  for await (const execution of client.client.workflow.list({ query })) taskIds.add(execution.workflowId);

  const scopes = await store.scopes();
  const purged: { taskId: string; blobs: number; keptJournalRecords?: number }[] = [];
  const skipped: { taskId: string; reason: string }[] = [];
  for (const taskId of taskIds) {
    // The id may since have been reused by a task that is running now: its chain's scope is the task's too.
    let running: boolean;
    try {
      running = (await client.describe(taskId)).executionStatus === 'RUNNING';
    } catch (err) {
      // Gone since the list (past retention) is safe to purge; an unanswered check is not.
      if (!(err instanceof TaskNotFoundError)) {
        skipped.push({ taskId, reason: `could not check whether it is running: ${(err as Error).message}` });
        continue;
      }
      running = false;
    }
    if (running) {
      skipped.push({ taskId, reason: 'a task with this id is running' });
      continue;
    }
    const kept = await journalKept(store, scopes, taskId, client);
    purged.push({ taskId, blobs: await purgeTask(store, live, scopes, taskId), ...(kept ? { keptJournalRecords: kept } : {}) });
  }
  const blobs = purged.reduce((sum, p) => sum + p.blobs, 0);
  if (json) {
    printJson(purgeClosedJson, { closedBefore: before.toISOString(), store: store.description, blobs, purged, skipped, ...(purged.some((p) => p.keptJournalRecords) ? { kept: JOURNAL_KEPT } : {}) });
  } else {
    console.log(`purged ${blobs} blob${blobs === 1 ? '' : 's'} of ${purged.length} task${purged.length === 1 ? '' : 's'} closed before ${before.toISOString()} from ${store.description}`);
    for (const p of purged) console.log(`  ${p.taskId}: ${p.blobs}${p.keptJournalRecords ? ` (kept ${p.keptJournalRecords} effect journal records)` : ''}`);
    if (purged.some((p) => p.keptJournalRecords)) console.log(`  effect journals kept: ${JOURNAL_KEPT}`);
    for (const s of skipped) console.log(`  skipped ${s.taskId}: ${s.reason}`);
  }
  return EXIT.ok;
}

/**
 * The scopes of the task chains that ran under `taskId`, out of `scopes`: `<taskId>/<first run id>`.
 * Workflow ids may contain `/` but run ids never do, so the scopes of task `team/alpha`
 * (`team/alpha/<run id>`) are never taken for task `team`'s, as a prefix match would.
 */
export function scopesOfTask(scopes: readonly string[], taskId: string): string[] {
  const prefix = `${taskId}/`;
  return scopes.filter((scope) => scope.startsWith(prefix) && scope.length > prefix.length && !scope.slice(prefix.length).includes('/') && !isJournalScope(scope, taskId));
}

/**
 * Effect journals are never purged with a task: a branch of its family that is still running, or
 * started later from its history, reads them to never repeat a write (docs/guarantees.md).
 */
function isJournalScope(scope: string, taskId: string): boolean {
  // Start proofs' single-use records outlive their tasks too (activities/start-claim.ts).
  return scope === effectJournalScope(taskId) || scope.startsWith(FAMILY_JOURNAL_PREFIX) || scope.startsWith(START_PROOF_PREFIX);
}

/** What purge kept of a task's effect journal, for its answer: the records of the family it is the root of, and its version 1 records. */
async function journalKept(store: BlobStore, scopes: readonly string[], taskId: string, client: TaskClient): Promise<number> {
  // Its families: one per chain that ran under the id (`<taskId>/<first run id>`: its blob scopes, and
  // the chain Temporal knows now, which may have stored no blob), and the id alone (older lineages).
  const latest = await client
    .handle(taskId)
    .describe()
    .then((d) => d.raw.workflowExecutionInfo?.firstRunId || undefined)
    .catch(() => undefined);
  const chains = [...scopesOfTask(scopes, taskId), ...(latest ? [`${taskId}/${latest}`] : [])];
  const prefixes = [...new Set([taskId, ...chains])].map(familyJournalPrefix);
  let records = 0;
  for (const scope of scopes) {
    if (prefixes.some((p) => scope.startsWith(p)) || scope === effectJournalScope(taskId)) records += (await store.ids(scope)).length + (await store.records(scope)).length;
  }
  return records;
}

/** The task's blobs (their count is the answer) and its live output. */
async function purgeTask(store: BlobStore, live: LiveOutputLog, scopes: readonly string[], taskId: string): Promise<number> {
  await live.remove(taskId);
  let blobs = 0;
  for (const scope of scopesOfTask(scopes, taskId)) blobs += await store.purgeScope(scope);
  return blobs;
}
