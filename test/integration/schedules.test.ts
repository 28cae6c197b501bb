/**
 * Recurring tasks on Temporal Schedules, on the real dev server: a schedule fires several tasks
 * that complete on a worker, pause stops the fires and trigger still starts one, a backfill runs the
 * fires a past window had, delete removes it; the CLI refuses bad specs and names a missing schedule.
 */
import { useHarness, answer, runInBackground } from '../support/harness';
import { runCli, waitFor } from '../support/processes';
import { ScheduleNotFound, ScheduleProblem, type ScheduleView } from '../../src/client/task-schedules';

const h = useHarness();

const at = () => ['--address', h.server.address, '--task-queue', h.taskQueue];

async function completedFires(view: ScheduleView): Promise<string[]> {
  const done: string[] = [];
  for (const id of view.recentTasks) {
    const { status } = await h.client.handle(id).describe();
    if (status.name === 'COMPLETED') done.push(id);
  }
  return done;
}

test('a schedule fires tasks named after it that complete; paused it fires none, trigger starts one anyway; delete removes it', async () => {
  const schedules = h.client.schedules;
  const script = h.script([answer('nightly report written')]);
  const background = runInBackground(await h.worker());
  try {
    const created = await schedules.create({
      name: 'report-every-second',
      task: { agent: 'demo', prompt: 'write the report', model: { provider: 'scripted', script } },
      every: '1s',
      taskQueue: h.taskQueue,
    });
    expect(created).toMatchObject({ name: 'report-every-second', agent: 'demo', spec: 'every 1s', paused: false });

    const fired = await waitFor('three completed fires', async () => {
      const done = await completedFires(await schedules.describe('report-every-second'));
      return done.length >= 3 ? done : undefined;
    });
    for (const id of fired) {
      expect(id).toMatch(/^report-every-second-\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
      const result = await h.client.handle(id).result();
      expect(result.text).toBe('nightly report written');
      // Started by the schedule: Temporal names it on every task it fires.
      expect((await h.client.handle(id).describe()).searchAttributes.TemporalScheduledById).toEqual(['report-every-second']);
    }

    await schedules.pause('report-every-second');
    const paused = await schedules.describe('report-every-second');
    expect(paused.paused).toBe(true);
    // Several whole intervals pass with the schedule paused: the count of fires does not move.
    await new Promise((r) => setTimeout(r, 3_500));
    const still = await schedules.describe('report-every-second');
    expect(still.fires!.started).toBe(paused.fires!.started);

    await schedules.trigger('report-every-second');
    await waitFor('the triggered fire', async () => ((await schedules.describe('report-every-second')).fires!.started === paused.fires!.started + 1 ? true : undefined));

    expect((await schedules.list()).map((v) => v.name)).toContain('report-every-second');
    await schedules.delete('report-every-second');
    await expect(schedules.describe('report-every-second')).rejects.toBeInstanceOf(ScheduleNotFound);
  } finally {
    await background.stop();
  }
});

test('a backfill runs every fire a past window had, one after another', async () => {
  const schedules = h.client.schedules;
  const script = h.script([answer('caught up')]);
  const background = runInBackground(await h.worker());
  try {
    await schedules.create({ name: 'hourly-catch-up', task: { agent: 'demo', prompt: 'catch up', model: { provider: 'scripted', script } }, every: '1h', taskQueue: h.taskQueue });
    // Three hours that passed before the schedule existed: fires at each hour boundary in [from, to].
    const to = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000 - 3_600_000);
    const from = new Date(to.getTime() - 2 * 3_600_000);
    await schedules.backfill('hourly-catch-up', from, to);
    const view = await waitFor('three backfilled fires completed', async () => {
      const v = await schedules.describe('hourly-catch-up');
      return (await completedFires(v)).length === 3 ? v : undefined;
    });
    expect(view.recentTasks.map((id) => id.replace('hourly-catch-up-', ''))).toEqual([from, new Date(from.getTime() + 3_600_000), to].map((d) => d.toISOString().replace('.000Z', 'Z')));
    await schedules.delete('hourly-catch-up');
  } finally {
    await background.stop();
  }
});

