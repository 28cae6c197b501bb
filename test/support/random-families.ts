/**
 * Random task families on a real server (issue 47): a seed generates a sequence of family operations
 * (start, fork at any turn, rewind, `temporal workflow reset`, delegate once or twice, approvals of
 * identical writes given together, cancel, purge, deletion of closed executions) over agents with a
 * non-idempotent and an idempotent write; then every question is answered (a repeat approved or
 * denied at random) until the family is still, and the effects are counted against the approvals.
 *
 * The rule checked: every intent took effect at most once more than the repeats people approved.
 * A failing seed replays: the same seed gives the same operations and the same answers.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { provisionTemporalCli } from '../../src/server/temporal-cli';
import type { ApprovalRequest } from '../../src/protocol/task';
import type { ModelScript } from '../../src/models/scripted-model';
import type { BlobStore } from '../../src/blobs/blob-store';
import { cliIn, runMain } from './cli-in-process';
import { answer, callTool, toolResultsOf, type Harness } from './harness';
import type { EffectLog } from './family-agents';

const exec = promisify(execFile);

type Kind = 'payer' | 'cautious' | 'lead';

export type FamilyOp =
  /** `continueAsNewEveryTurns: 1`: every turn in a run of its own, so calls meet claims across continue-as-new. */
  | { op: 'start'; kind: Kind; calls: string[]; continueAsNewEveryTurn?: boolean }
  | { op: 'fork'; member: number; turn: number; calls: string[] }
  | { op: 'rewind'; member: number; turn: number }
  | { op: 'reset'; member: number }
  | { op: 'approveTogether' }
  | { op: 'cancel'; member: number }
  | { op: 'purge'; member: number }
  | { op: 'deleteClosed'; member: number }
  /** Deletes the member's closed children (as retention would): a re-delegation meets no old execution. */
  | { op: 'deleteChildren'; member: number }
  /** Waits (bounded) until the member's execution closes, answering nothing. */
  | { op: 'waitClosed'; member: number }
  /** SIGKILLs the worker running the family, at the worst moment when one comes (a write made, its reply held). */
  | { op: 'kill' };

