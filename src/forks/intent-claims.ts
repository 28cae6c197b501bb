/**
 * One claim per intent for the whole family (docs/guarantees.md): before a write or destructive call
 * runs, its intent (tool and canonical arguments) is claimed in the family's journal by an exclusive
 * create that only one caller can win. Whatever relation the other members have to the holder
 * (ancestor, descendant, sibling fork, a second child, a reset run, a concurrent approval), they find
 * the claim and a person is asked; nothing is decided by walking lineage.
 *
 * Claims are numbered: generation 1 is the first call that may take effect, each later one is a call
 * a person let run again (recorded with their approval). A claim whose call failed (took no effect)
 * releases the intent: the next caller takes the next generation. Only the holder settles its claim,
 * by appending steps (done, unknown, failed) beside it; the claim itself is never rewritten.
 */
import type { BlobStore } from '../blobs/blob-store';
import { effectStateOf, type EffectRecord, type EffectState } from '../protocol/fork';
import { familyJournalPrefix, familyJournalScope, latestSteps } from './effect-journal';

/** A claim and where its call stands now (its holder's latest step). */
export interface IntentClaim {
  generation: number;
  /** The holder's record as it claimed (state pending). */
  claim: EffectRecord;
  /** The holder's latest step: the claim itself until the call settles. */
  latest: EffectRecord;
  state: EffectState;
}

/** Everything the family's journal holds about one intent. */
export interface IntentView {
  /** By generation, oldest first. */
  claims: IntentClaim[];
  /** Calls journaled by builds before claims (no generation), latest step of each. */
  legacy: EffectRecord[];
}

/** What the caller about to run the intent may do. */
export type ClaimDecision =
  /** Its own earlier attempt holds the claim (an activity retry): it goes on under that claim. */
  | { kind: 'hold'; claim: IntentClaim }
  /** Nobody holds the intent (or a person approved running it again): try to create this generation. */
  | { kind: 'take'; generation: number }
  /** An idempotent call done or unknown elsewhere: run it under that claim's key, which the service answers without a second effect. */
  | { kind: 'reuse'; claim: IntentClaim }
  /** Someone else holds it: a person decides, shown this record. */
  | { kind: 'refuse'; record: EffectRecord };

export interface ClaimingCall {
  /** `<runId>/<activityId>`: the same across the activity's attempts. */
  attempt: string;
  idempotent: boolean;
  /** The key the call would run under: an idempotent call under its holder's own key is the same call again. */
  idempotencyKey: string;
  /** A person approved running the call again although the journal shows an earlier one. */
  repeatApproved: boolean;
}

const CLAIM_NAME = /^claim-(\d{8})$/;

export function claimName(generation: number): string {
  if (!Number.isSafeInteger(generation) || generation < 1 || generation > 99_999_999) throw new RangeError(`a claim generation is 1..99999999, got ${generation}`);
  return `claim-${String(generation).padStart(8, '0')}`;
}

/**
 * The rule, on what the journal holds: no lineage, no relation, only who holds the intent and how
 * its call stands. A failed claim took no effect and never counts.
 */
export function decideClaim(view: IntentView, call: ClaimingCall): ClaimDecision {
  const live = view.claims.filter((c) => c.state !== 'failed');
  const mine = live.find((c) => c.claim.attempt === call.attempt);
  if (mine) return { kind: 'hold', claim: mine };
  const next = (view.claims.at(-1)?.generation ?? 0) + 1;
  if (call.repeatApproved) return { kind: 'take', generation: next };
  const legacy = view.legacy.find((r) => r.attempt !== call.attempt && effectStateOf(r) !== 'failed');
  if (legacy) return { kind: 'refuse', record: legacy };
  const holder = live.at(-1);
  if (!holder) return { kind: 'take', generation: next };
  // The same logical call again (the model's identical retry after a lost reply): the service answers its key once, whatever state the claim is in.
  if (call.idempotent && holder.claim.idempotencyKey === call.idempotencyKey) return { kind: 'reuse', claim: holder };
  if (call.idempotent && (holder.state === 'done' || holder.state === 'unknown')) return { kind: 'reuse', claim: holder };
  return { kind: 'refuse', record: holder.latest };
}

export class IntentClaims {
  constructor(private readonly store: BlobStore) {}

  /** Creates the claim `generation` of the intent with the holder's pending record: true when this caller won it. */
  take(root: string, record: EffectRecord & { generation: number }): Promise<boolean> {
    return this.store.createRecord(familyJournalScope(root, record.intent), claimName(record.generation), JSON.stringify(record));
  }

  /** The holder's next step (done, unknown, failed): a blob beside the claim, never a change to it. */
  async settle(root: string, step: EffectRecord): Promise<void> {
    await this.store.put(familyJournalScope(root, step.intent), JSON.stringify(step));
  }

  /** Every intent's view in the family of `root` (every scope of its journal): for people and tests, not for a write's check. */
  async family(root: string): Promise<IntentView[]> {
    const prefix = familyJournalPrefix(root);
    return Promise.all((await this.store.scopes()).filter((s) => s.startsWith(prefix)).map((scope) => this.viewOf(scope)));
  }

  view(root: string, intent: string): Promise<IntentView> {
    return this.viewOf(familyJournalScope(root, intent));
  }

  private async viewOf(scope: string): Promise<IntentView> {
    const [records, ids] = await Promise.all([this.store.records(scope), this.store.ids(scope)]);
    const steps = await Promise.all(ids.map(async (id) => JSON.parse(await this.store.get(scope, id)) as EffectRecord));
    const claims: IntentClaim[] = [];
    for (const { name, text } of records) {
      const generation = Number(CLAIM_NAME.exec(name)?.[1]);
      if (!generation) continue;
      const claim = JSON.parse(text) as EffectRecord;
      // A record's steps are its holder's, of its generation; the step number orders them.
      const own = steps.filter((s) => s.generation === generation && s.attempt === claim.attempt);
      const latest = own.reduce((a, b) => ((b.step ?? 0) > (a.step ?? 0) ? b : a), claim);
      claims.push({ generation, claim, latest, state: effectStateOf(latest) });
    }
    claims.sort((a, b) => a.generation - b.generation);
    const legacy = latestSteps(steps.filter((s) => s.generation === undefined).sort((a, b) => a.at.localeCompare(b.at) || (a.step ?? 0) - (b.step ?? 0)));
    return { claims, legacy };
  }
}
