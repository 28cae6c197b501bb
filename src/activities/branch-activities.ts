/**
 * The worker's side of forks and the effect journal (docs/fork.md): the loadForkPoint activity, a
 * fork's recorded reads, and the journal's guard around a write (asked before, recorded after).
 * runTool and createActivities call these; they hold no state of their own.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import type { AgentDefinition } from '../agents/define-agent';
import type { BlobStore } from '../blobs/blob-store';
import { resolveValue, storeValueIfLarge } from '../blobs/claim-check';
import { EffectJournal, intentOf } from '../forks/effect-journal';
import { decideClaim, IntentClaims } from '../forks/intent-claims';
import { carryBlobs, ForkPointError, latestConversation, readForkPoint, readsAfter } from '../forks/fork-point';
import type { LoadForkPointInput, RunToolInput, ToolOutcome } from '../protocol/activity-contracts';
import { familyOf, REPEATED_EFFECT_TYPE, repeatReason, type EffectRecord, type EffectState, type ReadRecording } from '../protocol/fork';
import type { TaskSnapshot } from '../protocol/task';
import { toolError } from '../protocol/tool-error';
import { summarizeOutput } from '../rules/tool-result-content';
import type { ToolDefinition } from '../tools/define-tool';
import { validatorOf } from '../tools/schema';

export interface BranchDependencies {
  store(): BlobStore;
  /** Turns the store's own errors (missing, tampered, unreadable) into the task's failures. */
  withBlobs<T>(work: () => Promise<T>): Promise<T>;
  agentNamed(name: string): AgentDefinition;
  /** Copies the origin's task-scoped memory as it stood at the branch point into the fork's (memory-activity.ts). */
  carryMemory(definition: AgentDefinition, origin: { taskId: string; scope: string; toolCallsAtBranch: number }, forkScope: string): Promise<number>;
}

/** The tool's own reading of its arguments (defaults applied), so an intent is the same however the model wrote them. */
function intentOfCall(tool: ToolDefinition<any, any>, name: string, input: unknown): string {
  const parsed = validatorOf(tool.input).parseInput(input);
  return intentOf(name, parsed.success ? parsed.data : input);
}

/** The fork's starting state from the origin's history, its content copied into the fork's scope, and its recorded reads when asked. */
export async function loadForkPoint(deps: BranchDependencies, { origin, agent, scope, recordedReads }: LoadForkPointInput): Promise<TaskSnapshot> {
  const { store, withBlobs } = deps;
  try {
    const client = Context.current().client;
    const point = await readForkPoint(client, origin);
    if (point.agent !== agent) throw new ForkPointError('fork_agent_mismatch', `${origin.taskId} is a task of agent "${point.agent}"; a fork runs the same agent, not "${agent}"`);
    await withBlobs(() => carryBlobs(store(), point, scope));
    const definition = deps.agentNamed(agent);
    await deps.carryMemory(definition, { taskId: origin.taskId, scope: point.originScope, toolCallsAtBranch: point.snapshot.toolCalls.total }, scope);
    if (!recordedReads) return point.snapshot;
    // What the origin's reads returned after the branch point, resolved from its store, kept in the fork's own.
    const recording: ReadRecording = { version: 1, origin, reads: {} };
    for (const read of readsAfter(point.snapshot.messages, await latestConversation(client, origin.taskId), (name) => definition.tool(name)?.effect === 'read')) {
      const [input, output] = await withBlobs(() => Promise.all([resolveValue(store(), point.originScope, read.input), resolveValue(store(), point.originScope, read.output)]));
      recording.reads[intentOfCall(definition.tool(read.tool)!, read.tool, input)] ??= { tool: read.tool, output, ...(read.note ? { note: read.note } : {}) };
    }
    return { ...point.snapshot, readRecording: await store().put(scope, JSON.stringify(recording)) };
  } catch (err) {
    if (!(err instanceof ForkPointError)) throw err;
    const error = toolError('permanent', err.code, err.message);
    throw ApplicationFailure.create({ message: error.detail, type: 'permanent', nonRetryable: true, details: [error] });
  }
}

/** A read of a fork with recorded reads, answered from the recording when the origin made the same read; undefined when it did not. */
export async function recordedRead(
  deps: BranchDependencies,
  scope: string,
  recordingId: string,
  tool: ToolDefinition<any, any>,
  name: string,
  input: unknown,
  inlineChars: number,
): Promise<ToolOutcome | undefined> {
  const recording = JSON.parse(await deps.withBlobs(() => deps.store().get(scope, recordingId))) as ReadRecording;
  const recorded = recording.reads[intentOfCall(tool, name, input)];
  if (!recorded) return undefined;
  const output = await storeValueIfLarge(deps.store(), scope, recorded.output, inlineChars);
  const summary = `answered from the recording of ${recording.origin.taskId} (not run): ${summarizeOutput(recorded.output)}`.slice(0, 300);
  return recorded.note ? { kind: 'flagged', output, error: recorded.note, summary } : { kind: 'ok', output, summary };
}

/** A write about to run under its claim: the key it runs with, and how to record how it settled. */
export interface JournaledWrite {
  idempotencyKey: string;
  settled(state: Exclude<EffectState, 'pending'>, summary: string): Promise<void>;
}

/** How many times a caller that lost a claim's race reads the journal again before a person is asked. */
const CLAIM_ROUNDS = 3;

