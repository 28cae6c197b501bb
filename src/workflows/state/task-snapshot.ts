/**
 * What a task carries into its next run (continue-as-new): one versioned data object, progress
 * only. Schema 2 carries no configuration (the run asks its worker for the manifest). A run of this
 * build may resume a snapshot an older build wrote (a continue-as-new moves a versioned task to the
 * deployment's current build): schema 1 carried the manifest too, which is ignored, and its limits
 * may be the first release's, which give way to today's (limitsFrom).
 */
import { STATUS_EVENT_WINDOW, type TaskInput, type TaskSnapshot } from '../../protocol/task';
import { ToolLedger, type LedgerState } from './ledger';
import { addRecovery, anyRecovery } from './recovery-bill';
import { TaskState, type Clock } from './task-state';
import { limitsFrom } from '../../rules/task-limits';

/** Schema 2: progress only (no manifest). Schema 1 (no `schemaVersion`, older builds): the manifest rode along. */
export const CURRENT_SNAPSHOT_SCHEMA = 2;
export const READABLE_SNAPSHOT_SCHEMAS: readonly number[] = [1, 2];

export function snapshotOf(state: TaskState): TaskSnapshot {
  const { conversation, audit } = state;
  return {
    version: 1,
    schemaVersion: CURRENT_SNAPSHOT_SCHEMA,
    limits: state.limits,
    ...(state.modelOverride.model || state.modelOverride.maxTokens ? { modelOverride: { ...state.modelOverride } } : {}),
    ...(state.fallback ? { fallback: structuredCopy(state.fallback) } : {}),
    ...(audit.archive.length ? { archive: [...audit.archive] } : {}),
    ...(conversation.compactions ? { compactions: conversation.compactions, droppedTurns: conversation.droppedTurns } : {}),
    ...(conversation.context ? { context: structuredCopy(conversation.context) } : {}),
    runs: state.runs + 1,
    turn: state.turn,
    messages: conversation.messages,
    toolCalls: { ...state.toolCalls },
    usage: { ...state.usage },
    costUsd: state.costUsd,
    unpricedModels: [...state.unpricedModels],
    ...(anyRecovery(state.recovery) ? { recovery: { ...state.recovery } } : {}),
    ledger: state.ledger.toJSON(),
    corrections: { ...state.corrections },
    escalations: audit.escalations,
    approvals: audit.approvals,
    decisions: audit.decisions,
    ...(state.starter ? { starter: state.starter } : {}),
    ...(state.messageNonces.length ? { messageNonces: [...state.messageNonces] } : {}),
    budgets: state.budgets,
    ...(state.lastError ? { lastError: state.lastError } : {}),
    model: state.model,
    pendingGuidance: conversation.pendingGuidance,
    events: audit.events.slice(-Math.min(STATUS_EVENT_WINDOW, state.limits.auditWindow)),
    eventCount: audit.eventCount,
    ...(state.children.toJSON() ? { delegated: state.children.toJSON()! } : {}),
    ...(state.lineage.length ? { lineage: [...state.lineage] } : {}),
    ...(state.readRecording ? { readRecording: state.readRecording } : {}),
    ...(state.agentVersion ? { agentVersion: state.agentVersion } : {}),
    ...(state.buildOf() ? { build: state.buildOf()!.buildId } : {}),
    // Only once graded: a task without an outcome writes the snapshot it wrote before outcomes existed.
    ...(state.grades.length ? { grades: state.grades.map((g) => ({ ...g })) } : {}),
  };
}

function structuredCopy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/**
 * The per-turn record a fork starts from: the progress after the previous turn,
 * sent with the model call whose input already holds the messages (so they are not repeated) and
 * without the status events (a window for people, not progress).
 */
export function checkpointOf(state: TaskState): TaskSnapshot {
  // The audit archive stays with the origin (a fork's own trail starts at its branch point): its list
  // of markers grows with the task, and every turn would carry it.
  const { archive: _originsAudit, ...progress } = snapshotOf(state);
  return { ...progress, turn: state.turn - 1, messages: [], events: [], ledger: state.ledger.forkable(state.turn) };
}

/** The state a run resumes with: made with the snapshot's pinned limits, given the progress its previous run carried. */
export function restoreTask(input: TaskInput, clock: Clock, snapshot: TaskSnapshot): TaskState {
  return restoreState(new TaskState(input, clock, limitsFrom(snapshot.limits)), snapshot);
}

