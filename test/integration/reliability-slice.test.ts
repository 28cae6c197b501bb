/**
 * A two-task slice of the reliability benchmark (bench/reliability/), so the harness cannot rot:
 * clean runs reach the expected final store state on both engines; durable-agent killed after a
 * write committed still leaves every effect once; a decision made while every worker is down is
 * kept by durable-agent and lost by the hand-written loop; the report's figures follow.
 */
import { DurableAgentEngine } from '../../bench/reliability/engines/durable-agent';
import { BareSdkEngine } from '../../bench/reliability/engines/bare-sdk';
import { runOnce, type RunRecord } from '../../bench/reliability/harness';
import { figuresOf, reliabilityTable } from '../../bench/reliability/report';
import { TASKS } from '../../bench/reliability/tasks';

const task = (id: string) => TASKS.find((t) => t.id === id)!;
const durable = new DurableAgentEngine();
const bare = new BareSdkEngine();
const records: RunRecord[] = [];

beforeAll(async () => {
  await Promise.all([durable.open(), bare.open()]);
}, 120_000);
afterAll(async () => {
  await Promise.all([durable.close(), bare.close()]);
});

test('clean runs of a two-write task and an approval task reach the expected store state on both engines', async () => {
  for (const engine of [durable, bare]) {
    for (const id of ['t05', 't02']) {
      const r = await runOnce(engine, task(id), 'clean', 1);
      records.push(r);
      expect({ engine: r.engine, task: r.task, passed: r.passed, diff: r.diff, outcome: r.outcome.status }).toEqual({
        engine: engine.name,
        task: id,
        passed: true,
        diff: undefined,
        outcome: 'answered',
      });
      expect(r.duplicateEffects).toBe(0);
      expect(r.tokens).toBeGreaterThan(0);
    }
  }
}, 240_000);

test('durable-agent: a SIGKILL while a committed write waits for its answer leaves every effect once', async () => {
  const clean = records.find((r) => r.engine === durable.name && r.task === 't05')!;
  // t05's calls: model, get_order, model, refund (its answer held after the commit: the kill), ...
  const r = await runOnce(durable, task('t05'), 'kill', 1, { boundary: 4 });
  records.push(r);
  expect(clean.externalCalls).toBeGreaterThanOrEqual(6);
  expect(r).toMatchObject({ passed: true, duplicateEffects: 0, decisionsLost: 0 });
}, 240_000);

test('a decision made while every worker is down: durable-agent keeps it, the hand-written loop asks again', async () => {
  const kept = await runOnce(durable, task('t02'), 'decision-while-down', 1);
  const lost = await runOnce(bare, task('t02'), 'decision-while-down', 1);
  records.push(kept, lost);
  expect(kept).toMatchObject({ passed: true, decisionsLost: 0, decisionsUndelivered: 0, duplicateEffects: 0 });
  // The loop starts again from scratch and asks again; approved again, it still gets the state right.
  expect(lost).toMatchObject({ passed: true, decisionsLost: 1, decisionsUndelivered: 1 });

  const figures = figuresOf(records, 1);
  expect(figures.find((f) => f.engine === durable.name && f.faultClass === 'clean')).toMatchObject({ tasks: 2, passK: [1] });
  expect(figures.find((f) => f.engine === bare.name && f.faultClass === 'decision-while-down')).toMatchObject({ decisionsLost: 1 });
  expect(reliabilityTable(figures, 1)).toContain('| durable-agent | trajectory | kill |');
}, 240_000);
