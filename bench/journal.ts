/**
 * The family's intent claims (issues 35 and 47): what a write's claim costs against a family that
 * already holds 10,000 records (5,000 calls, each claimed then settled, by a root, its forks and
 * their children), on the folder store and on PostgreSQL. A claim is what runTool does before a
 * write: read the intent's claims, decide, then create the next claim exclusively.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LocalBlobStore } from '../src/blobs/local-blob-store';
import { PostgresBlobStore } from '../src/blobs/postgres-blob-store';
import type { BlobStore } from '../src/blobs/blob-store';
import { intentOf } from '../src/forks/effect-journal';
import { decideClaim, IntentClaims } from '../src/forks/intent-claims';
import type { BranchPoint, EffectRecord } from '../src/protocol/fork';
import { startPostgres } from '../test/support/postgres';
import { summarize, type Summary } from './stats';

export const FAMILY_RECORDS = 10_000;
const CHECKS = 200;
const ROOT = 'family-root';

export interface JournalStoreResult {
  store: string;
  records: number;
  fillSeconds: number;
  /** A write whose intent the family already holds (a repeat found). */
  checkHitMs: Summary;
  /** A write new to the family (nothing found), then journaled as pending. */
  checkAndPendingMs: Summary;
}

export interface JournalBenchmark {
  results: JournalStoreResult[];
  loadAverage: { before: number[]; after: number[] };
}

/** The branches of the family: the root, 9 forks of it, and a child of each. */
function branches(): { taskId: string; lineage: BranchPoint[] }[] {
  const out: { taskId: string; lineage: BranchPoint[] }[] = [{ taskId: ROOT, lineage: [] }];
  for (let f = 1; f <= 9; f++) out.push({ taskId: `${ROOT}-fork-${f}`, lineage: [{ taskId: ROOT, turn: f * 10 }] });
  for (const parent of [...out]) out.push({ taskId: `${parent.taskId}--clerk-1`, lineage: [{ taskId: parent.taskId, turn: 3, via: 'delegation' }, ...parent.lineage] });
  return out;
}

async function fill(claims: IntentClaims): Promise<void> {
  const family = branches();
  const calls = FAMILY_RECORDS / 2;
  const batch: Promise<void>[] = [];
  for (let i = 0; i < calls; i++) {
    const branch = family[i % family.length]!;
    const base: EffectRecord & { generation: number } = {
      version: 3,
      generation: 1,
      taskId: branch.taskId,
      runId: 'run-1',
      turn: 1 + Math.floor(i / family.length),
      at: new Date(Date.UTC(2026, 10, 27, 0, 0, 0, i)).toISOString(),
      tool: 'append_audit_line',
      effect: 'write',
      idempotent: false,
      intent: intentOf('append_audit_line', { line: `entry ${i}` }),
      idempotencyKey: `${branch.taskId}:run-1:${i}`,
      attempt: `run-1/${i}`,
      family: ROOT,
      lineage: branch.lineage,
      step: 2,
      state: 'pending',
      outcome: { ok: false, summary: 'started' },
    };
    batch.push(claims.take(ROOT, base).then(() => claims.settle(ROOT, { ...base, step: 3, state: 'done', outcome: { ok: true, summary: '{"lines":1}' } })));
    if (batch.length >= 50) await Promise.all(batch.splice(0));
  }
  await Promise.all(batch);
}

async function measureStore(name: string, store: BlobStore): Promise<JournalStoreResult> {
  const claims = new IntentClaims(store);
  const filled = performance.now();
  await fill(claims);
  const fillSeconds = (performance.now() - filled) / 1000;
  const fork = { taskId: `${ROOT}-fork-99`, runId: 'f-1', turn: 1, lineage: [{ taskId: ROOT, turn: 0 }] };
  const hits: number[] = [];
  const fresh: number[] = [];
  for (let i = 0; i < CHECKS; i++) {
    const hitIntent = intentOf('append_audit_line', { line: `entry ${i * 7}` });
    let t = performance.now();
    const found = decideClaim(await claims.view(ROOT, hitIntent), { attempt: `f-1/${i}`, idempotent: false, idempotencyKey: `k-${i}`, repeatApproved: false });
    hits.push(performance.now() - t);
    if (found.kind !== 'refuse') throw new Error('the bench family should hold this call');
    const newIntent = intentOf('append_audit_line', { line: `new ${i}` });
    t = performance.now();
    const decision = decideClaim(await claims.view(ROOT, newIntent), { attempt: `f-1/n${i}`, idempotent: false, idempotencyKey: `n-${i}`, repeatApproved: false });
    if (decision.kind !== 'take') throw new Error('a new intent should be free');
    const won = await claims.take(ROOT, {
      ...fork,
      version: 3,
      generation: decision.generation,
      tool: 'append_audit_line',
      effect: 'write',
      idempotent: false,
      intent: newIntent,
      idempotencyKey: `n-${i}`,
      attempt: `f-1/n${i}`,
      family: ROOT,
      at: new Date().toISOString(),
      step: 2,
      state: 'pending',
      outcome: { ok: false, summary: 'started' },
    });
    fresh.push(performance.now() - t);
    if (!won) throw new Error('nobody else claims in the bench');
  }
  return { store: name, records: FAMILY_RECORDS, fillSeconds: Number(fillSeconds.toFixed(1)), checkHitMs: summarize(hits, 2), checkAndPendingMs: summarize(fresh, 2) };
}

export async function measureJournal(): Promise<JournalBenchmark> {
  const before = os.loadavg();
  const results: JournalStoreResult[] = [];
  const dir = mkdtempSync(path.join(os.tmpdir(), 'journal-bench-'));
  try {
    results.push(await measureStore('folder', new LocalBlobStore(dir)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const pg = await startPostgres({ database: 'journal_bench' });
  const store = new PostgresBlobStore({ url: pg.url, table: 'journal_bench' });
  try {
    results.push(await measureStore('PostgreSQL', store));
  } finally {
    await store.close();
    await pg.stop();
  }
  return { results, loadAverage: { before, after: os.loadavg() } };
}

export function journalTable(r: JournalBenchmark): string {
  const rows = r.results.map(
    (s) =>
      `| ${s.store} | ${s.records.toLocaleString('en-US')} | ${s.checkHitMs.median} / ${s.checkHitMs.p95} ms | ${s.checkAndPendingMs.median} / ${s.checkAndPendingMs.p95} ms | ${s.fillSeconds} s |`,
  );
  return [
    '| store | family records | check, claim held elsewhere (median / p95) | check + claim taken, new write (median / p95) | filling the family |',
    '|---|---:|---:|---:|---:|',
    ...rows,
    '',
    `${CHECKS} checks each; load average ${r.loadAverage.before.map((x) => x.toFixed(1)).join(' ')} before, ${r.loadAverage.after.map((x) => x.toFixed(1)).join(' ')} after.`,
  ].join('\n');
}
