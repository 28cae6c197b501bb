/**
 * Issue 47, on a real dev server with the folder store: a write never runs twice in a task's family
 * without a person, whatever the members' relation. The four families found from outside (sibling
 * forks, a second delegation, identical writes approved together, a child whose execution was
 * deleted before its lead was reset) are fixed sequences; then fixed random seeds. A failing seed
 * prints itself and replays with FAMILY_SEEDS=<seed>.
 */
import { EffectLog, familyAgents, opsOf, runFamily, type FamilyOp } from '../support/random-families';
import { runInBackground, useHarness } from '../support/harness';

jest.setTimeout(600_000);

let worker: { stop(): Promise<void> } | undefined;
afterAll(async () => {
  await worker?.stop();
});
const h = useHarness();
const log = new EffectLog();

beforeAll(async () => {
  worker = runInBackground(await h.worker(familyAgents(h, log)));
});

const FINDINGS: [string, FamilyOp[]][] = [
  [
    'three sibling forks at turn 0 each make the same non-idempotent payment',
    [
      { op: 'start', kind: 'payer', calls: [] },
      { op: 'waitClosed', member: 0 },
      { op: 'fork', member: 0, turn: 0, calls: ['pay P-1'] },
      { op: 'fork', member: 0, turn: 0, calls: ['pay P-1'] },
      { op: 'fork', member: 0, turn: 0, calls: ['pay P-1'] },
    ],
  ],
  [
    'forks at turn 0 and at a later turn of a task that paid',
    [
      { op: 'start', kind: 'payer', calls: ['credit C-1', 'pay P-1'] },
      { op: 'waitClosed', member: 0 },
      { op: 'fork', member: 0, turn: 0, calls: ['pay P-1'] },
      { op: 'fork', member: 0, turn: 1, calls: ['pay P-1'] },
    ],
  ],
  ['a lead that delegates the same work twice in one run', [{ op: 'start', kind: 'lead', calls: ['delegate A', 'delegate B'] }]],
  [
    'two members whose identical writes are approved together',
    [
      { op: 'start', kind: 'cautious', calls: [] },
      { op: 'waitClosed', member: 0 },
      { op: 'fork', member: 0, turn: 0, calls: ['pay P-1'] },
      { op: 'fork', member: 0, turn: 0, calls: ['pay P-1'] },
      { op: 'fork', member: 0, turn: 0, calls: ['pay P-1'] },
      { op: 'approveTogether' },
    ],
  ],
  [
    'a lead reset after its closed child was deleted re-delegates',
    [
      { op: 'start', kind: 'lead', calls: ['delegate A'] },
      { op: 'waitClosed', member: 0 },
      { op: 'deleteChildren', member: 0 },
      { op: 'reset', member: 0 },
    ],
  ],
];

test.each(FINDINGS)('found from outside: %s — the write runs once, every repeat went to a person', async (_name, ops) => {
  const run = await runFamily(h, log, 47, ops);
  // The family did write: the rule is not met by writing nothing.
  expect(Object.values(run.effects).some((n) => n >= 1)).toBe(true);
  expect({ seed: run.seed, repeatsWithoutPerson: run.repeatsWithoutPerson }).toEqual({ seed: run.seed, repeatsWithoutPerson: [] });
});

/** Fixed seeds in the lane; the bench (`npm run bench -- families`) runs fresh ones. */
const SEEDS = (process.env.FAMILY_SEEDS ?? '1,2,3,5,8,13,21,34')
  .split(',')
  .map((s) => Number(s.trim()))
  .filter((n) => Number.isInteger(n));

test.each(SEEDS)('random family, seed %i: every intent took effect at most once more than the repeats people approved', async (seed) => {
  const run = await runFamily(h, log, seed, opsOf(seed));
  if (run.repeatsWithoutPerson.length) console.error(`seed ${seed} failed; replay with FAMILY_SEEDS=${seed}:`, JSON.stringify(run, null, 1));
  expect(run.repeatsWithoutPerson).toEqual([]);
});