/** A fresh state given the progress its previous run carried (lists an older build did not write start empty). */
export function restoreState(state: TaskState, snapshot: TaskSnapshot): TaskState {
  const schema = snapshot.schemaVersion ?? 1;
  if (!READABLE_SNAPSHOT_SCHEMAS.includes(schema)) throw new Error(`snapshot schema ${schema} is not one this code reads (${READABLE_SNAPSHOT_SCHEMAS.join(', ')})`);
  const { conversation, audit } = state;
  if (snapshot.modelOverride) state.modelOverride = { ...snapshot.modelOverride };
  if (snapshot.fallback) state.fallback = structuredCopy(snapshot.fallback);
  audit.archive.push(...(snapshot.archive ?? []));
  conversation.compactions = snapshot.compactions ?? 0;
  conversation.droppedTurns = snapshot.droppedTurns ?? 0;
  if (snapshot.context) conversation.context = structuredCopy(snapshot.context);
  state.phase = 'running';
  state.runs = snapshot.runs;
  state.turn = snapshot.turn;
  // A schema-1 snapshot's `manifest` is not read: the run takes its manifest from its worker (TaskState.adoptManifest).
  conversation.messages.push(...snapshot.messages);
  Object.assign(state.toolCalls, snapshot.toolCalls);
  Object.assign(state.usage, snapshot.usage);
  state.costUsd = snapshot.costUsd;
  state.unpricedModels.push(...(snapshot.unpricedModels ?? []));
  // Added, not assigned: the snapshot is a workflow input, and a malformed bill adds nothing.
  addRecovery(
    state.recovery,
    snapshot.recovery && { repeated: snapshot.recovery.callsRepeated, waitedMs: snapshot.recovery.waitedMs, tokensAgain: snapshot.recovery.tokensAgain, costUsdAgain: snapshot.recovery.costUsdAgain },
  );
  state.ledger = new ToolLedger((snapshot.ledger as LedgerState | undefined) ?? { records: {} }, state.limits);
  Object.assign(state.corrections, snapshot.corrections);
  audit.escalations.push(...(snapshot.escalations ?? []));
  audit.approvals.push(...(snapshot.approvals ?? []));
  audit.decisions.push(...(snapshot.decisions ?? []));
  if (snapshot.starter) state.starter = snapshot.starter;
  state.messageNonces = [...(snapshot.messageNonces ?? [])];
  state.budgets = snapshot.budgets;
  if (snapshot.lastError) state.lastError = snapshot.lastError;
  state.model = snapshot.model;
  conversation.pendingGuidance = [...(snapshot.pendingGuidance ?? [])];
  audit.events = [...(snapshot.events ?? [])];
  audit.eventCount = snapshot.eventCount ?? audit.events.length;
  if (snapshot.delegated) state.children.spent = snapshot.delegated;
  state.lineage = [...(snapshot.lineage ?? [])];
  if (snapshot.readRecording) state.readRecording = snapshot.readRecording;
  state.grades.push(...(snapshot.grades ?? []));
  if (snapshot.agentVersion || snapshot.build) {
    state.previousVersions = { ...(snapshot.agentVersion ? { agentVersion: snapshot.agentVersion } : {}), ...(snapshot.build ? { build: snapshot.build } : {}) };
  }
  return state;
}

/**
 * The snapshot for the next run, made to fit `ceiling` bytes of JSON: cached read content, then
 * the oldest turns, then the audit window give way. Without `snapshot` when it still cannot fit.
 */
export function fitSnapshot(state: TaskState, ceiling: number): { snapshot: TaskSnapshot; bytes: number; shrunk: string[] } | { bytes: number; shrunk: string[] } {
  const { conversation } = state;
  const shrunk: string[] = [];
  state.ledger.forgetStaleReads(state.turn);
  const measure = () => {
    const snapshot = snapshotOf(state);
    return { snapshot, bytes: JSON.stringify(snapshot).length };
  };
  let current = measure();
  if (current.bytes <= ceiling) return { ...current, shrunk };
  state.ledger.dropCachedContent();
  shrunk.push('cached read results');
  current = measure();
  for (let keep = Math.floor(state.ledger.size / 2); current.bytes > ceiling && keep >= 50; keep = Math.floor(keep / 2)) {
    state.ledger.shrinkTo(keep);
    current = measure();
    if (current.bytes <= ceiling) shrunk.push(`ledger cut to ${state.ledger.size} keys`);
  }
  let dropped = 0;
  while (current.bytes > ceiling && conversation.messages.length > 3) {
    conversation.messages.splice(1, 2);
    conversation.droppedTurns += 1;
    dropped += 1;
    current = measure();
  }
  // Only when this fit took turns out: the first prompt is the head of every cached prefix, and a
  // note rewritten there (over a summary that already says what left) would make the next run's
  // first call miss the whole conversation's cache.
  if (dropped) {
    conversation.noteDroppedTurns();
    shrunk.push(`oldest turns (${conversation.droppedTurns} removed in all)`);
    current = measure();
  }
  if (current.bytes <= ceiling) return { ...current, shrunk };
  return { bytes: current.bytes, shrunk };
}
