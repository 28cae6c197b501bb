/**
 * Issue 47, on a real dev server with the folder store: a write never runs twice in a task's family
 * without a person, whatever the members' relation. The four families found from outside (sibling
 * forks, a second delegation, identical writes approved together, a child whose execution was
 * deleted before its lead was reset) are fixed sequences; then fixed random seeds. A failing seed
 * prints itself and replays with FAMILY_SEEDS=<seed>.
 */
import { opsOf, runFamily } from '../support/random-families';
import { type EffectLog, familyFixture } from '../support/family-agents';
import { FINDINGS } from '../support/family-findings';
import { runInBackground, toolResultsOf, useHarness } from '../support/harness';

jest.setTimeout(600_000);

let worker: { stop(): Promise<void> } | undefined;
afterAll(async () => {
  await worker?.stop();
});
const h = useHarness();
let log: EffectLog;

beforeAll(async () => {
  const family = familyFixture(h);
  log = family.log;
  worker = runInBackground(await h.worker(family.agents));
});

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

test('a lead reset after its children finished is not charged for the children it could not start again (seed 394668 of the bench): it ends, not blocked on a spent tool budget', async () => {
  const run = await runFamily(h, log, 394668, opsOf(394668));
  expect(run.ops.some((op) => op.op === 'reset')).toBe(true);
  expect(run.blocked).toEqual([]);
  expect(run.repeatsWithoutPerson).toEqual([]);
});

test('a lead reset after its child finished re-attaches to the child’s answer: the child is not run again and nobody is asked (issue 49)', async () => {
  const run = await runFamily(h, log, 49, [
    { op: 'start', kind: 'lead', calls: ['delegate A'] },
    { op: 'waitClosed', member: 0 },
    { op: 'reset', member: 0 },
  ]);
  const lead = run.members[0]!;
  expect(run.effects).toEqual({ 'pay:P-1': 1 });
  expect(run.asked).toEqual([]);
  expect(run.blocked).toEqual([]);
  const [delegated] = toolResultsOf(await h.client.transcript(lead)).map((r) => JSON.parse(String(r.content)) as Record<string, unknown>);
  expect(delegated).toMatchObject({
    sub_agent: 'clerk',
    task_id: `${lead}--clerk-1`,
    outcome: 'answered',
    answer: 'paid',
    note: expect.stringMatching(/finished before this run of the task started; its answer is used, it was not run again/),
  });
  expect((await h.client.result(lead)).outcome).toBe('answered');
});

test('the same work delegated twice in one run joins the first child: one child, one payment, the second call answered with its answer (issue 49)', async () => {
  const run = await runFamily(h, log, 50, [{ op: 'start', kind: 'lead', calls: ['delegate A', 'delegate A'] }]);
  const lead = run.members[0]!;
  expect(run.members).toEqual([lead, `${lead}--clerk-1`]);
  expect(run.effects).toEqual({ 'pay:P-1': 1 });
  expect(run.asked).toEqual([]);
  const [first, second] = toolResultsOf(await h.client.transcript(lead)).map((r) => JSON.parse(String(r.content)) as Record<string, unknown>);
  expect(first).toMatchObject({ task_id: `${lead}--clerk-1`, answer: 'paid' });
  expect(second).toMatchObject({ task_id: `${lead}--clerk-1`, answer: 'paid', note: expect.stringMatching(/already delegated to .*--clerk-1 in this run; its answer is used/) });
});
