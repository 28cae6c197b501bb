/**
 * `npm run bench -- families [--sequences N] [--first-seed S]` (issue 47): random task families on
 * a real dev server, on the folder store and on PostgreSQL, with fresh seeds (the test lanes run
 * fixed ones). Counts sequences, operations, effects and repeats without a person (the goal: 0),
 * then what a write's claim costs against a family of 10,000 records (journal.ts).
 */
import os from 'node:os';
import { PostgresBlobStore } from '../src/blobs/postgres-blob-store';
import { startPostgres } from '../test/support/postgres';
import { runInBackground, startHarness } from '../test/support/harness';
import { opsOf, runFamily, type FamilyRun, type FamilyStore } from '../test/support/random-families';
import { familyFixture } from '../test/support/family-agents';
import { measureJournal, type JournalBenchmark, journalTable } from './journal';

/** Families running side by side on one worker. */
const FAMILIES_AT_ONCE = 4;

export interface FamiliesStoreResult {
  store: string;
  sequences: number;
  operations: number;
  /** Operations the family refused (a purged origin, a deleted member): part of its life, counted apart. */
  refusedOperations: number;
  effects: number;
  approvedRepeats: number;
  repeatsWithoutPerson: number;
  failingSeeds: number[];
  /** Sequences that never became still in time (their seeds): reported, never counted as passing. */
  stuckSeeds: number[];
  familiesAtOnce: number;
  seconds: number;
}

export interface FamiliesBenchmark {
  firstSeed: number;
  results: FamiliesStoreResult[];
  claimCost: JournalBenchmark;
  loadAverage: { before: number[]; after: number[] };
}

async function runOn(name: string, seeds: readonly number[], storeFor: () => Promise<{ where?: FamilyStore; close(): Promise<void> }>): Promise<FamiliesStoreResult> {
  const h = await startHarness();
  const opened = await storeFor();
  const { log, agents } = familyFixture(h);
  const worker = runInBackground(await h.worker(agents, opened.where ? { blobStore: opened.where.store } : {}));
  const started = performance.now();
  const runs: FamilyRun[] = [];
  const stuck: number[] = [];
  try {
    // Families are independent (each its own root and effect log): a few at once, as a fleet runs them.
    const queue = [...seeds];
    const lane = async () => {
      for (let seed = queue.shift(); seed !== undefined; seed = queue.shift()) {
        try {
          runs.push(await runFamily(h, log, seed, opsOf(seed), opened.where ? { where: opened.where } : {}));
        } catch (err) {
          stuck.push(seed);
          console.error(`${name} seed ${seed}: ${(err as Error).message}`);
        }
        if ((runs.length + stuck.length) % 10 === 0) console.log(`${name}: ${runs.length + stuck.length} of ${seeds.length} sequences`);
      }
    };
    await Promise.all(Array.from({ length: FAMILIES_AT_ONCE }, lane));
  } finally {
    await worker.stop();
    await opened.close();
    await h.close();
  }
  const sum = (f: (r: FamilyRun) => number) => runs.reduce((n, r) => n + f(r), 0);
  return {
    store: name,
    sequences: runs.length,
    operations: sum((r) => r.ops.length),
    refusedOperations: sum((r) => r.skipped.length),
    effects: sum((r) => Object.values(r.effects).reduce((a, b) => a + b, 0)),
    approvedRepeats: sum((r) => Object.values(r.approvedRepeats).reduce((a, b) => a + b, 0)),
    repeatsWithoutPerson: sum((r) => r.repeatsWithoutPerson.reduce((n, x) => n + x.effects - 1 - x.approved, 0)),
    failingSeeds: runs.filter((r) => r.repeatsWithoutPerson.length > 0).map((r) => r.seed),
    familiesAtOnce: FAMILIES_AT_ONCE,
    stuckSeeds: stuck,
    seconds: Math.round((performance.now() - started) / 1000),
  };
}

export async function measureFamilies(sequences: number, firstSeed: number): Promise<FamiliesBenchmark> {
  const before = os.loadavg();
  const seeds = Array.from({ length: sequences }, (_, i) => firstSeed + i);
  const results = [await runOn('folder', seeds, async () => ({ close: async () => undefined }))];
  results.push(
    await runOn('PostgreSQL', seeds, async () => {
      const pg = await startPostgres({ database: 'families_bench' });
      const store = new PostgresBlobStore({ url: pg.url });
      return {
        where: { store, location: pg.url },
        close: async () => {
          await store.close();
          await pg.stop();
        },
      };
    }),
  );
  const claimCost = await measureJournal();
  return { firstSeed, results, claimCost, loadAverage: { before, after: os.loadavg() } };
}

export function familiesTable(r: FamiliesBenchmark): string {
  return [
    '| store | sequences | operations (refused) | effects | repeats approved | repeats without a person | failing seeds | not still in time | time |',
    '|---|---:|---:|---:|---:|---:|---|---|---:|',
    ...r.results.map(
      (s) =>
        `| ${s.store} | ${s.sequences} | ${s.operations} (${s.refusedOperations}) | ${s.effects} | ${s.approvedRepeats} | **${s.repeatsWithoutPerson}** | ${s.failingSeeds.join(', ') || 'none'} | ${s.stuckSeeds.join(', ') || 'none'} | ${s.seconds} s |`,
    ),
    '',
    `Seeds ${r.firstSeed} to ${r.firstSeed + (r.results[0]?.sequences ?? 0) + (r.results[0]?.stuckSeeds.length ?? 0) - 1}; load average ${r.loadAverage.before.map((x) => x.toFixed(1)).join(' ')} before, ${r.loadAverage.after.map((x) => x.toFixed(1)).join(' ')} after.`,
    '',
    "A write's claim against a family of 10,000 records:",
    '',
    journalTable(r.claimCost),
  ].join('\n');
}
