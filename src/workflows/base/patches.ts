/**
 * Every patch marker of the workflow, with what it changed, in one place. A history recorded before
 * a marker replays with the behaviour it was recorded with; tasks started since take the new one.
 * Retire one through Temporal's lifecycle (deprecatePatch, then removal) only once no task started
 * before it can still be running and no committed history needs it (test/histories).
 */
import { patched, workflowInfo } from '@temporalio/workflow';
import { DERIVED_ID_MAX_BYTES, MAX_TASK_ID_BYTES, utf8Length } from '../../protocol/task-ids';

/** Histories recorded before the ledger, budgets and escalations replay with the old behaviour. */
export const GUARDED_CALLS_PATCH = 'guarded-calls';
/** Histories recorded before approvals, inform notices and model-failure blocks replay without them. */
export const PEOPLE_IN_THE_LOOP_PATCH = 'people-in-the-loop';
/** Histories recorded before continue-as-new replay without it. */
export const CONTINUE_AS_NEW_PATCH = 'continue-as-new';
/**
 * Tasks started with this marker pin DEFAULT_LIMITS (rules v2: the claim check, bounded state,
 * context compaction, the ledger that knows state changes, inform without waiting); histories
 * without it replay with LEGACY_LIMITS and the behaviour they were recorded with.
 */
export const PINNED_LIMITS_PATCH = 'pinned-limits-v2';
/**
 * Tasks started with this marker trim the conversation several turns at a time (a prompt prefix
 * that stays cacheable), and a run that continues as new publishes AgentStatus=continued.
 */
export const STABLE_PREFIX_PATCH = 'stable-prefix';
/**
 * Tasks started with this marker check who decides: with trusted keys in the manifest, approve,
 * deny and unblock must carry a trusted front end's signature and pass the policy's `approvers`;
 * unsigned messages stay out of the model's context. Identities are recorded as verified or not.
 */
export const VERIFIED_APPROVERS_PATCH = 'verified-approvers';
/**
 * Tasks started with this marker (rules v2) send `confirm` and `block` notices through the notifier
 * too, without waiting for them: the webhook body links to the approval's page in the inbox.
 * Asked lazily, at a task's first such notice, so tasks that never needed a person kept their histories.
 */
export const NOTIFY_PEOPLE_PATCH = 'notify-confirm-block';
/** Tasks started with this marker run their short activities with a heartbeat timeout (see shortActivityOptions). */
export const SHORT_ACTIVITY_HEARTBEATS_PATCH = 'short-activity-heartbeats';
/**
 * Tasks started with this marker take their configuration (tools, policy, approver keys and rules)
 * from their worker on every run; a snapshot carries progress only, and only this task's own
 * continue-as-new may hand one over (never a client, a cron run, a retry or a reset of such a run).
 */
export const CONFIG_FROM_WORKER_PATCH = 'config-from-worker';
/**
 * Tasks started with this marker publish what waits on a person (pending approvals, the current
 * block) in their memo, so a front end finds it with a describe when no worker runs.
 */
export const PENDING_IN_MEMO_PATCH = 'pending-in-memo';

/**
 * Tasks with this marker keep a long conversation in the window by strategy, in order: the API's
 * own compaction where the model has it (the block kept, what precedes it dropped), else a durable
 * summary of the turns that leave (its own activity and budget), trimming only as the last resort.
 * Asked lazily, the first time a task's conversation needs room (context-fit.ts), so tasks that
 * never grew that long kept their histories; without it, the sliding window trims as before.
 */
export const CONTEXT_STRATEGIES_PATCH = 'context-strategies';
/**
 * Recorded at a task's first delegation call (a sub-agent's child task): asked lazily there, so
 * tasks that never delegate keep their histories unchanged. Marks the histories that start children.
 */
export const SUBAGENTS_PATCH = 'subagents';
/**
 * Tasks started with this marker send their progress after the previous turn with each model call
 * (CallModelInput.checkpoint), so any completed turn can be forked (docs/fork.md). Asked lazily, at
 * a run's first model call.
 */
export const FORKABLE_TURNS_PATCH = 'forkable-turns';
/**
 * Tasks started with this marker tell runTool the turn (and a fork's lineage) of each write, so the
 * worker records it in the effect journal and refuses to repeat one that already ran; the task then
 * asks a person, showing the earlier outcome. Asked lazily, at a run's first write.
 */
export const EFFECT_JOURNAL_PATCH = 'effect-journal';

/**
 * Tasks that recorded this marker guard a call by what its input says it does: a tool that names
 * read commands (the memory tool's `view`) has those calls treated as reads (no duplicate-write
 * refusal, no approval). Asked lazily, at a task's first such call, so other tasks keep their histories.
 */
export const READ_COMMANDS_PATCH = 'read-commands';
/** Tasks that asked a tool's question carry this marker (histories from before never did). */
export const MCP_TOOLS_PATCH = 'mcp-tools';
/** Tasks with this marker run reads that proved fast as local activities (fast-reads.ts). */
export const FAST_READS_PATCH = 'fast-reads-local';

