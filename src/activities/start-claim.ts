/**
 * Single-use start proofs: is a signed start the first use of its proof?
 *
 * A start proof is signed for one namespace, one task id and one nonce (decision-proof.ts), so it
 * can only ever be replayed as the same task id in the same namespace. Its first use is recorded in
 * the worker's shared store (the blob store every worker of the deployment shares) with an
 * exclusive create (createRecord: one caller wins, however many race), under
 * `~start-proofs/<namespace digest>/<proof digest>`. The record outlives the execution: deleting
 * the workflow (`temporal workflow delete`), or the server's retention removing it, does not make
 * the proof usable again; `purge` never touches these scopes. The same chain (an activity retry, a
 * replay, a reset run, which keeps its first run id) finds its own record and passes. The answer is
 * an activity result, so replay decides the same.
 *
 * Inputs from workflows that predate signed namespaces carry no nonce: those are judged as before,
 * by the server's visibility list of earlier runs of the id (startClaimProblemByVisibility).
 */
import { createHash } from 'node:crypto';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { StartClaimInput } from '../protocol/activity-contracts';
import type { WorkerResources } from './worker-resources';

/** Every start-proof record scope starts so; purge never removes them (see scopesOfTask). */
export const START_PROOF_PREFIX = '~start-proofs/';

/** Runs of one id read at most (a task id is reused by hand only). */
const MAX_RUNS = 1_000;

/** What a start proof's single-use record holds. */
interface StartProofRecord {
  namespace: string;
  taskId: string;
  runId: string;
  firstRunId: string;
  keyId: string;
  nonce: string;
  expiresAt?: string;
  at: string;
}

const RECORD_NAME = 'first-use';

const digest = (value: unknown): string => createHash('sha256').update(JSON.stringify(value), 'utf8').digest('hex');

/** The record scope of one proof: per namespace (hashed), per key id and nonce (hashed with the task id). */
export function startProofScope(namespace: string, taskId: string, keyId: string, nonce: string): string {
  return `${START_PROOF_PREFIX}${digest(['namespace', namespace]).slice(0, 32)}/${digest(['proof', keyId, nonce, taskId]).slice(0, 32)}`;
}

export function createStartClaim(worker: Pick<WorkerResources, 'store' | 'withBlobs'>): (input: StartClaimInput) => Promise<string | null> {
  return async (input) => {
    const { taskId, runId, firstRunId, namespace, keyId, nonce } = input;
    if (namespace === undefined || keyId === undefined || nonce === undefined) return startClaimProblemByVisibility(input);
    const scope = startProofScope(namespace, taskId, keyId, nonce);
    const record: StartProofRecord = { namespace, taskId, runId, firstRunId, keyId, nonce, ...(input.expiresAt ? { expiresAt: input.expiresAt } : {}), at: new Date().toISOString() };
    const store = worker.store();
    return worker.withBlobs(async () => {
      if (await store.createRecord(scope, RECORD_NAME, JSON.stringify(record))) return null;
      const existing = (await store.records(scope)).find((r) => r.name === RECORD_NAME);
      let first: Partial<StartProofRecord> = {};
      try {
        first = existing ? (JSON.parse(existing.text) as Partial<StartProofRecord>) : {};
      } catch {
        // An unreadable record still says the proof was used.
      }
      // This chain's own record: an activity retry, a replay or a reset run of the same task.
      if (first.taskId === taskId && first.firstRunId === firstRunId) return null;
      return (
        `this signed start was already used: task id "${taskId}" was started with it in namespace "${namespace}" before ` +
        `(run ${first.runId ?? 'unknown'}, recorded ${first.at ?? 'at an unknown time'}; the record outlives that execution, deleted or not); ` +
        'a start proof is good for one task once. Sign a new start'
      );
    });
  };
}

/**
 * The check of workflows from before signed namespaces: any other execution of the same id that
 * started after the proof could have been signed, and before this task's own chain, was started
 * with it first. Asks the server's visibility store; it forgets a deleted execution.
 */
export async function startClaimProblemByVisibility({ taskId, runId, firstRunId, earliestSignedMs }: StartClaimInput): Promise<string | null> {
  const ctx = Context.current();
  const runs: { runId: string; startMs: number }[] = [];
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await ctx.client.workflowService.listWorkflowExecutions({
      namespace: ctx.info.namespace,
      query: `WorkflowId = ${queryString(taskId)}`,
      pageSize: 200,
      ...(nextPageToken ? { nextPageToken } : {}),
    });
    for (const e of page.executions ?? []) {
      const t = e.startTime;
      if (e.execution?.runId && t) runs.push({ runId: e.execution.runId, startMs: Number(t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1e6) });
    }
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
    ctx.heartbeat();
  } while (nextPageToken && runs.length < MAX_RUNS);
  const own = runs.find((r) => r.runId === runId);
  // Visibility is written after the start: until this run is listed, an earlier one may not be either.
  if (!own) throw ApplicationFailure.retryable(`run ${runId} of ${taskId} is not in the visibility store yet`, 'visibility_lag');
  // A reset run keeps its chain's first run id: the chain began with that run.
  const chainStartMs = runs.find((r) => r.runId === firstRunId)?.startMs ?? own.startMs;
  const before = runs.filter((r) => r.runId !== runId && r.runId !== firstRunId && r.startMs < chainStartMs && r.startMs >= earliestSignedMs).sort((a, b) => a.startMs - b.startMs)[0];
  if (!before) return null;
  return (
    `this signed start was already used: task id "${taskId}" ran before (run ${before.runId}, started ${new Date(before.startMs).toISOString()}), ` +
    'after its proof could have been signed; a start proof is good for one task once. Sign a new start under a new task id'
  );
}

/** A string literal of Temporal's list filter. */
function queryString(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}
