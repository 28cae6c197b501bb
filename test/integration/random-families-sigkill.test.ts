/**
 * Issue 47: random families with a SIGKILL at the worst moment. Each family starts on a
 * `durable-agent worker` process whose writes, once the kill is armed, hold their reply right after
 * the effect is made (the claim still pending); the process is SIGKILLed there, an in-process worker
 * takes over, and the family goes on to stillness. Every intent took effect at most once more than
 * the repeats people approved, whatever the kill landed on.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { clerkTurns, EffectLog, familyAgents } from '../support/family-agents';
import { runInBackground, spawnWorker, useHarness } from '../support/harness';
import { sigkill } from '../support/processes';
import { opsOf, runFamily, type FamilyOp } from '../support/random-families';

jest.setTimeout(600_000);

const h = useHarness();
let log: EffectLog;
let clerkScript: string;
let holdFile: string;
let doomed: ChildProcess | undefined;
let replacement: { stop(): Promise<void> } | undefined;

beforeAll(() => {
  log = new EffectLog(path.join(h.tmpDir, 'family-effects.jsonl'));
  clerkScript = h.script(clerkTurns());
  holdFile = path.join(h.tmpDir, 'family-hold');
});

afterEach(async () => {
  rmSync(holdFile, { force: true });
  if (doomed) await sigkill(doomed);
  await replacement?.stop();
  doomed = undefined;
  replacement = undefined;
});

/** The family's first worker: a process that holds a write's reply once the kill is armed. */
function startDoomed(): void {
  doomed = spawnWorker(h, ['--agents', path.join(__dirname, '../support/family-agents.ts')], {
    FAMILY_EFFECTS: log.file,
    FAMILY_CLERK_SCRIPT: clerkScript,
    FAMILY_HOLD: holdFile,
  });
}

/** Arms the hold, waits (bounded) for a write to hold after its effect, SIGKILLs there, and lets an in-process worker take over. */
async function kill(): Promise<string> {
  const holding = `${holdFile}.holding`;
  rmSync(holding, { force: true });
  writeFileSync(holdFile, 'hold');
  const deadline = Date.now() + 20_000;
  while (!existsSync(holding) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  const landed = existsSync(holding) ? `after a write's effect in ${readFileSync(holding, 'utf8')}, its reply held` : 'with no write in flight';
  await sigkill(doomed!);
  doomed = undefined;
  rmSync(holdFile, { force: true });
  replacement = runInBackground(await h.worker(familyAgents({ log, clerkScript })));
  return landed;
}

const WORST: [string, FamilyOp[]][] = [
  [
    'a payer killed after its payment was made, then forked twice',
    [
      { op: 'start', kind: 'payer', calls: ['pay P-1'] },
      { op: 'kill' },
      { op: 'waitClosed', member: 0 },
      { op: 'fork', member: 0, turn: 0, calls: ['pay P-1'] },
      { op: 'fork', member: 0, turn: 0, calls: ['pay P-1'] },
    ],
  ],
  ['a payer killed after its credit was made (the retry carries the same key)', [{ op: 'start', kind: 'payer', calls: ['credit C-1', 'pay P-2'] }, { op: 'kill' }]],
  ['a lead whose clerk is killed after paying, then reset', [{ op: 'start', kind: 'lead', calls: ['delegate A'] }, { op: 'kill' }, { op: 'waitClosed', member: 0 }, { op: 'reset', member: 0 }]],
];

test.each(WORST)('SIGKILL at the worst moment: %s — every write once, or a person asked', async (_name, ops) => {
  startDoomed();
  const run = await runFamily(h, log, 4747, ops, { kill });
  expect(run.kills).toHaveLength(1);
  expect(run.kills[0]).toMatch(/^after a write's effect in /);
  expect(run.repeatsWithoutPerson).toEqual([]);
});

const SEEDS = (process.env.FAMILY_KILL_SEEDS ?? '1,2,3,5,8,13').split(',').map(Number).filter(Number.isInteger);

test.each(SEEDS)('random family with a SIGKILL, seed %i: every intent took effect at most once more than the repeats people approved', async (seed) => {
  startDoomed();
  const run = await runFamily(h, log, seed, opsOf(seed, { withKill: true }), { kill });
  if (run.repeatsWithoutPerson.length) console.error(`seed ${seed} failed; replay with FAMILY_KILL_SEEDS=${seed}:`, JSON.stringify(run, null, 1));
  expect(run.kills).toHaveLength(1);
  expect(run.repeatsWithoutPerson).toEqual([]);
});