/** mulberry32: small, and the same sequence for the same seed on every machine. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PAYER_CALLS = ['pay P-1', 'pay P-2', 'credit C-1'];
const LEAD_CALLS = ['delegate A', 'delegate B'];

/** The operations of one seed: a start, then 3 to 5 more, each on a member that exists by then. */
export function opsOf(seed: number, { withKill = false }: { withKill?: boolean } = {}): FamilyOp[] {
  const next = random(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
  const kind = pick<Kind>(['payer', 'payer', 'cautious', 'lead', 'lead']);
  const callsFor = (k: Kind): string[] => {
    const pool = k === 'lead' ? LEAD_CALLS : PAYER_CALLS;
    return Array.from({ length: 1 + Math.floor(next() * 2) }, () => pick(pool));
  };
  // Drawn apart from the sequence, so adding it left every earlier seed's operations as they were.
  const continueAsNewEveryTurn = random(seed ^ 0x5bd1e995)() < 0.3;
  const ops: FamilyOp[] = [{ op: 'start', kind, calls: callsFor(kind), ...(continueAsNewEveryTurn ? { continueAsNewEveryTurn } : {}) }];
  let members = 1;
  const count = 3 + Math.floor(next() * 3);
  for (let i = 0; i < count; i++) {
    const member = Math.floor(next() * members);
    const turn = Math.floor(next() * 2);
    const op = pick(['fork', 'fork', 'fork', 'rewind', 'reset', 'approveTogether', 'cancel', 'purge', 'deleteClosed', 'deleteChildren', 'waitClosed', 'waitClosed'] as const);
    if (op === 'fork' || op === 'rewind') {
      ops.push(op === 'fork' ? { op, member, turn, calls: callsFor(kind) } : { op, member, turn });
      members++;
    } else ops.push(op === 'approveTogether' ? { op } : { op, member });
  }
  // A kill somewhere after the start, drawn apart so the other operations stay the seed's own.
  if (withKill) ops.splice(1 + Math.floor(random(seed ^ 0x27d4eb2f)() * ops.length), 0, { op: 'kill' });
  return ops;
}

function scriptTurns(calls: readonly string[], padding: number): ModelScript['turns'] {
  const turns: ModelScript['turns'] = Array.from({ length: padding }, () => answer('never played'));
  for (const call of calls) {
    const [verb, arg] = call.split(' ') as [string, string];
    if (verb === 'delegate') turns.push(callTool('delegate_to_clerk', { task: `Pay P-1 (${arg}).` }));
    else turns.push(callTool(verb, { ref: arg }));
  }
  turns.push(answer('done'));
  return turns;
}

/** A repeat question: the journal or the ledger saw the same call run already. */
function isRepeat(approval: ApprovalRequest): boolean {
  return /with these (exact )?arguments/.test(approval.reason);
}

function intentOfApproval(approval: ApprovalRequest): string {
  return `${approval.tool}:${(approval.input as { ref: string }).ref}`;
}

export interface FamilyRun {
  seed: number;
  ops: FamilyOp[];
  members: string[];
  effects: Record<string, number>;
  approvedRepeats: Record<string, number>;
  asked: string[];
  blocked: string[];
  kills: string[];
  /** Intents whose effects exceed 1 + the repeats approved for them: the goal is none. */
  repeatsWithoutPerson: { intent: string; effects: number; approved: number }[];
  skipped: string[];
}

const CLOSED = new Set(['COMPLETED', 'FAILED', 'CANCELLED', 'TERMINATED', 'TIMED_OUT', 'CONTINUED_AS_NEW']);

/** Runs one seed's family to stillness and counts. `log` is the effect log the worker's tools write to. */
export interface FamilyStore {
  /** The store the workers keep blobs and the journal in. */
  store: BlobStore;
  /** How `durable-agent` names it (`--blob-store`), for purge. */
  location: string;
}

export interface FamilyRunOptions {
  /** The workers' store when it is not the harness's folder. */
  where?: FamilyStore;
  /** How long the family may take to become still. Default 90 s. */
  settleMs?: number;
  /** Performs a `kill` operation (SIGKILLs the worker that runs the family): what the kill landed on. */
  kill?: () => Promise<string>;
}

export async function runFamily(h: Harness, log: EffectLog, seed: number, ops = opsOf(seed), options: FamilyRunOptions = {}): Promise<FamilyRun> {
  const { where, settleMs = 90_000 } = options;
  const store = where?.store ?? h.blobStore;
  const decide = random(seed ^ 0x9e3779b9);
  const members: string[] = [];
  const gone = new Set<string>();
  const skipped: string[] = [];
  const approvedRepeats: Record<string, number> = {};
  /** Every repeat a person was asked about: `<member>: <intent>`. */
  const asked: string[] = [];
  /** Members left blocked for a person (`<member>: <reason>`): still, but reported. */
  const blocked: string[] = [];
  /** What each kill landed on. */
  const kills: string[] = [];
  const temporal = await provisionTemporalCli();
  const root = h.taskId(`fam${seed}`);
  // Fresh intents per run: the refs are the same, the family differs, and the log is per run.
  const describeOrUndefined = (id: string) => h.client.describe(id).catch(() => undefined);
  const closed = async (id: string) => {
    const d = await describeOrUndefined(id);
    return d === undefined || CLOSED.has(String(d.executionStatus));
  };
  // Deletion is asynchronous on the server (about 30 s on the dev server): wait (bounded) until the
  // execution is gone, as retention leaves it, so a new execution may take its id.
  const deleteExecution = async (id: string) => {
    await exec(temporal, ['workflow', 'delete', '--address', h.server.address, '--workflow-id', id]);
    const until = Date.now() + 90_000;
    while ((await describeOrUndefined(id)) && Date.now() < until) await new Promise((r) => setTimeout(r, 200));
  };
  const at = (i: number) => members[Math.min(i, members.length - 1)]!;
  const turnOf = async (id: string) => (await h.client.status(id).catch(() => undefined))?.turn ?? 0;

  for (const op of ops) {
    try {
      switch (op.op) {
        case 'start': {
          await h.client.start(
            {
              agent: op.kind,
              prompt: 'Pay what is due.',
              model: { provider: 'scripted', script: h.script(scriptTurns(op.calls, 0)) },
              ...(op.continueAsNewEveryTurn ? { continueAsNewEveryTurns: 1 } : {}),
            },
            { taskId: root },
          );
          members.push(root);
          break;
        }
        case 'fork': {
          const origin = at(op.member);
          if (gone.has(origin)) {
            skipped.push(`fork of deleted ${origin}`);
            break;
          }
          const turn = Math.min(op.turn, await turnOf(origin));
          const fork = await h.client.fork(origin, turn, { model: { provider: 'scripted', script: h.script(scriptTurns(op.calls, turn)) }, blobStore: store });
          members.push(fork.taskId);
          break;
        }
        case 'rewind': {
          const origin = at(op.member);
          if (gone.has(origin)) {
            skipped.push(`rewind of deleted ${origin}`);
            break;
          }
          const turn = Math.min(op.turn, await turnOf(origin));
          const rewound = await h.client.rewind(origin, turn, { blobStore: store, settleTimeoutMs: 1_000 });
          members.push(rewound.taskId);
          break;
        }
        case 'reset': {
          const member = at(op.member);
          if (gone.has(member)) {
            skipped.push(`reset of deleted ${member}`);
            break;
          }
          await exec(temporal, ['workflow', 'reset', '--address', h.server.address, '--workflow-id', member, '--type', 'FirstWorkflowTask', '--reason', `family ${seed}`]);
          break;
        }
        case 'approveTogether': {
          // Every open member asks first (bounded): then one click each, at the same moment.
          const waitUntil = Date.now() + 15_000;
          let pending = await pendingOf(h, members, gone);
          while (Date.now() < waitUntil) {
            const asking = new Set(pending.map((p) => p.taskId));
            const quiet = [];
            for (const id of members) if (!gone.has(id) && !asking.has(id) && !(await closed(id))) quiet.push(id);
            if (quiet.length === 0) break;
            await new Promise((r) => setTimeout(r, 200));
            pending = await pendingOf(h, members, gone);
          }
          const calls = pending.filter(({ approval }) => !isRepeat(approval));
          await Promise.all(calls.map(({ taskId, approval }) => h.client.approve(taskId, { approvalId: approval.id, by: 'ops' }).catch(() => undefined)));
          break;
        }
        case 'cancel': {
          const member = at(op.member);
          if (!gone.has(member) && !(await closed(member))) await h.client.cancel(member).catch(() => undefined);
          break;
        }
        case 'purge': {
          const member = at(op.member);
          if (gone.has(member) || !(await closed(member))) {
            skipped.push(`purge of open ${member}`);
            break;
          }
          const purged = where
            ? await runMain(['purge', member, '--json', '--address', h.server.address, '--task-queue', h.taskQueue, '--blob-store', where.location])
            : await cliIn(h, 'purge', member, '--json');
          if (purged.code !== 0) skipped.push(`purge of ${member}: ${purged.err.split('\n')[0]}`);
          break;
        }
        case 'deleteClosed': {
          const member = at(op.member);
          if (gone.has(member) || !(await closed(member))) {
            skipped.push(`delete of open ${member}`);
            break;
          }
          await deleteExecution(member);
          gone.add(member);
          break;
        }
        case 'deleteChildren': {
          const member = at(op.member);
          for (const k of [1, 2, 3]) {
            const child = `${member}--clerk-${k}`;
            const d = await describeOrUndefined(child);
            if (d && CLOSED.has(String(d.executionStatus))) await deleteExecution(child);
          }
          break;
        }
        case 'kill': {
          if (!options.kill) throw new Error('a kill operation needs FamilyRunOptions.kill');
          kills.push(await options.kill());
          break;
        }
        case 'waitClosed': {
          const member = at(op.member);
          const waitUntil = Date.now() + 20_000;
          const asking = async () => ((await h.client.status(member).catch(() => undefined))?.pendingApprovals.length ?? 0) > 0;
          while (!gone.has(member) && !(await closed(member)) && !(await asking()) && Date.now() < waitUntil) await new Promise((r) => setTimeout(r, 200));
          break;
        }
      }
    } catch (err) {
      // A refused operation (a purged origin cannot be forked, a turn that is not there) is part of the family's life, not a failure of the rule.
      skipped.push(`${op.op}: ${(err as Error).message.split('\n')[0]}`);
    }
  }

  // Answer every question until the family is still: repeats at random, first calls approved (together).
  const deadline = Date.now() + settleMs;
  for (;;) {
    for (const id of [...members]) for (const k of [1, 2, 3]) if (!members.includes(`${id}--clerk-${k}`) && (await describeOrUndefined(`${id}--clerk-${k}`))) members.push(`${id}--clerk-${k}`);
    const pending = await pendingOf(h, members, gone);
    const open = [];
    blocked.length = 0;
    for (const id of members) {
      if (gone.has(id) || (await closed(id))) continue;
      // A blocked member waits for a person's unblock: still, and reported, never answered here.
      const status = await h.client.status(id).catch(() => undefined);
      if (status?.agentStatus === 'blocked' && status.pendingApprovals.length === 0) blocked.push(`${id}: ${status.blocked?.reason ?? status.lastError?.code}`);
      else open.push(id);
    }
    if (open.length === 0) break;
    if (Date.now() > deadline) {
      const how = await Promise.all(
        open.map(async (id) => {
          const st = await h.client.status(id).catch(() => undefined);
          return `${id} (${st?.phase ?? '?'}${st?.blocked ? `: ${st.blocked.reason}` : ''}${st?.lastError ? `; last error ${st.lastError.code}` : ''})`;
        }),
      );
      throw new Error(`seed ${seed}: the family never became still; open: ${how.join(', ')}`);
    }
    await Promise.all(
      pending.map(async ({ taskId, approval }) => {
        const repeat = isRepeat(approval);
        if (repeat) asked.push(`${taskId}: ${intentOfApproval(approval)}`);
        if (repeat && decide() < 0.5) return h.client.deny(taskId, { approvalId: approval.id, by: 'ops', reason: 'ran already' }).catch(() => undefined);
        const answered = await h.client.approve(taskId, { approvalId: approval.id, by: 'ops' }).catch(() => undefined);
        if (answered && repeat) approvedRepeats[intentOfApproval(approval)] = (approvedRepeats[intentOfApproval(approval)] ?? 0) + 1;
        return answered;
      }),
    );
    await new Promise((r) => setTimeout(r, 300));
  }
  const effects = Object.fromEntries(log.intents(root).map((i) => [i, log.effectsOf(root, i)]));
  const repeatsWithoutPerson = Object.entries(effects)
    .filter(([intent, n]) => n > 1 + (approvedRepeats[intent] ?? 0))
    .map(([intent, n]) => ({ intent, effects: n, approved: approvedRepeats[intent] ?? 0 }));
  const run = { seed, ops, members, effects, approvedRepeats, asked, blocked, kills, repeatsWithoutPerson, skipped };
  // FAMILY_DEBUG=1 prints each family as it ended: what ran, what was refused, what people allowed.
  if (process.env.FAMILY_DEBUG) {
    const ends = await Promise.all(
      members.map(async (id) => [
        id,
        (await describeOrUndefined(id))?.executionStatus,
        (await h.client.status(id).catch((e: Error) => ({ phase: e.message })))?.phase,
        toolResultsOf(await h.client.transcript(id)).map((r) => String(r.content).slice(0, 160)),
      ]),
    );
    console.log(JSON.stringify({ ...run, ends }));
  }
  return run;
}

async function pendingOf(h: Harness, members: readonly string[], gone: ReadonlySet<string>): Promise<{ taskId: string; approval: ApprovalRequest }[]> {
  const out: { taskId: string; approval: ApprovalRequest }[] = [];
  for (const taskId of members) {
    if (gone.has(taskId)) continue;
    const status = await h.client.status(taskId).catch(() => undefined);
    for (const approval of status?.pendingApprovals ?? []) out.push({ taskId, approval });
  }
  return out;
}