/**
 * Claims the write's intent for the family before it runs (docs/guarantees.md): the one caller that
 * creates the claim runs; any other, whatever its relation to the holder, is refused with
 * `repeated_effect` (the workflow asks a person, showing what the claim says), unless a person
 * already approved running it again, which takes a claim of its own, recorded with the approval.
 * An idempotent call done or unknown elsewhere goes on under that call's key, which the service
 * answers without a second effect, when what it did still stands.
 */
export async function journaledWrite(
  deps: BranchDependencies,
  call: Pick<RunToolInput, 'lineage' | 'repeatApprovedBy' | 'approval'> & {
    taskId: string;
    /** The task's blob scope, `<workflowId>/<first run id>`. */
    scope?: string;
    turn: number;
    name: string;
    tool: ToolDefinition<any, any>;
    input: unknown;
    idempotencyKey: string;
  },
): Promise<JournaledWrite> {
  const ctx = Context.current();
  const claims = new IntentClaims(deps.store());
  const runId = ctx.info.workflowExecution?.runId ?? '';
  const lineage = call.lineage ?? [];
  // The task's own chain (its scope is `<workflowId>/<first run id>`; run ids hold no '/'): the family's name when it is the root.
  const firstRunId = call.scope ? call.scope.slice(call.scope.lastIndexOf('/') + 1) : undefined;
  const root = familyOf(call.taskId, firstRunId, lineage);
  const attempt = `${runId}/${ctx.info.activityId}`;
  const approvedBy = call.repeatApprovedBy ? { id: call.repeatApprovedBy, by: call.approval?.id === call.repeatApprovedBy ? call.approval.by : 'unknown' } : undefined;
  const base: Omit<EffectRecord, 'at' | 'outcome' | 'state' | 'step'> = {
    version: 3,
    taskId: call.taskId,
    runId,
    turn: call.turn,
    tool: call.name,
    effect: call.tool.effect,
    idempotent: call.tool.idempotent,
    intent: intentOfCall(call.tool, call.name, call.input),
    idempotencyKey: call.idempotencyKey,
    attempt,
    family: root,
    ...(lineage.length ? { lineage: [...lineage] } : {}),
  };
  const step = (held: { generation: number; idempotencyKey: string }, state: EffectState, summary: string): EffectRecord => ({
    ...base,
    ...held,
    ...(approvedBy ? { approvedBy } : {}),
    at: new Date().toISOString(),
    step: ctx.info.attempt * 2 + (state === 'pending' ? 0 : 1),
    state,
    outcome: { ok: state === 'done', summary: summary.slice(0, 300) },
  });
  const refuse = (record: EffectRecord): never => {
    const error = toolError('policy', 'repeated_effect', repeatReason(record), 'A person has been asked whether it must run again.');
    throw ApplicationFailure.create({ message: error.detail, type: REPEATED_EFFECT_TYPE, nonRetryable: true, details: [error, record], category: ApplicationFailureCategory.BENIGN });
  };
  const legacy = await deps.withBlobs(() => new EffectJournal(deps.store()).legacyEntries([call.taskId, ...lineage.map((p) => p.taskId)], base.intent));
  const olderWrite = legacy.find((r) => r.runId !== runId);
  if (olderWrite && !approvedBy) refuse(olderWrite);

  for (let round = 1; ; round++) {
    const view = await deps.withBlobs(() => claims.view(root, base.intent));
    const decision = decideClaim(view, { attempt, idempotent: call.tool.idempotent, idempotencyKey: call.idempotencyKey, repeatApproved: approvedBy !== undefined });
    let held: { generation: number; idempotencyKey: string } | undefined;
    switch (decision.kind) {
      case 'refuse':
        return refuse(decision.record);
      case 'reuse': {
        const { claim } = decision;
        if (claim.state === 'done' && call.tool.stillStands && !(await call.tool.stillStands(claim.claim.idempotencyKey, call.input))) return refuse(claim.latest);
        // The service knows that key: it answers with the first outcome and changes nothing again.
        return { idempotencyKey: claim.claim.idempotencyKey, settled: async () => undefined };
      }
      case 'hold':
        held = { generation: decision.claim.generation, idempotencyKey: decision.claim.claim.idempotencyKey };
        break;
      case 'take': {
        const taking = { generation: decision.generation, idempotencyKey: call.idempotencyKey };
        // The claim first: a call whose claim cannot be kept does not run (a transient store error is retried).
        if (await deps.withBlobs(() => claims.take(root, { ...step(taking, 'pending', 'started'), generation: taking.generation }))) held = taking;
        else if (approvedBy || round >= CLAIM_ROUNDS) {
          // Someone else won it: an approval covers the claims the person saw, not one taken since.
          const winner = (await deps.withBlobs(() => claims.view(root, base.intent))).claims.find((c) => c.generation === decision.generation);
          return refuse(winner?.latest ?? { ...step(taking, 'pending', 'claimed by another call at the same moment') });
        }
        break;
      }
    }
    if (!held) continue;
    const holding = held;
    return {
      idempotencyKey: holding.idempotencyKey,
      // A write that ran must not look failed because its settling could not be kept: it stays pending,
      // which every member of the family treats as "may have happened", and the log says so.
      settled: (state, summary) =>
        claims
          .settle(root, step(holding, state, summary))
          .catch((err: Error) => ctx.log.error(`effect journal: ${call.name} in ${call.taskId} turn ${call.turn} settled as ${state} but stays pending in the journal: ${err.message}`)),
    };
  }
}