/**
 * Runs started with this marker ask every marker below at their start, right after runRules' own.
 * Asked where each is first used, a marker can land in the wrong workflow task: when a status query
 * reaches a workflow task while a local activity runs, the SDK's core answers the query, records the
 * local call's result and asks for a new task, where the workflow then sees the result (and asks the
 * marker); on replay the result comes in the earlier task, and the marker is looked for there
 * (TMPRL1100, test/integration/query-during-local-call.test.ts). Asked at the start, each is known
 * from the run's first task on, and every later patched() of it answers true the same way in both.
 * The same race moves the server's continue-as-new suggestion, which comes with each workflow task:
 * runs with this marker read it when a model call answers (a regular activity, whose answer comes in
 * the same task on replay), not between turns, which may follow a local call.
 * Runs without this marker ask them where they always did.
 */
export const MARKERS_AT_RUN_START_PATCH = 'markers-at-run-start';
/** The markers that used to be asked at their first use, in the order a run now asks them at its start. */
export const MARKERS_ASKED_AT_RUN_START = [
  NOTIFY_PEOPLE_PATCH,
  MCP_TOOLS_PATCH,
  FAST_READS_PATCH,
  CONTEXT_STRATEGIES_PATCH,
  SUBAGENTS_PATCH,
  FORKABLE_TURNS_PATCH,
  EFFECT_JOURNAL_PATCH,
  READ_COMMANDS_PATCH,
] as const;

/**
 * Runs started with this marker keep budgets as hard caps (asked at the run's start, after the
 * markers above, only by runs that ask those there): a model call an interrupt cancels is aborted on
 * the worker (WAIT_CANCELLATION_COMPLETED: awaited by a task with a token or cost budget, settled in
 * the background otherwise), and what it cost (measured from its stream, or its maximum) is counted;
 * a spent token or cost budget stops the call an interrupt asks for; a sub-agent's calls are sent
 * only with a max_tokens that fits what is left of its slice.
 */
export const HARD_BUDGETS_PATCH = 'hard-budgets';

/**
 * Runs with this marker keep the ids they derive (their children's, `<task>--<agent>-<n>`) within
 * DERIVED_ID_MAX_BYTES (255 bytes: servers with an SQL visibility store refuse longer ids); runs
 * without it keep them within MAX_TASK_ID_BYTES (1,000: Temporal's default limit). Either way an id
 * within the bound is exactly the id it always was, and a longer one is shortened (protocol/task-ids.ts).
 * Why this is safe for histories already recorded:
 * - Asked at a run's start (after MARKERS_ASKED_AT_RUN_START), and only by a run whose own id is long
 *   enough for a child id to pass 255 bytes (mayDeriveLongIds): every other run, and every committed
 *   history (test/histories), derives and records exactly what it did before.
 * - Without the marker (a run recorded before it) the bound stays 1,000, where shortening needs no
 *   marker: a child id over 1,000 bytes was refused by the server with the default limit, so the
 *   workflow task that tried it failed and no history holds a child started with such an id. Such a
 *   task, stuck retrying that workflow task, starts its child under the shortened id once upgraded.
 *   (A server configured above 1,000 would have accepted those ids: that configuration is not supported.)
 * - Between 256 and 1,000 bytes the plain id was accepted (dev servers, Elasticsearch visibility), so
 *   a history may hold it: only runs that recorded this marker shorten there.
 */
export const BOUNDED_IDS_PATCH = 'bounded-derived-ids';

/**
 * Forks whose origin id is over 200 characters were refused as invalid input (`forkOf.taskId`, then
 * limited like a person's name) before this marker: their histories end at that refusal and replay
 * so. A fork started with it takes any origin id Temporal accepts (up to 1,000). Asked only by such
 * forks, before anything else they do (forkPointOf), so no other history changes.
 */
export const LONG_FORK_ORIGINS_PATCH = 'long-fork-origins';
/** The longest `forkOf.taskId` before LONG_FORK_ORIGINS_PATCH. */
export const LEGACY_MAX_FORK_ORIGIN_CHARS = 200;

/** Why a fork of `origin` may not start (a fork recorded before LONG_FORK_ORIGINS_PATCH); undefined when it may. */
export function forkOriginRefusal(origin: string): string | undefined {
  if (origin.length <= LEGACY_MAX_FORK_ORIGIN_CHARS || patched(LONG_FORK_ORIGINS_PATCH)) return undefined;
  return `\`forkOf.taskId\` is ${origin.length} characters; at most ${LEGACY_MAX_FORK_ORIGIN_CHARS}`;
}

/** The longest tail a child id adds to its parent's: `--`, an agent name (64), `-`, a call number (16 digits). */
export const MAX_CHILD_ID_TAIL_BYTES = 2 + 64 + 1 + 16;