test('bad schedules are refused before the server sees them, and an existing name is not overwritten', async () => {
  const schedules = h.client.schedules;
  const task = { agent: 'demo', prompt: 'x' };
  await expect(schedules.create({ name: 'bad', task, every: '0s', taskQueue: h.taskQueue })).rejects.toThrow(/--every takes a whole number/);
  await expect(schedules.create({ name: 'bad', task, taskQueue: h.taskQueue })).rejects.toThrow(/exactly one of/);
  await expect(schedules.create({ name: '../x', task, every: '1h', taskQueue: h.taskQueue })).rejects.toBeInstanceOf(ScheduleProblem);
  await expect(schedules.create({ name: 'bad', task: { agent: 'demo', prompt: ' ' }, every: '1h', taskQueue: h.taskQueue })).rejects.toThrow(/`prompt` must not be empty/);
  await expect(schedules.create({ name: 'bad', task, cron: 'not a cron', taskQueue: h.taskQueue })).rejects.toThrow(/refused the schedule/);
  await schedules.create({ name: 'once-only', task, every: '1h', taskQueue: h.taskQueue });
  await expect(schedules.create({ name: 'once-only', task: { agent: 'demo', prompt: 'other' }, every: '5m', taskQueue: h.taskQueue })).rejects.toThrow(/already exists/);
  expect((await schedules.describe('once-only')).spec).toBe('every 1h');
  await schedules.delete('once-only');
});

test('the CLI creates, lists and deletes a schedule, and its exit codes say what went wrong', async () => {
  const created = await runCli(['schedule', 'create', 'cli-nightly', '--cron', '0 2 * * *', '--agent', 'demo', 'summarise the day', '--json', ...at()]);
  expect(created.code).toBe(0);
  expect(JSON.parse(created.stdout)).toMatchObject({ name: 'cli-nightly', agent: 'demo', spec: 'cron 0 2 * * *', paused: false });
  const listed = await runCli(['schedule', 'list', '--json', ...at()]);
  expect(JSON.parse(listed.stdout).map((v: ScheduleView) => v.name)).toContain('cli-nightly');
  expect((await runCli(['schedule', 'pause', 'no-such-schedule', ...at()])).code).toBe(3);
  const bad = await runCli(['schedule', 'create', 'x', '--every', 'often', '--agent', 'demo', 'p', ...at()]);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toMatch(/--every takes a whole number/);
  expect((await runCli(['schedule', 'delete', 'cli-nightly', ...at()])).code).toBe(0);
});

test('--every fires at whole multiples since the epoch, and --offset shifts every fire; an offset without --every or not below it is refused (exit 2)', async () => {
  const hourly = await runCli(['schedule', 'create', 'cli-hourly', '--every', '1h', '--agent', 'demo', 'tick', '--json', ...at()]);
  expect(hourly.code).toBe(0);
  const plain = JSON.parse(hourly.stdout) as ScheduleView;
  expect(plain.spec).toBe('every 1h');
  expect(plain.nextFires.length).toBeGreaterThan(1);
  for (const fire of plain.nextFires) expect(new Date(fire).getTime() % 3_600_000).toBe(0);

  const shifted = await runCli(['schedule', 'create', 'cli-quarter-past', '--every', '1h', '--offset', '15m', '--agent', 'demo', 'tick', '--json', ...at()]);
  expect(shifted.code).toBe(0);
  const view = JSON.parse(shifted.stdout) as ScheduleView;
  expect(view.spec).toBe('every 1h offset 15m');
  for (const fire of view.nextFires) expect(new Date(fire).getTime() % 3_600_000).toBe(15 * 60_000);
  const listed = await runCli(['schedule', 'list', ...at()]);
  expect(listed.stdout).toContain('every 1h offset 15m');

  const noEvery = await runCli(['schedule', 'create', 'x', '--cron', '0 2 * * *', '--offset', '5m', '--agent', 'demo', 'p', ...at()]);
  expect(noEvery.code).toBe(2);
  expect(noEvery.stderr.trim()).toBe('durable-agent schedule: --offset goes with --every (a cron expression says its own times)');
  const tooBig = await runCli(['schedule', 'create', 'x', '--every', '1h', '--offset', '60m', '--agent', 'demo', 'p', ...at()]);
  expect(tooBig.code).toBe(2);
  expect(tooBig.stderr).toContain('--offset must be less than --every (1h); got 60m');
  for (const name of ['cli-hourly', 'cli-quarter-past']) expect((await runCli(['schedule', 'delete', name, ...at()])).code).toBe(0);
});