/** Whether a run with this id could derive an id past DERIVED_ID_MAX_BYTES (only such runs ask BOUNDED_IDS_PATCH). */
export function mayDeriveLongIds(taskId: string): boolean {
  return utf8Length(taskId) + MAX_CHILD_ID_TAIL_BYTES > DERIVED_ID_MAX_BYTES;
}

/** The bound a run's derived ids keep (see BOUNDED_IDS_PATCH). */
export function derivedIdBytes(rules: Pick<RunRules, 'boundedIds'>): number {
  return rules.boundedIds ? DERIVED_ID_MAX_BYTES : MAX_TASK_ID_BYTES;
}

/**
 * Tasks started with this marker accept only claim format v2: a signed start, fork, decision,
 * message or interrupt covers every field of its request but the proof (decision-proof.ts), so a
 * field added to a signed request (a start's `forkOf`) is refused. A signed start is single-use:
 * the run checks with the server that no other execution of its task id started since the proof
 * could have been signed (start-claim.ts), and a fork is a decision the origin agent's policy names
 * people for (`approvers.branch`; a verified signer where the agent requires signed starts).
 * Histories without it replay with the v1 checks they were recorded with. Asked at every run's start (runRules).
 */
export const WHOLE_INPUT_PROOFS_PATCH = 'whole-input-proofs';

/**
 * Runs whose manifest carries the context window a custom model declares
 * (`capabilities.contextWindowTokens`, AgentManifest.modelContextWindowTokens) make room by that
 * window instead of the pinned default. Asked only by such runs (no manifest held the field before
 * it), so no other history records it.
 */
export const DECLARED_MODEL_WINDOW_PATCH = 'declared-model-window';

/** Markers asked lazily, each once per run at the point where it first matters (later markers than runRules'). */
export class LaterRules {
  private forkable: boolean | undefined;
  private journal: boolean | undefined;

  forkableTurns(): boolean {
    return (this.forkable ??= patched(FORKABLE_TURNS_PATCH));
  }

  effectJournal(): boolean {
    return (this.journal ??= patched(EFFECT_JOURNAL_PATCH));
  }
}

/** The behaviour a run takes, decided once at its start (the order of the patched() calls is part of history). */
export interface RunRules {
  /** Undefined for a resumed run (its limits came with the snapshot). */
  newRules: boolean | undefined;
  stablePrefix: boolean;
  configFromWorker: boolean;
  pendingInMemo: boolean;
  guarded: boolean;
  people: boolean;
  shortActivityHeartbeats: boolean;
  canContinueAsNew: boolean;
  verifiedApprovers: boolean;
  /** Every later marker asked at the run's start; the server's continue-as-new suggestion read as a model call answers. */
  markersAtRunStart: boolean;
  /** Derived ids within DERIVED_ID_MAX_BYTES (BOUNDED_IDS_PATCH); false for runs whose ids cannot get that long. */
  boundedIds: boolean;
  /** Budgets are hard caps (HARD_BUDGETS_PATCH). */
  hardBudgets: boolean;
  /** Signed requests cover their whole input (claim v2 only), start proofs are single-use, forks follow `approvers.branch`. */
  wholeInputProofs: boolean;
}

/** Asks each marker in the order tasks have always asked them: a new order would not replay. */
export function runRules(resumed: boolean, beforeState: (newRules: boolean | undefined) => void): RunRules {
  const newRules = resumed ? undefined : patched(PINNED_LIMITS_PATCH);
  beforeState(newRules);
  const stablePrefix = newRules === true && patched(STABLE_PREFIX_PATCH);
  const configFromWorker = patched(CONFIG_FROM_WORKER_PATCH);
  const pendingInMemo = patched(PENDING_IN_MEMO_PATCH);
  const guarded = patched(GUARDED_CALLS_PATCH);
  const people = patched(PEOPLE_IN_THE_LOOP_PATCH);
  const shortActivityHeartbeats = patched(SHORT_ACTIVITY_HEARTBEATS_PATCH);
  const canContinueAsNew = patched(CONTINUE_AS_NEW_PATCH);
  const verifiedApprovers = patched(VERIFIED_APPROVERS_PATCH);
  const markersAtRunStart = patched(MARKERS_AT_RUN_START_PATCH);
  if (markersAtRunStart) for (const marker of MARKERS_ASKED_AT_RUN_START) patched(marker);
  const boundedIds = markersAtRunStart && mayDeriveLongIds(workflowInfo().workflowId) && patched(BOUNDED_IDS_PATCH);
  const hardBudgets = markersAtRunStart && patched(HARD_BUDGETS_PATCH);
  const wholeInputProofs = patched(WHOLE_INPUT_PROOFS_PATCH);
  return {
    newRules,
    stablePrefix,
    configFromWorker,
    pendingInMemo,
    guarded,
    people,
    shortActivityHeartbeats,
    canContinueAsNew,
    verifiedApprovers,
    markersAtRunStart,
    boundedIds,
    hardBudgets,
    wholeInputProofs,
  };
}
